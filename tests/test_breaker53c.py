"""Breaker pass 53c (Hugging Face configs of recent architectures, plan / estimate / export flags, hardware files):
each test fails on the behaviour the pass found (noted in its comment)."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.loaders import load_hardware, model_from_hf_config

#: Llama-4-Scout's text config (hidden 5120, 48 layers, 16 experts top-1, NoPE every 4th layer)
SCOUT = {"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text", "hidden_size": 5120,
         "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_local_experts": 16, "num_experts_per_tok": 1,
         "interleave_moe_layer_step": 1, "no_rope_layers": [1, 1, 1, 0] * 12, "attention_chunk_size": 8192,
         "vocab_size": 202048, "use_qk_norm": True, "max_position_embeddings": 10485760}


def test_llama4_layer_types_that_transformers_writes_are_read():
    # Llama4TextConfig writes layer_types 'chunked_attention' (RoPE layers) / 'full_attention' (NoPE): refused, exit 2
    typed = {**SCOUT, "layer_types": ["chunked_attention" if n else "full_attention" for n in SCOUT["no_rope_layers"]]}
    a, b = model_from_hf_config(SCOUT), model_from_hf_config(typed)
    assert a.n_params == b.n_params == 107_769_861_120  # the breaker's count of the config without the key
    assert a.local_attention == b.local_attention == "chunked"
    with pytest.raises(ConfigError, match="'sliding_attention' or 'full_attention'"):  # still checked elsewhere
        model_from_hf_config({"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 64,
                              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                              "intermediate_size": 128, "vocab_size": 100,
                              "layer_types": ["chunked_attention", "full_attention"]})


GRANITE4_MICRO = {"architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid",
                  "hidden_size": 2560, "intermediate_size": 8192, "shared_intermediate_size": 8192,
                  "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 8,
                  "layer_types": ["attention"] * 40, "num_local_experts": 0, "num_experts_per_tok": 0,
                  "mamba_d_state": 256, "mamba_n_heads": 128, "position_embedding_type": "rope",
                  "tie_word_embeddings": True, "vocab_size": 100352, "attention_bias": False}


def test_granite4_micro_is_read_as_the_dense_decoder_it_is():
    # every layer 'attention' and no experts: refused as a "hybrid of Mamba-2 and attention layers"
    m = model_from_hf_config(GRANITE4_MICRO)
    # per layer: q, o 2560^2 each + k, v 2560 x 512 each = 15,728,640; shared MLP 3 x 2560 x 8192 = 62,914,560;
    # two RMSNorms 5,120 -> 78,648,320 x 40 = 3,145,932,800; tied embedding 100,352 x 2,560 = 256,901,120;
    # final norm 2,560: 3,402,836,480 (the card's "3B" model, 3.4B on its safetensors)
    assert m.n_params == 3_402_836_480 and m.ffn_dim == 8192 and not m.is_moe
    assert "GraniteMoeHybridForCausalLM: every layer attention and no experts" in m.source
    # a real hybrid (granite-4.0-h: Mamba layers) stays refused with the Mamba reason
    hybrid = {**GRANITE4_MICRO, "layer_types": ["mamba"] * 36 + ["attention"] * 4}
    with pytest.raises(ConfigError, match="Mamba-2"):
        model_from_hf_config(hybrid)


def test_fp8_and_fp4_peaks_need_an_architecture_that_runs_them(tmp_path):
    # base h100-sxm + peak_flops_fp4 priced NVFP4 on Hopper at "101.3% of the bf16 peak"; an A100 ran fp8
    for base, field in (("h100-sxm", "peak_flops_fp4"), ("a100-80gb", "peak_flops_fp8")):
        path = tmp_path / f"{base}.yaml"
        path.write_text(yaml.safe_dump({"base": base, field: 4.0e15}))
        with pytest.raises(ConfigError, match=f"{field}=4e\\+15 on compute_arch='(hopper|ampere)'.*legal"):
            load_hardware(str(path))
    ok = tmp_path / "b200.yaml"  # Blackwell has both
    ok.write_text(yaml.safe_dump({"base": "b200", "peak_flops_fp4": 1.0e16}))
    assert load_hardware(str(ok)).peak_flops_fp4 == 1.0e16


def test_bias_keys_of_families_that_build_no_bias_are_ignored():
    # MistralAttention / MistralMLP and Phi3Attention / Phi3MLP hard-code bias=False: +3.3M counted on Mistral-Small
    base = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 256,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
            "vocab_size": 1000}
    for arch, mt in (("MistralForCausalLM", "mistral"), ("Phi3ForCausalLM", "phi3")):
        cfg = {**base, "architectures": [arch], "model_type": mt}
        plain = model_from_hf_config(cfg).n_params
        assert model_from_hf_config({**cfg, "attention_bias": True, "mlp_bias": True}).n_params == plain
    # Llama honours them (LlamaAttention bias=config.attention_bias): q 256 + k 128 + v 128 + o 256 = 768 per layer
    llama = {**base, "architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    assert (model_from_hf_config({**llama, "attention_bias": True}).n_params
            - model_from_hf_config(llama).n_params) == 2 * 768


def test_a_scale_up_size_too_large_for_the_host_names_itself(tmp_path):
    # the error named host_memory_bytes=2.7e17, a field the file never set (scaled from scale_up_size)
    path = tmp_path / "big.yaml"
    path.write_text("base: h100-sxm\nscale_up_size: 1000000\n")
    # the DGX H100's 2 TiB for 8 GPUs: 2^41 x n / 8 <= 2^50 bytes -> n <= 4,096
    with pytest.raises(ConfigError, match="scale_up_size=1000000: the host memory.*scale_up_size at most 4,096"):
        load_hardware(str(path))


def test_plan_file_ranks_that_are_not_whole_numbers_are_named(tmp_path):
    # '#-1' / '#abc' said "No such file or directory" for a file that exists; '#0' was "past" the file's plans
    path = tmp_path / "plans.json"
    path.write_text(json.dumps({"plans": [{"parallel": {"dp": 8}}, {"parallel": {"dp": 4, "tp": 2}}]}))
    runner = CliRunner()
    args = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-s", "4096", "-b", "64", "--plan"]
    for rank, words in (("-1", "#-1 is not a rank"), ("abc", "#abc is not a rank"), ("2.0", "#2.0 is not a rank"),
                        ("0", "no rank 0: ranks start at 1; legal: #1 to #2")):
        r = runner.invoke(app, [*args, f"{path}#{rank}"])
        assert r.exit_code == 2 and words in " ".join(r.output.split()), r.output


def test_the_uneven_chunk_note_matches_the_layout_written():
    # --pp-layers 15,17 with 2 virtual stages: the note said [8, 7] while the layout gave rank 0 'Ettttttt' (7) first
    from shardplan.export.megatron import pipeline_layout
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=8192, global_batch=64,
                                 global_batch_tokens=None, pp=2, virtual_stages=2, schedule="interleaved",
                                 pp_layers="15,17")
    from shardplan.parallel import validate
    notes = validate(pc, m, tr, 8).notes
    assert any("first stage [7, 8]" in n for n in notes), notes
    assert pipeline_layout((15, 17), virtual_stages=2).split("|")[0] == "E" + "t" * 7


def test_pipeline_pins_without_a_pipelined_winner_are_noted():
    # --fix schedule=interleaved exited 0 silently with every ranked plan at pp = 1
    r = CliRunner().invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "64",
                                 "--fix", "schedule=interleaved", "--top", "3"])
    assert r.exit_code == 0 and "schedule=interleaved pinned, but no ranked plan pipelines" in " ".join(
        r.output.split()), r.output


#: breaker pass 53d: a MaxText launch script whose training workload runs 2 slices of v5p-128 (128 JAX devices)
_WORKLOAD = ('MAXTEXT_ARGS="model_name=llama3-8b per_device_batch_size=2 ici_fsdp_parallelism=-1 '
             'max_target_length=8192"\n{before}\nxpk workload create --cluster c --tpu-type=v5p-128 --num-slices=2 '
             '--command="python3 -m MaxText.train base.yml ${{MAXTEXT_ARGS}}"\n{after}')


@pytest.mark.parametrize("before, after", [
    ("cat <<EOF\nusage: run.sh --num-slices 8 --tpu-type v5p-1024 python3 -m MaxText.train base.yml "
     "ici_fsdp_parallelism=256\nEOF", ""),                                   # a heredoc's usage text
    ("echo Example: xpk workload create --tpu-type=v5p-1024 --num-slices=4", ""),   # an echo line
    ("xpk cluster create --cluster c --tpu-type=v5p-512 --num-slices=4", ""),       # the cluster, not the workload
    ("", "python3 -m MaxText.decode base.yml max_target_length=1024 ici_tensor_parallelism=4")])  # a later decode
def test_maxtext_scripts_are_read_from_the_training_workload(before, after):
    from shardplan.export import import_config
    imp = import_config("maxtext", _WORKLOAD.format(before=before, after=after))
    assert (imp.devices, imp.seq_len, imp.parallel.tp, imp.parallel.dp_shard) == (128, 8192, 1, 64)


def test_maxtext_launcher_names_and_a_mesh_of_another_size():
    from shardplan.export import import_config
    from shardplan.export.maxtext import slice_devices
    # xpk names: tpu7x-N counts TensorCores (two chiplets per chip, each a JAX device), v5p-N TensorCores (two per
    # megacore chip), v6e-N chips; a topology counts chips
    assert [slice_devices(n) for n in ("tpu7x-128", "tpu7x-4x4x4", "v5p-128", "v5p-4x4x4", "v6e-4x4", "v5p-7")] == [
        128, 128, 64, 64, 16, None]
    # no --num-slices: xpk's default, one slice
    one = _WORKLOAD.format(before="", after="").replace(" --num-slices=2", "")
    assert import_config("maxtext", one).devices == 64
    # a fixed 32-device mesh on a 64-device slice: MaxText refuses it (it was read as 32 devices, exit 0)
    fixed = one.replace("ici_fsdp_parallelism=-1", "ici_fsdp_parallelism=32")
    with pytest.raises(ConfigError, match="degrees multiply to 32, but the launcher runs 64 JAX devices"):
        import_config("maxtext", fixed)


def test_breaker53d_smaller_findings():
    from shardplan.cli.calibrate import other_class
    from shardplan.export import import_config
    from shardplan.export.maxtext import maxtext_model_name
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    # EasyDeL: a tuple of axes holding 'tp' shards the hidden dimension over tp; a script's hidden_state_axis=None not
    base = ('import easydel as ed\nmodel = ed.AutoEasyDeLModelForCausalLM.from_pretrained("m", '
            'sharding_axis_dims=(1, 8, 1, 4, 1), partition_axis=ed.PartitionAxis(hidden_state_axis={axis}))\n'
            'arguments = ed.TrainingArguments(total_batch_size=8, max_sequence_length=8192)\n')
    assert import_config("easydel", base.format(axis="None")).parallel.sp is False
    assert import_config("easydel", base.format(axis="('tp',)")).parallel.sp is True
    # mlp_bias is not read by Qwen2MLP / GemmaMLP (bias=False): no weights counted for it
    cfg = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "intermediate_size": 128, "vocab_size": 100}
    for arch, mt in (("Qwen2ForCausalLM", "qwen2"), ("GemmaForCausalLM", "gemma"), ("Gemma2ForCausalLM", "gemma2")):
        c = {**cfg, "architectures": [arch], "model_type": mt, "head_dim": 16}
        assert model_from_hf_config({**c, "mlp_bias": True}).n_params == model_from_hf_config(c).n_params, arch
    # MaxText: the model_name follows the shape, not the name; ulysses without cp is never read; strategy any case
    assert maxtext_model_name(MODELS["llama-3-8b"]) == "llama3-8b"
    assert maxtext_model_name(MODELS["llama-3-8b"].model_copy(update={"n_layers": 4})) is None
    line = ("python3 -m MaxText.train base.yml model_name=llama3-8b per_device_batch_size=1 max_target_length=8192 "
            "ici_fsdp_parallelism=-1 {extra}")
    assert import_config("maxtext", line.format(extra="context_parallel_strategy=ulysses"), devices=16).parallel.cp == 1
    ring = import_config("maxtext", line.format(extra="ici_context_parallelism=4 context_parallel_strategy=Ring"),
                         devices=16)
    assert any("context_parallel_strategy='ring'" in n for n in ring.notes)
    # mu_dtype float32 beside bf16 weights: fp32 first moments the plan prices as bf16
    bf16 = import_config("maxtext", line.format(extra="weight_dtype=bfloat16 mu_dtype=float32"), devices=16)
    assert any("under-counted by about 2 bytes" in n for n in bf16.notes)
    # TPU generations are device classes of their own (one 'tpu' architecture, another bf16 peak)
    assert other_class(["tpu-v5e", "tpu-v6e"], HARDWARE["tpu-v6e"]) == ["tpu-v5e (another tpu generation)"]


def test_an_ep_the_experts_do_not_allow_is_named_before_the_imbalance():
    # ep=16 on Mixtral's 8 experts blamed moe_imbalance with "legal moe_imbalance: 1 .. 0"
    r = CliRunner().invoke(app, ["estimate", "-m", "mixtral-8x7b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b",
                                 "256", "--ep", "16"])
    assert r.exit_code == 2 and "legal ep: 1, 2, 4, 8" in " ".join(r.output.split()) and "imbalance" not in r.output


def test_maxtext_export_says_on_stderr_when_it_has_no_model_name(tmp_path):
    # the header's own "no model_name:" note hid the stderr one ("model_name:" was found in the file)
    spec = tmp_path / "tiny.yaml"
    spec.write_text("name: tiny\nn_layers: 2\nd_model: 256\nn_heads: 4\nffn_dim: 512\nvocab_size: 1000\n")
    out = tmp_path / "m.yml"
    r = CliRunner().invoke(app, ["export", "--to", "maxtext", "-m", str(spec), "-H", "tpu-v5p", "-n", "8", "-s",
                                 "1024", "-b", "8", "-o", str(out)])
    assert r.exit_code == 0 and "note: no model_name: MaxText has no config" in " ".join(r.output.split()), r.output


def test_breaker53d_launcher_and_granite_edges():
    from shardplan.export import import_config
    from shardplan.export.maxtext import slice_devices
    # xpk prefers --tpu-type to --device-type; a cluster line's --device-type is not the workload's
    mixed = _WORKLOAD.format(before="xpk cluster create --cluster c --device-type=v6e-256", after="")
    assert import_config("maxtext", mixed).devices == 128
    # a one-line script whose quoted command holds ": " parses as a YAML mapping: read as the command line it is
    colon = ('xpk workload create --tpu-type=v5p-128 --command="echo Start: now; python3 -m MaxText.train base.yml '
             'per_device_batch_size=2 ici_fsdp_parallelism=-1 max_target_length=8192"')
    assert import_config("maxtext", colon).devices == 64
    assert slice_devices("v5p-1") is None and slice_devices("v6e-0") is None and slice_devices("tpu7x-0x4x4") is None
    # Granite 4 read as dense only where the config says no experts (GraniteMoeHybridConfig defaults to 8), every
    # layer is attention and the list covers every layer
    for broken in ({k: v for k, v in GRANITE4_MICRO.items() if k != "num_local_experts"},
                   {**GRANITE4_MICRO, "layer_types": ["attention"]}, {**GRANITE4_MICRO, "model_type": "llama"}):
        with pytest.raises(ConfigError):
            model_from_hf_config(broken)
