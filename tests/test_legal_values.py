"""Every "legal values" list in a validation error is really legal (issue 9: a listed value must not be
rejected by a later check of the same field)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

FIELDS = ("tp", "pp", "cp", "ep", "microbatch_size", "virtual_stages", "dp_shard")


def _listed_error(kw: dict, m, tr: TrainingSpec, devices: int, fields: tuple[str, ...]) -> ConfigError | None:
    """The error validate gives the layout ``kw`` when it is about one of ``fields`` and lists legal values, else
    None (the layout is valid, or its error names no list to check)."""
    try:
        validate(ParallelConfig(**kw), m, tr, devices)
    except ConfigError as e:
        return e if e.field in fields and e.legal else None
    return None


@settings(max_examples=300, deadline=None)
@given(model=st.sampled_from(["llama-3-8b", "mixtral-8x7b", "gpt3-175b", "llama-3.2-1b"]),
       tp=st.sampled_from([1, 2, 3, 4, 8, 16]), pp=st.sampled_from([1, 2, 3, 4, 5, 8]),
       cp=st.sampled_from([1, 2, 3, 4]), ep=st.sampled_from([1, 2, 4, 8]),
       mbs=st.sampled_from([1, 2, 3, 4]), v=st.sampled_from([1, 2, 3]),
       zero=st.sampled_from([0, 1, 3]), batch=st.sampled_from([8, 12, 16, 64]),
       devices=st.sampled_from([8, 16, 24, 64]), seq=st.sampled_from([2048, 4096, 6144]))
def test_listed_legal_values_pass_the_same_check(model, tp, pp, cp, ep, mbs, v, zero, batch, devices, seq):
    m = MODELS[model]
    tr = TrainingSpec(seq_len=seq, global_batch_size=batch)
    kw = dict(tp=tp, pp=pp, cp=cp, ep=ep, microbatch_size=mbs, zero_stage=zero, virtual_stages=v,
              schedule="interleaved" if v > 1 else "1f1b")
    err = _listed_error(kw, m, tr, devices, FIELDS)
    for value in err.legal if err else ():
        try:
            validate(ParallelConfig(**{**kw, err.field: value}), m, tr, devices)
        except ConfigError as again:
            assert again.field != err.field, (f"{err.field}={value} was listed as legal in {err} "
                                              f"but is rejected: {again}")


def test_cp_that_does_not_divide_the_devices_lists_legal_cp():
    # 64 devices, tp 1, pp 1, cp 3: 3 does not divide 64; the legal cp are the divisors of 64 / (tp x pp) = 64
    import pytest
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(cp=3), MODELS["llama-3-8b"], TrainingSpec(seq_len=4096, global_batch_size=256), 64)
    assert e.value.field == "cp" and e.value.legal == [1, 2, 4, 8, 16, 32, 64], str(e.value)


def test_kv_head_error_lists_tp_that_fit_the_devices():
    # phi-4: 40 query heads, 10 KV heads: tp 1, 2, 5, 10 split both; on 16 devices only 1 and 2 divide the devices
    import pytest
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(tp=4, sp=True), MODELS["phi-4"], TrainingSpec(seq_len=4096, global_batch_size=256), 16)
    assert e.value.legal == [1, 2] and "(on 16 devices: 1, 2)" in str(e.value), str(e.value)


def test_batch_alternatives_are_only_the_ones_the_profile_runs():
    # 244 sequences on 64 ranks: dp 64 does not divide them. Folding dp into cp (cp = 64, 128 tokens per device)
    # keeps the batch under the megatron profile; the deepspeed profile has no cp, so it is not offered there
    import pytest
    from shardplan.presets.frameworks import framework_profile
    m = MODELS["llama-3-8b"]
    for fw, offered in (("megatron", True), ("deepspeed", False)):
        tr = TrainingSpec(seq_len=8192, global_batch_size=244, framework=framework_profile(fw))
        with pytest.raises(ConfigError) as e:
            validate(ParallelConfig(), m, tr, 64)
        assert ("cp=64" in str(e.value)) == offered, (fw, str(e.value))
        if offered:  # and the alternative passes
            validate(ParallelConfig(cp=64), m, tr, 64)


# ---- every listed value passes every later check, not only the one that listed it ----------------------------

import re

import pytest
from typer.testing import CliRunner

from shardplan.cli import app

runner = CliRunner()
ALL_FIELDS = FIELDS + ("etp", "pipeline_flushes", "dp", "sp", "zero_stage", "schedule", "tp_overlap")


@settings(max_examples=300, deadline=None)
@given(model=st.sampled_from(["llama-3-8b", "mixtral-8x7b", "qwen3-30b-a3b", "llama-3.2-1b"]),
       tp=st.sampled_from([1, 2, 4, 8, 12]), pp=st.sampled_from([1, 2, 3, 5]), cp=st.sampled_from([1, 2, 4]),
       ep=st.sampled_from([1, 2, 4, 32]), etp=st.sampled_from([None, 1, 2, 3]), mbs=st.sampled_from([1, 2]),
       zero=st.sampled_from([0, 1, 3]), shard=st.sampled_from([None, 2, 4]), batch=st.sampled_from([8, 48, 64]),
       devices=st.sampled_from([8, 12, 16, 64]), seq=st.sampled_from([4095, 4096]), sp=st.booleans(),
       framework=st.sampled_from(["megatron", "megatron-legacy", "torchtitan", "nanotron", "deepspeed", "maxtext"]),
       schedule=st.sampled_from(["1f1b", "gpipe", "dualpipe"]), flushes=st.sampled_from([1, 2]))
def test_a_listed_value_passes_every_check(model, tp, pp, cp, ep, etp, mbs, zero, shard, batch, devices, seq, sp,
                                           framework, schedule, flushes):
    # picking any listed value, the other fields as given, the layout validates (tp=1 drops sp: it needs tp > 1)
    from shardplan.presets.frameworks import framework_profile
    kw = dict(tp=tp, pp=pp, cp=cp, ep=ep, etp=etp, microbatch_size=mbs, zero_stage=zero, sp=sp and tp > 1,
              dp_shard=shard if zero else None, schedule=schedule, pipeline_flushes=flushes)
    m = MODELS[model]
    tr = TrainingSpec(seq_len=seq, global_batch_size=batch, framework=framework_profile(framework))
    err = _listed_error(kw, m, tr, devices, ALL_FIELDS)
    for value in err.legal if err else ():
        change = {err.field: value, **({"sp": False} if err.field == "tp" and value == 1 else {})}
        validate(ParallelConfig(**{**kw, **change}), m, tr, devices)  # raises if the listed value is not legal


def _estimate(*args: str):
    return runner.invoke(app, ["estimate", *args])


def _listed(output: str, field: str) -> list[int]:
    """The values of the first 'legal <field>...: 1, 2, 4' list of an error (empty where it names none)."""
    m = re.search(rf"legal {field}\b[^:;]*?: ((?:\d+(?:, )?)+)", " ".join(output.split()))
    return [int(v) for v in m.group(1).rstrip(", ").split(", ")] if m else []


def _each_listed_value_runs(base: list[str], field: str, expect: list[int]) -> None:
    """``base`` fails (exit 2) listing exactly ``expect`` for ``field``, and each listed value then passes every
    check (exit 0: fits, or 1: does not fit; never 2)."""
    r = _estimate(*base)
    assert r.exit_code == 2 and _listed(r.output, field) == expect, r.output
    flag = "--" + field.replace("_", "-")
    for v in expect:
        args = list(base)
        args[args.index(flag) + 1] = str(v)
        again = _estimate(*args)
        assert again.exit_code in (0, 1), (v, again.output)


def test_legal_tp_counts_cp():
    # 8 devices, cp=4: tp x cp must divide 8, so tp 1 or 2 (4 and 8 leave no dp); tp 12 divides neither
    base = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--cp", "4", "--tp", "12"]
    _each_listed_value_runs(base, "tp", [1, 2])


def test_legal_pp_counts_dp_shard():
    # 256 devices, tp=4: pp divides 64; ZeRO shard groups of 4 need dp = 64 / pp to be a multiple of 4: pp 1 to 16
    base = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "256", "-s", "4096", "-b", "256", "--tp", "4", "--pp", "5",
            "--zero", "1", "--dp-shard", "4"]
    _each_listed_value_runs(base, "pp", [1, 2, 4, 8, 16])


def test_legal_etp_without_sp_is_tp_and_the_sp_error_names_the_ways_out():
    # deepseek-v3 (2048-wide experts) on 128 devices, tp=4: without sp only etp = tp = 4 runs; with sp every divisor
    # of 2048 that divides tp*dp*cp = 128
    base = ["-m", "deepseek-v3", "-H", "b200", "-n", "128", "-s", "8192", "-b", "128", "--tp", "4", "--no-sp"]
    _each_listed_value_runs(base + ["--etp", "3"], "etp", [4])
    r = _estimate(*base, "--etp", "3")
    assert "with sp=True, --sp, also etp 1, 2, 8, 16, 32, 64, 128" in " ".join(r.output.split())
    r = _estimate(*base, "--etp", "1")
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "legal: sp=True (--sp)" in text and "without sp legal etp: 4" in text, text
    assert _estimate(*base[:-1], "--sp", "--etp", "1").exit_code in (0, 1)


def test_ep_too_large_for_the_devices_is_named_before_etp():
    # qwen3-30b-a3b (128 experts) on 8 devices: ep=32 cannot fit 8 ranks whatever etp is; with etp=2, ep x etp must
    # divide 8: ep 1, 2 or 4
    base = ["-m", "qwen3-30b-a3b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8", "--ep", "32", "--etp", "2"]
    r = _estimate(*base)
    assert "legal etp" not in r.output
    _each_listed_value_runs(base, "ep", [1, 2, 4])


@pytest.mark.parametrize("extra, flag", [
    (["--framework", "pytorch-fsdp", "--recompute", "full", "--recompute-layers", "1"], "--recompute-layers"),
    (["--framework", "nanotron", "--pp", "2", "--pp-layers", "10,22"], "--pp-layers"),
    (["--framework", "pytorch-fsdp", "--recompute", "selective", "--recompute-modules", "core_attn"],
     "--recompute-modules")])
def test_a_field_to_leave_out_is_not_listed_as_none(extra, flag):
    # 'none' cannot be typed (--recompute-layers none is not an integer): the message says to leave the flag out
    r = _estimate("-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", *extra)
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and f"leave {flag} out" in text and not re.search(r"legal [a-z_]+: none", text), text


def test_legal_cp_counts_the_batch():
    # seq 4095 is odd: no cp > 1 splits it; cp=1 leaves dp = 64 with 2-sequence microbatches, 128 > 64 sequences:
    # no cp is legal with these settings, and the message says why instead of listing cp 1
    r = _estimate("-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4095", "-b", "64", "--cp", "4", "--mbs", "2")
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "legal cp: none with the other settings as given (cp=1: global_batch_size=64" in text
    assert _listed(r.output, "cp") == []


def test_suggested_batch_tokens_split_over_dp():
    # 1,000,000 tokens of 4,096: 244.1 sequences; dp = 8 needs a multiple of 8: 240 or 248 sequences
    base = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "--global-batch-tokens", "1000000"]
    r = _estimate(*base)
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "983040 (240 sequences), 1015808 (248 sequences)" in text, text
    for tokens in ("983040", "1015808"):
        assert _estimate(*base[:-1], tokens).exit_code in (0, 1)
    # with 2-sequence microbatches the unit is 16 sequences: 240 and 256
    r = _estimate(*base, "--mbs", "2")
    assert "983040 (240 sequences), 1048576 (256 sequences)" in " ".join(r.output.split()), r.output
