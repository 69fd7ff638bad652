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
