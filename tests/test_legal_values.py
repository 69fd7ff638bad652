"""Every "legal values" list in a validation error is really legal (issue 9: a listed value must not be
rejected by a later check of the same field)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

FIELDS = ("tp", "pp", "cp", "ep", "microbatch_size", "virtual_stages", "dp_shard")


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
    try:
        validate(ParallelConfig(**kw), m, tr, devices)
        return
    except ConfigError as e:
        err = e
    if err.field not in FIELDS or not err.legal:
        return
    for value in err.legal:
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
