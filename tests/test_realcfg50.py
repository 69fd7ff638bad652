"""Findings of the fiftieth session's sweeps (recent Hugging Face configs; a breaker pass), each a test that failed
before its fix."""

import pytest

from shardplan.errors import ConfigError
from shardplan.loaders import model_from_hf_config

# google/gemma-3-27b-pt config.json as released: its text_config has no max_position_embeddings
GEMMA3_27B = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
              "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
                              "model_type": "gemma3_text", "num_attention_heads": 32, "num_hidden_layers": 62,
                              "num_key_value_heads": 16, "query_pre_attn_scalar": 168,
                              "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
              "vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model"}}


def test_gemma3_multimodal_config_declares_gemma3s_default_context():
    # Gemma3TextConfig's max_position_embeddings default, 131,072, is the declared context (a run past it gets the
    # context-extension note, as Mistral Small 3.1's does); a config that gives its own keeps it
    assert model_from_hf_config(GEMMA3_27B).context_length == 131072
    own = {**GEMMA3_27B, "text_config": {**GEMMA3_27B["text_config"], "max_position_embeddings": 32768}}
    assert model_from_hf_config(own).context_length == 32768


def test_an_unknown_architecture_with_linear_attention_layers_says_so():
    # MiniMax-Text-01's remote-code config (MiniMaxText01ForCausalLM; attn_type_list 0 = lightning attention): the
    # hybrid's reason, not the generic refusal whose model-file route would price every layer as softmax attention
    cfg = {"architectures": ["MiniMaxText01ForCausalLM"], "hidden_size": 6144, "num_hidden_layers": 80,
           "attn_type_list": [0, 0, 0, 0, 0, 0, 0, 1] * 10}
    with pytest.raises(ConfigError, match="lightning \\(linear\\) attention") as err:
        model_from_hf_config(cfg)
    assert "YAML" not in str(err.value) and err.value.field == "architectures"
    # any other unknown architecture carrying such a list: refused with what the list says
    with pytest.raises(ConfigError, match="attn_type_list has linear-attention layers"):
        model_from_hf_config({**cfg, "architectures": ["SomethingNewForCausalLM"]})
    # an unknown architecture without one keeps the model-file route
    with pytest.raises(ConfigError, match="YAML"):
        model_from_hf_config({"architectures": ["SomethingNewForCausalLM"], "hidden_size": 64})
