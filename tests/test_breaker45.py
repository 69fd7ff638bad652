"""Breaker pass 45: what a breaker and the helpers found, each with the behaviour it pins."""

import json

from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.collective import axis_label

runner = CliRunner()

#: llama-3-70b on 64 H100 with dp=1 cp=8: ZeRO-3 shards over the 8 cp ranks (the breaker's --objective memory #1)
_DP1_CP8 = ["-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "8192", "-b", "128", "--dp", "1",
            "--zero-stage", "3", "--tp", "8", "--cp", "8", "--recompute", "full"]


def test_zero_group_of_cp_ranks_is_not_called_dp():
    # dp=1: the 8-rank ZeRO group is the cp group; the tables and "bound by" called it "dp" (a group of 1)
    r = runner.invoke(app, ["estimate", *_DP1_CP8])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "dp-cp over scale-out" in text and "dp over" not in text, text
    r = runner.invoke(app, ["estimate", *_DP1_CP8, "--json"])
    colls = json.loads(r.stdout)["collectives"]
    zero = [c for c in colls if c["tensor"] in ("params", "grads")]
    # three ZeRO-3 collectives (forward / backward gather, gradient reduce-scatter), each over dp x cp = 1 x 8 ranks
    assert len(zero) == 3 and {(c["axis"], c["axis_label"], c["group_size"]) for c in zero} == {("dp", "dp-cp", 8)}


def test_axis_label_rule():
    assert axis_label("dp", 1) == "dp"            # no cp: the data-parallel group is dp
    assert axis_label("dp", 2) == "dp-cp"         # cp ranks share the weights
    assert axis_label("dp", 2, replicas=True) == "dp"  # the HSDP AllReduce runs across replicas only
    assert axis_label("tp", 4) == "tp"


def test_every_shared_published_row_is_covered():
    # issue 9's acceptance: every shared row is priced. Restricting the megatron profiles to ZeRO 0/1 with pp > 1
    # (Megatron-FSDP does not pipeline) left MegaScale's four Megatron-LM baseline rows (ZeRO-2-style, PP 8, the
    # megatron-legacy profile) "layout rejected" while no test noticed
    from shardplan.calibration import load_rows, reproduce_row

    rows = load_rows()
    uncovered = [(r["id"], res.reason) for r in rows for res in [reproduce_row(r)] if not res.covered]
    assert len(rows) >= 53 and uncovered == []


def test_zero_with_pipelining_refusal_names_frameworks_that_run_it():
    # Meta's Llama 3 405B layout (ZeRO-2-style FSDP beside PP 16, interleaved) is refused by the megatron profile
    # (Megatron-FSDP does not pipeline); the error now names the built-in profiles whose zero_stages,
    # pipeline_zero_stages and schedules take it: torchtitan (0/2/3, any schedule), automodel, torchtitan-compile and
    # megatron-legacy (its ZeRO-2-style distributed optimizer); not deepspeed / nanotron (ZeRO 0/1 with pp), not
    # maxtext / paxml (gpipe only), not the non-pipelining pytorch-fsdp / llm-foundry / hf-* profiles
    r = runner.invoke(app, ["estimate", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "8192", "-s", "8192", "-b",
                            "2048", "--tp", "8", "--pp", "16", "--schedule", "interleaved", "--virtual-stages", "8",
                            "--zero-stage", "2"])
    assert r.exit_code == 2
    line = [x for x in r.output.splitlines() if x.startswith("error:")][0]
    assert line.endswith("--framework torchtitan, automodel, torchtitan-compile, megatron-legacy run it"), line


def test_llama4_chunked_attention_is_priced_per_chunk():
    # Llama 4 Scout: 48 layers, 40 heads of 128; every 4th layer (the NoPE ones) full, the other 36 attend within
    # blocks of 8192 tokens. The planner took all 48 as full: 32k-token FLOPs per token 23% high, 128k 88% high.
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.presets.models import MODELS

    m = MODELS["llama-4-scout"]
    assert (m.local_attention, m.sliding_window, m.full_attention_interval, m.n_sliding_layers) == ("chunked", 8192, 4,
                                                                                                    36)
    # forward attention core per token per layer = 2 x 40 heads x (128 + 128) x k = 20,480 k; training x3
    # s = 32768, causal: full layers k = s/2 = 16384; chunked layers: 4 whole blocks, k = 8192 / 2 = 4096
    full, chunked = 3 * 20480 * 16384, 3 * 20480 * 4096
    base = model_flops_per_token(m, 8192)  # at s = 8192 a chunk is the sequence: every layer k = 4096
    attn_8k = 48 * 3 * 20480 * 4096
    expected = base - attn_8k + 12 * full + 36 * chunked
    assert abs(model_flops_per_token(m, 32768) / expected - 1) < 1e-12
    # a partial last block: s = 20000 = 2 x 8192 + 3616 -> k = (2 x 8192^2 + 3616^2) / 20000 / 2
    k = (2 * 8192 ** 2 + 3616 ** 2) / 20000 / 2
    assert abs(m.local_keys(20000, causal=True) / k - 1) < 1e-12
    assert m.local_keys(4096, causal=True) == 2048  # a sequence shorter than a chunk: a full causal layer


def test_llama4_config_without_kv_heads_is_refused(tmp_path):
    # Llama4TextConfig defaults num_key_value_heads to 8; reading its absence as multi-head attention built
    # 109.8B parameters instead of Scout's 107.8B, silently
    cfg = {"architectures": ["Llama4ForCausalLM"], "hidden_size": 5120, "intermediate_size": 8192,
           "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "head_dim": 128,
           "vocab_size": 202048, "num_local_experts": 16, "num_experts_per_tok": 1}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    r = runner.invoke(app, ["estimate", "-m", str(path), "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "32"])
    assert r.exit_code == 2 and "num_key_value_heads" in r.output, r.output


def test_relabelled_hybrid_configs_are_refused(tmp_path):
    # a DeepSeek-V3.2 config relabelled DeepseekV3ForCausalLM lost its 0.85B indexer parameters in silence, a
    # Qwen3-Next one relabelled Qwen3MoeForCausalLM its linear-attention layers; the keys only those families define
    # now name what would be dropped
    mla = {"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4,
           "num_attention_heads": 8, "intermediate_size": 2048, "vocab_size": 1000, "kv_lora_rank": 64,
           "q_lora_rank": 128, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32}
    qwen = {"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4,
            "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 2048,
            "moe_intermediate_size": 256, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 1000}
    cases = ((mla, {"index_topk": 2048}, "it sets index_topk"),
             (qwen, {"layer_types": ["linear_attention"] * 3 + ["full_attention"]}, "'linear_attention' layers"),
             (qwen, {"mamba_d_state": 128}, "it sets mamba_d_state"),
             (qwen, {"attn_type_list": [0, 0, 0, 1]}, "attn_type_list has linear-attention layers"))
    for base, extra, why in cases:
        path = tmp_path / "config.json"
        path.write_text(json.dumps({**base, **extra}))
        r = runner.invoke(app, ["estimate", "-m", str(path), "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8"])
        text = " ".join(r.output.split())
        assert r.exit_code == 2 and why in text and "it would be another network" in text, text
    # softmax-only lists stay legal: MiniMax-M2's all-1 attn_type_list, Gemma-style sliding / full layer_types
    path.write_text(json.dumps({**qwen, "attn_type_list": [1, 1, 1, 1]}))
    r = runner.invoke(app, ["estimate", "-m", str(path), "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8"])
    assert r.exit_code == 0, r.output


def test_moe_prediction_is_held_to_the_moe_record_of_its_chip():
    # the search's MoE #1s were 23-110% above every published MoE run of their chip with no note: the dense record
    # (e.g. 55.6% on H100 bf16) was the only ceiling. A MoE estimate is now held to the best published MoE run.
    from shardplan.calibration import best_published_moe_mfu, mfu_ceiling, optimism_note
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec

    b200 = HARDWARE["b200"]
    moe = best_published_moe_mfu(b200.peak_flops_bf16, False)
    assert moe is not None and 0.1 < moe[0] < 0.3  # far below the dense B200 bf16 record
    e = estimate(MODELS["mixtral-8x7b"], b200, TrainingSpec(seq_len=4096, global_batch_size=512),
                 ParallelConfig(dp=64, ep=8, zero_stage=1, microbatch_size=1), 64)  # MFU 36.9%
    assert mfu_ceiling(e)[2] == "MoE run" and e.mfu > moe[0]
    assert "above the best published MoE run on a chip of this bf16 peak and this precision" in optimism_note(e)
    # a dense model keeps the record of every run (H100 bf16: the shared rows and the public dense runs)
    dense = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], TrainingSpec(seq_len=4096, global_batch_size=64),
                     ParallelConfig(dp=8, zero_stage=1), 8)
    assert mfu_ceiling(dense)[2] == "run"


def test_deepseek_v3_layout_hint_names_fp8_moe_activation_caching():
    # DeepSeek-V3's own layout on 2,048 H800 (PP 16 DualPipe, EP 64, fp8, recompute of norms / MLA up-projections /
    # SwiGLU) is 83.5 GiB under the megatron profile, which keeps the experts' SwiGLU inputs in bf16; the only hint
    # was full recompute, which DeepSeek did not use. DeepSeek caches those inputs in fp8 (report Sec. 3.3.3)
    r = runner.invoke(app, ["estimate", "-m", "deepseek-v3-mtp", "-H", "h800", "-n", "2048", "-s", "4096", "-b",
                            "15360", "--precision", "fp8-mixed", "--optimizer-dtype", "bf16-moments", "--pp", "16",
                            "--ep", "64", "--schedule", "dualpipe", "--etp", "1", "--moe-dispatcher", "deepep",
                            "--zero-stage", "1", "--microbatch-size", "1", "--recompute", "selective",
                            "--recompute-modules", "layernorm,mla_up_proj,moe_act"])
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "it fits with --framework megatron+moe_act_input_bytes=1" in text, text


def test_zero2_with_pp_rule_uses_the_stage_the_framework_pipelines_with():
    # the decision guide's "> 1024 GPUs: TP=8 with ZeRO-2 and PP": under the megatron profile (ZeRO 0/1 with pp, its
    # ZeRO-2 being Megatron-FSDP) the guide's search for it found only pp=1 layouts (405B: "does not fit"); it is
    # evaluated with ZeRO-1, the distributed optimizer, and says so; torchtitan (FSDP beside PP) keeps ZeRO-2
    from shardplan.explain import rules_of_thumb
    from shardplan.presets.frameworks import FRAMEWORKS

    megatron = rules_of_thumb(405e9, 2048, 8192, False, "gpu", FRAMEWORKS["megatron"])[0]
    assert megatron.fix == {"tp": 8, "zero_stage": 1} and "ZeRO-1 here" in megatron.text
    torchtitan = rules_of_thumb(405e9, 2048, 8192, False, "gpu", FRAMEWORKS["torchtitan"])[0]
    assert torchtitan.fix == {"tp": 8, "zero_stage": 2} and torchtitan.text == "> 1024 GPUs: TP=8 with ZeRO-2 and PP"


def test_kimi_k2_model_type_and_deepseek_refusals_say_what_is_legal(tmp_path):
    # Kimi K2's config.json has model_type kimi_k2 (the DeepSeek-V3 network, architectures DeepseekV3ForCausalLM);
    # without the architectures list it was refused as an unknown model_type
    base = {"model_type": "kimi_k2", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
            "intermediate_size": 2048, "vocab_size": 1000, "kv_lora_rank": 64, "q_lora_rank": 128,
            "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(base))
    args = ["estimate", "-m", str(path), "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8"]
    assert runner.invoke(app, args).exit_code == 0
    # a layer frequency the translator does not model now names the legal value
    path.write_text(json.dumps({**base, "moe_layer_freq": 2, "n_routed_experts": 8, "num_experts_per_tok": 2,
                                "moe_intermediate_size": 256}))
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "moe_layer_freq=2 is not modelled; legal: 1" in " ".join(r.output.split()), r.output


def test_llama4_chunk_pattern_from_its_config_keys():
    # Llama4TextConfig: layer i is NoPE / full attention iff (i + 1) % 4 == 0 by default; layer_types and
    # no_rope_layers give the same pattern explicitly; a pattern that is not every k-th layer is refused naming its key
    from shardplan.hf_config import _llama4_chunks
    assert _llama4_chunks({}, 8) == {"sliding_window": 8192, "full_attention_interval": 4, "local_attention": "chunked"}
    types = ["chunked_attention"] * 3 + ["full_attention"]
    assert _llama4_chunks({"layer_types": types * 2, "attention_chunk_size": 4096}, 8)["full_attention_interval"] == 4
    assert _llama4_chunks({"no_rope_layers": [1, 0] * 4}, 8)["full_attention_interval"] == 2
    assert _llama4_chunks({"attention_chunk_size": None}, 8) == {}
    import pytest
    from shardplan.errors import ConfigError
    with pytest.raises(ConfigError, match="no_rope_layers="):
        _llama4_chunks({"no_rope_layers": [0, 1, 1, 1, 1, 1, 1, 1]}, 8)
