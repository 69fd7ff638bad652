"""New-user pass 53c (a JAX / TPU researcher with MaxText and EasyDeL on v5p, v6e, v5e and TPU7x): each test fails on
the behaviour the pass found (noted in its comment)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config
from shardplan.inputs import build_inputs
from shardplan.records import RunRecord

#: a tpu-recipes v6e-256 record as the user wrote it: no framework field
V6E_RECORD = dict(model="llama-3-70b", hardware="tpu-v6e", devices=256, seq_len=8192, global_batch_size=1280,
                  parallel={"dp": 256, "zero_stage": 3, "microbatch_size": 5, "recompute": "full"},
                  tokens_per_s_per_device=960.2, source="tpu-recipes Llama3.1-70B v6e-256")


def test_tpu_records_without_a_framework_are_fitted_with_the_tpu_default():
    # the schema default 'megatron' filled every record, so calibrate said "framework profile 'megatron', the one
    # every record names" and refused two of three TPU records with Megatron-core's offloading rule
    from shardplan.calibrate import cases
    from shardplan.cli.calibrate import _fit_profile, records_framework
    from shardplan.presets.frameworks import framework_profile
    rec = RunRecord(**V6E_RECORD)
    assert rec.framework is None and records_framework([rec]) is None
    assert _fit_profile([rec], "tpu-v6e", None).name == "maxtext"
    assert cases([rec], framework_profile("maxtext"))[0].training.framework.name == "maxtext"
    # a record that names one still decides
    named = RunRecord(**{**V6E_RECORD, "framework": "paxml"})
    assert _fit_profile([named], "tpu-v6e", None).name == "paxml"


def test_a_fit_worse_than_the_base_is_a_poor_fit():
    # three v6e records fitted hbm_efficiency 0.24: in sample 6.9% against the preset's 6.1%, 19.4% on the model each
    # fold held out, and calibrate wrote the file
    from shardplan.cli.calibrate import poor_fit
    def cal(in_sample, base, held=None, base_held=None):
        cv = {} if held is None else {"leave-one-model-out": {"throughput_median_of_groups": held, "groups": 3.0,
                                                              "base_median_of_groups": base_held}}
        return SimpleNamespace(underdetermined="", cross_validated=cv, in_sample={"throughput_median": in_sample},
                               base_error={"throughput_median": base})
    # 6.9% vs 6.1%: 0.8 points, under the 2-point allowance (the fit minimises soft-L1, not the median)
    assert poor_fit(cal(0.069, 0.061), []) is None
    # 8.6% vs 6.1%: 2.5 points over and 1.41x: worse in sample
    assert "worse than the base hardware's 6.1% on the same records" in poor_fit(cal(0.086, 0.061), [])
    # held out 19.4% vs the base's 6.1% on the same groups: 13.3 points and 3.2x
    why = poor_fit(cal(0.069, 0.061, 0.194, 0.061), [])
    assert why.startswith("leave-one-model-out") and "19.4%, worse than the base hardware's 6.1%" in why
    # a fit that beats the base out of sample (the synthetic cluster: 30% base, 5% held out) passes
    assert poor_fit(cal(0.04, 0.3, 0.05, 0.3), []) is None


def test_maxtext_export_names_mistral_and_says_when_it_has_no_model_name(tmp_path):
    # no model_name and no note: MaxText would train base.yml's default model with the planned mesh
    def text(model):
        m, hw, tr, pc = build_inputs(model=model, hardware="tpu-v6e", devices=8, seq_len=8192, global_batch=48,
                                     global_batch_tokens=None, recompute="full")
        return export_text("maxtext", estimate(m, hw, tr, pc, 8))
    assert "model_name: mistral-7b" in text("mistral-7b")
    cfg = tmp_path / "config.json"  # a Hugging Face Llama config with no MaxText name
    cfg.write_text('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, '
                   '"intermediate_size": 5632, "num_attention_heads": 32, "num_key_value_heads": 4, '
                   '"num_hidden_layers": 22, "vocab_size": 32000, "max_position_embeddings": 8192}')
    out = text(str(cfg))
    assert "\nmodel_name:" not in out and "# note: no model_name: MaxText has no config" in out


def _maxtext(extra: str):
    return import_config("maxtext", "python3 -m MaxText.train MaxText/configs/base.yml model_name=llama3-8b "
                         f"per_device_batch_size=1 max_target_length=8192 ici_fsdp_parallelism=-1 {extra}", devices=16)


def test_maxtext_ulysses_context_parallelism_is_refused_and_all_gather_noted():
    # context_parallel_strategy=ulysses was read as the ring the profile prices, with no note
    with pytest.raises(ConfigError, match="context_parallel_strategy='ulysses'.*legal: all_gather, ring"):
        _maxtext("ici_context_parallelism=4 context_parallel_strategy=ulysses")
    imp = _maxtext("ici_context_parallelism=4")  # MaxText's default strategy is all_gather (configs/types.py)
    assert any("context_parallel_strategy='all_gather'" in n for n in imp.notes)


def test_maxtext_optimizer_keys_the_plan_does_not_price_are_noted():
    # mu_dtype / grad_dtype / opt_type were dropped silently: the tpu7x 70B recipe keeps its first moment in bf16
    notes = _maxtext("mu_dtype=bfloat16 grad_dtype=bfloat16 opt_type=adafactor").notes
    assert any(n.startswith("mu_dtype='bfloat16'") and "2 bytes per parameter" in n for n in notes)
    assert any(n.startswith("grad_dtype='bfloat16'") for n in notes)
    assert any(n.startswith("opt_type='adafactor'") for n in notes)
    assert not any(n.startswith(("mu_dtype", "opt_type")) for n in _maxtext("").notes)


def test_chips_without_a_shared_row_get_the_optimism_note():
    # v5e and TPU7x had no ceiling (public runs only raised one the shared rows set): an 80% MFU plan had no note
    from shardplan.calibration import best_published_mfu
    from shardplan.presets.hardware import HARDWARE
    for name, floor in (("tpu-v5e", 0.5), ("tpu7x", 0.5)):
        best = best_published_mfu(HARDWARE[name].peak_flops_bf16, False)
        assert best is not None and floor < best[0] < 0.7, (name, best)
        assert "a public run of docs/accuracy.md" in best[1]


def test_a_record_carries_its_moe_capacity_factor():
    # "moe_capacity_factor": 1.25 (the Mixtral-8x7B v6e-256 recipe) was refused as an extra input, so token-dropping
    # runs could only be calibrated as dropless
    from shardplan.calibrate import cases, run_key
    from shardplan.presets.frameworks import framework_profile
    rec = RunRecord(**{**V6E_RECORD, "model": "mixtral-8x7b", "moe_capacity_factor": 1.25})
    assert cases([rec], framework_profile("maxtext"))[0].training.moe_capacity_factor == 1.25
    dropless = rec.model_copy(update={"moe_capacity_factor": None})
    maxtext = framework_profile("maxtext")
    assert run_key(cases([rec], maxtext)[0]) != run_key(cases([dropless], maxtext)[0])  # another configuration
    # the record itself is refused, as read (breaker pass 53d: record import wrote 0.5 and -1, calibrate refused later)
    with pytest.raises(ValidationError, match="moe_capacity_factor"):
        RunRecord(**{**V6E_RECORD, "model": "mixtral-8x7b", "moe_capacity_factor": 0.5})
    # a MaxText capacity_factor of 0.5 imported into a plan estimate then refused: refused at import, naming the range
    with pytest.raises(ConfigError, match="capacity_factor=0.5: .* legal: <= 0 \\(dropless\\) or 1 to 64"):
        _maxtext("capacity_factor=0.5")


#: a tpu-recipes style launcher (xpk / gcluster) around a MaxText command line
LAUNCH = ('export NUM_SLICES="${{NUM_SLICES:-{slices}}}"\nMAXTEXT_ARGS="model_name=llama3-8b per_device_batch_size=2 '
          'ici_fsdp_parallelism=-1 max_target_length=8192"\nxpk workload create --cluster c {kind} '
          '--num-slices ${{NUM_SLICES}} --command="python3 -m MaxText.train MaxText/configs/base.yml ${{MAXTEXT_ARGS}}"')


@pytest.mark.parametrize("kind, per_slice", [
    ("--device-type=tpu7x-4x4x4", 128),      # 64 chips of two chiplets, each a JAX device
    ("--tpu-type=v5p-128", 64),              # v5p names count TensorCores, two per (megacore) chip
    ("--compute-type v6e-256", 256),         # v6e names count chips
    ("--compute-type ct6e-standard-4t --topology 16x16", 256)])
def test_maxtext_import_reads_the_launcher_slices(kind, per_slice):
    # "MaxText ici_fsdp_parallelism -1 (auto) needs --devices" although the script says --device-type / --num-slices
    imp = import_config("maxtext", LAUNCH.format(slices=1, kind=kind))
    assert imp.devices == per_slice and imp.parallel.dp == per_slice and imp.parallel.dp_shard in (None, per_slice)
    # two slices: base.yml's dcn_data_parallelism -1 takes them, the ici -1 one slice: HSDP (-n 512 on a
    # --num-slices 2 script was one impossible 512-chip slice with ZeRO-3 over DCN)
    two = import_config("maxtext", LAUNCH.format(slices=2, kind=kind))
    assert (two.devices, two.parallel.dp, two.parallel.dp_shard) == (2 * per_slice, 2 * per_slice, per_slice)


def test_maxtext_devices_price_the_script_at_other_slice_counts():
    script = LAUNCH.format(slices=1, kind="--compute-type v6e-256")
    imp = import_config("maxtext", script, devices=1024)  # 4 slices of 256
    assert imp.parallel.dp_shard == 256 and any("4 slice(s) of 256 JAX devices" in n for n in imp.notes)
    with pytest.raises(ConfigError, match="--devices 300 is not a whole number of the launcher's slices"):
        import_config("maxtext", script, devices=300)
    # dcn degrees that contradict the launcher's slices: MaxText asserts they agree
    with pytest.raises(ConfigError, match="dcn_\\* degrees multiply to 4, but the launcher runs --num-slices 2"):
        import_config("maxtext", LAUNCH.format(slices=2, kind="--compute-type v6e-256").replace(
            "ici_fsdp_parallelism=-1", "ici_fsdp_parallelism=-1 dcn_data_parallelism=4"))


def test_easydel_tp_is_priced_and_read_as_tp_with_sp():
    # EasyDeL's tp was refused under the maxtext profile (tp without sp) and, with --sp, as "Megatron sequence
    # parallelism": its models shard the residual stream over tp (hidden_state_axis 'tp'), the planner's sp
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="tpu-v5p", devices=32, seq_len=8192, global_batch=64,
                                 global_batch_tokens=None, tp=4, sp=True, zero_stage=3, recompute="full",
                                 precision="bf16-mixed")
    text = export_text("easydel", estimate(m, hw, tr, pc, 32))
    back = import_config("easydel", text).parallel
    assert (back.tp, back.sp, back.dp_shard) == (4, True, 8)
    # a file that keeps the hidden dimension whole (hidden_state_axis None) is read as tp without sp
    whole = text.replace("'hidden_state_axis': 'tp'", "'hidden_state_axis': None")
    assert whole != text and import_config("easydel", whole).parallel.sp is False
    # a plan priced with tp and sp off is written with the note (EasyDeL holds less than priced)
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=32, seq_len=8192, global_batch=64,
                                 global_batch_tokens=None, tp=4, sp=False, zero_stage=3, recompute="full",
                                 framework="jax-runtime", precision="bf16-mixed")
    assert "tp=4 priced with the activations between the blocks whole" in export_text(
        "easydel", estimate(m, hw, tr, pc, 32))


def test_records_of_one_run_written_differently_are_one_configuration():
    # breaker pass 53d: six copies of one llama-3-8b run, each written differently (framework left out or in another
    # case, hardware label's case, a capacity factor on a dense model), were six configurations and a 0.0% fit
    from shardplan.calibrate import cases, run_key
    from shardplan.presets.frameworks import framework_profile
    base = dict(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=32,
                parallel={"dp": 8, "zero_stage": 1}, tokens_per_s_per_device=9000.0)
    variants = [RunRecord(**base), RunRecord(**{**base, "framework": "megatron"}),
                RunRecord(**{**base, "framework": "Megatron"}), RunRecord(**{**base, "hardware": "H100-SXM"}),
                RunRecord(**{**base, "moe_capacity_factor": 1.25}), RunRecord(**{**base, "moe_routing": "round_robin"})]
    assert len({run_key(c) for c in cases(variants, framework_profile("megatron"))}) == 1
    # another layout is another configuration
    other = RunRecord(**{**base, "parallel": {"dp": 8, "zero_stage": 3}})
    assert len({run_key(c) for c in cases([*variants, other], framework_profile("megatron"))}) == 2
