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


# --- a breaker pass (fiftieth session) ---------------------------------------------------------------------------

import json  # noqa: E402

from typer.testing import CliRunner  # noqa: E402

from shardplan.cli import app  # noqa: E402
from shardplan.export import import_config  # noqa: E402


def _run(args, **kw):
    return CliRunner().invoke(app, [str(a) for a in args], terminal_width=250, **kw)


def test_a_hardware_file_with_a_non_number_host_size_is_bad_input(tmp_path):
    # devices_per_host "eight" over a preset with host memory reached arithmetic before validation (a TypeError)
    f = tmp_path / "hw.yaml"
    f.write_text('base: h100-sxm\ndevices_per_host: "eight"\n')
    r = _run(["estimate", "-m", "llama-3.1-8b", "-H", f, "-n", "8", "-s", "4096", "-b", "32"])
    assert r.exit_code == 2 and "devices_per_host='eight'" in r.output and "Traceback" not in r.output


def test_a_file_restating_a_presets_host_memory_gets_the_presets_verdict(tmp_path):
    # --scale-up-size 32 over h100-sxm scales its 2 TiB host to 32 devices (8 TiB); a file giving the same 2 TiB
    # describes the same 8-GPU host, so the flag scales it alike (it was taken as 2 TiB for 32 devices: exit 1)
    f = tmp_path / "same.yaml"
    f.write_text("base: h100-sxm\nname: samehost\nhost_memory_bytes: 2199023255552\n")
    args = ["estimate", "-m", "llama-3.1-405b", "-n", "64", "-s", "4096", "-b", "64", "--offload-optimizer",
            "--scale-up-size", "32", "--tp", "8", "--pp", "8", "--recompute", "full"]
    assert [_run([*args, "-H", h]).exit_code for h in ("h100-sxm", f)] == [0, 0]


def test_deepspeed_fp8_beside_bf16_is_fp8_and_a_malformed_fp8_block_is_refused():
    base = '{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}, '
    imp = import_config("deepspeed", base + '"fp8": {"enabled": true}, "bf16": {"enabled": true}}', devices=8)
    assert imp.precision == "fp8-mixed" and any("priced as fp8-mixed" in n for n in imp.notes)
    assert import_config("deepspeed", base + '"fp8": {"enabled": false}, "bf16": {"enabled": true}}',
                         devices=8).precision == "bf16-mixed"
    for bad, match in (('"fp8": true}', "fp8=True"), ('"fp8": {"enabled": "yes"}}', "fp8.enabled='yes'")):
        with pytest.raises(ConfigError, match=match):
            import_config("deepspeed", base + bad, devices=8)
    with pytest.raises(ConfigError, match="shell script"):
        import_config("deepspeed", "#!/bin/bash\ndeepspeed pretrain_gpt.py --zero-stage 1\n", devices=8)


def test_an_accelerate_launch_over_its_ds_config_keeps_its_precision_and_model_code(tmp_path):
    # the named ds_config has no bf16 section: Accelerate adds the one mixed_precision names; a Hugging Face model
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 1, "train_batch_size": 8, '
                                      '"zero_optimization": {"stage": 2}}')
    acc = tmp_path / "acc.yaml"
    acc.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
                   "num_processes: 8\nmixed_precision: bf16\n")
    out = tmp_path / "plan.json"
    r = _run(["import", "--from", "accelerate", acc, "-o", out])
    assert r.exit_code == 0, r.output
    plan = json.loads(out.read_text())
    assert plan["training"]["precision"] == "bf16-mixed" and plan["imported_from"] == "hf-deepspeed"


def test_plan_with_an_optimizer_offload_searches_the_stages_that_offload():
    # one device: ZeRO-0 was the only stage tried and offload refuses it (exit 2); NVMe was not handed to candidates
    r = _run(["plan", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "1", "-s", "4096", "-b", "1", "--offload-optimizer",
              "--top", "1"])
    assert r.exit_code == 0, r.output
    r = _run(["plan", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "32", "--offload-optimizer",
              "--nvme-offload", "--framework", "deepspeed", "--top", "1"])
    assert r.exit_code == 0 and "nvme(optimizer)" in r.output


def test_plan_names_host_memory_under_the_megatron_profile_too(tmp_path):
    # the megatron profile searches without and with tp overlap and merges: the host-memory refusals were dropped in
    # the merge, and the result blamed the HBM. 8B at ZeRO-1 over 8: 16 B x 8.03e9 = 119.7 GiB per host > 9.3 GiB
    f = tmp_path / "small.yaml"
    f.write_text("base: h100-sxm\nname: smallhost\nhost_memory_bytes: 10000000000\n")
    args = ["plan", "-m", "llama-3.1-8b", "-H", f, "-n", "8", "-s", "4096", "-b", "32", "--offload-optimizer"]
    r = _run(args)
    assert r.exit_code == 1 and "of host memory" in r.output and "HBM" not in r.output.split("result:")[-1]
    r = _run([*args, "--json"])
    assert json.loads(r.stdout[:r.stdout.rindex("}") + 1])["search"]["host_memory_refused"] > 0


def test_plan_advice_counts_an_offload_already_given(tmp_path):
    # a host large enough for everything: 405B with the optimizer offloaded keeps bf16 weights (2 B) and bf16
    # gradients (2 B, the megatron profile's bf16-mixed) on the devices: 4 B x 405,853,388,800 / 8 = 189.0 GiB per
    # device, so the advice names that state and the parameter offload, not the optimizer offload already given
    f = tmp_path / "big.yaml"
    f.write_text("base: h100-sxm\nname: bighost\nhost_memory_bytes: 1.0e15\n")
    r = _run(["plan", "-m", "llama-3.1-405b", "-H", f, "-n", "8", "-s", "4096", "-b", "8", "--offload-optimizer"])
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "189.0 GiB per device" in text and "optimizer state offloaded" in text
    assert "--offload-params" in text and "or --offload-optimizer" not in text


def test_small_input_checks_of_the_breaker_pass(tmp_path):
    # an empty plan file priced the flags' layout as if read; a batch error named a global_batch_size never given
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    base = ["estimate", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096"]
    r = _run([*base, "-b", "32", "--plan", empty])
    assert r.exit_code == 2 and "empty JSON object" in r.output
    # 135,168 tokens / 4,096 = 33 sequences over dp 8
    r = _run([*base, "--global-batch-tokens", "135168"])
    assert r.exit_code == 2 and "(--global-batch-tokens 135168 / seq_len 4096)" in " ".join(r.output.split())
    # Megatron-Core refuses expert parallelism beside tensor parallelism without sequence parallelism
    with pytest.raises(ConfigError, match="needs --sequence-parallel"):
        import_config("megatron", "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --bf16 "
                                  "--tensor-model-parallel-size 2 --expert-model-parallel-size 4 --num-experts 8")
    # MODEL_ARGS: a list for a one-value flag, or not a mapping at all
    with pytest.raises(ConfigError, match="one value"):
        import_config("megatron", "MODEL_ARGS:\n  --tensor-model-parallel-size: [2, 4]\n  --bf16: true\n", devices=8)
    with pytest.raises(ConfigError, match="MODEL_ARGS is"):
        import_config("megatron", "MODEL_ARGS: [--bf16]\n", devices=8)
    # Accelerate HYBRID sharding: each machine's processes are a shard group, so the machines divide the processes
    with pytest.raises(ConfigError, match="legal num_machines: 1, 2, 4, 8, 16"):
        import_config("accelerate", "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n"
                                    "num_machines: 3\nnum_processes: 16\n")
    # an inline Accelerate DeepSpeed offload to NVMe beside one to the CPU: both recorded as NVMe, with the note
    imp = import_config("accelerate", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
                                      "  offload_optimizer_device: nvme\n  offload_param_device: cpu\nnum_processes: 8\n")
    assert imp.parallel.nvme_offload and any("recorded as nvme_offload for both" in n for n in imp.notes)


def test_megatron_optimizer_offload_keeps_the_gradient_buffer_on_the_device():
    # a new user's finding: Megatron-Core's --optimizer-cpu-offload copies the gradients to the host for the CPU step
    # and keeps its DDP main-grad buffer on the GPU (cpu_offloading/README.md); DeepSpeed's ZeRO-Offload moves them.
    # llama-3-8b, ZeRO-1 over 8, bf16 gradients: the full buffer 2 B x 8,030,261,248 = 14.96 GiB under megatron
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec
    grads = {}
    for fw in ("megatron", "deepspeed"):
        tr = TrainingSpec(seq_len=8192, global_batch_size=64, framework=FRAMEWORKS[fw],
                          precision=PRECISION_POLICIES["bf16-mixed"])
        e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr,
                     ParallelConfig(zero_stage=1, offload_optimizer=True), 8)
        grads[fw] = e.memory.grads
    # DeepSpeed keeps only its contiguous gradient buckets on the device (2 x 5e8 bf16 elements, overlap_comm)
    assert grads["megatron"] == 2 * 8_030_261_248 and grads["deepspeed"] == 2 * 5e8 * 2
    assert grads["megatron"] / 2**30 == pytest.approx(14.96, abs=0.005)


def test_plan_with_an_offload_given_says_when_the_layout_runs_faster_without_it():
    # a new user read --offload-optimizer as "allow": every ranked layout then offloads (29% MFU against 51%); plan
    # now says the best layout without it fits and is faster, and names it
    r = _run(["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "64", "--offload-optimizer",
              "--top", "1"])
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "note: --offload-optimizer puts every ranked layout's state in host memory" in text
    assert "without it the best layout fits and runs" in text
    # 405B on 32 H100: nothing fits without the offload, so no such note
    r = _run(["plan", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b", "32",
              "--offload-optimizer", "--top", "1"])
    assert "without it the best layout fits" not in " ".join(r.output.split())
