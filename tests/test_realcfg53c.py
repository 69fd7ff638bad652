"""New-user pass 53c (a JAX / TPU researcher with MaxText and EasyDeL on v5p, v6e, v5e and TPU7x): each test fails on
the behaviour the pass found (noted in its comment)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

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
