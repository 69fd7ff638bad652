"""The layouts on which the planner is checked against the compiled XLA program.

tiny-llama, 8 devices, seq_len 32, global batch 16 sequences; each entry is the ParallelConfig
keyword arguments of one strategy (PP and PP+TP run GPipe, "PP, 1F1B" the executed 1F1B, "PP,
interleaved" the executed interleaved 1F1B on tiny-llama with 4 layers, :data:`MODEL_UPDATES`; shared by
tests/test_validation_xla.py and benchmarks/validation.py so the documented table and the tests
cover the same cases).
"""

STRATEGIES: dict[str, dict] = {
    "DP": dict(microbatch_size=2),
    "FSDP (ZeRO-3)": dict(zero_stage=3, microbatch_size=2),
    "ZeRO-1": dict(zero_stage=1, microbatch_size=2),
    "ZeRO-2": dict(zero_stage=2, microbatch_size=2),
    "HSDP": dict(zero_stage=3, dp_shard=4, microbatch_size=2),
    "TP": dict(tp=2, microbatch_size=4),
    "TP+SP": dict(tp=2, sp=True, microbatch_size=4),
    "FSDP+TP": dict(tp=2, zero_stage=3, microbatch_size=4),
    "FSDP+TP+SP": dict(tp=2, sp=True, zero_stage=3, microbatch_size=4),
    "CP": dict(cp=2, microbatch_size=4),
    "CP=4": dict(cp=4, microbatch_size=8),
    "ZeRO-1+CP": dict(zero_stage=1, cp=2, microbatch_size=4),
    "TP+SP+CP": dict(tp=2, sp=True, cp=2, microbatch_size=8),
    "DP, 2 microbatches": dict(microbatch_size=1),
    "TP+SP, 4 microbatches": dict(tp=2, sp=True, microbatch_size=1),
    "ZeRO-1, 2 microbatches": dict(zero_stage=1, microbatch_size=1),
    "ZeRO-2, 2 microbatches": dict(zero_stage=2, microbatch_size=1),
    "FSDP, 2 microbatches": dict(zero_stage=3, microbatch_size=1),
    "HSDP, 2 microbatches": dict(zero_stage=3, dp_shard=4, microbatch_size=1),
    "PP": dict(pp=2, dp=4, microbatch_size=1, schedule="gpipe"),
    "PP+TP": dict(pp=2, tp=2, dp=2, schedule="gpipe"),
    "PP, 1F1B": dict(pp=2, dp=4, microbatch_size=1, schedule="1f1b"),
    "PP, interleaved": dict(pp=2, dp=4, microbatch_size=1, schedule="interleaved", virtual_stages=2),
}

#: Cases run on another model than tiny-llama: ModelSpec field updates (interleaving needs
#: pp x v = 4 layers).
MODEL_UPDATES: dict[str, dict] = {
    "PP, interleaved": dict(n_layers=4, name="tiny-llama-4l"),
}


def case_model(name: str, base):  # noqa: ANN001, ANN201 (a ModelSpec; no import needed here)
    """The model of case ``name``: ``base`` (tiny-llama) with :data:`MODEL_UPDATES` applied, if any."""
    return base.model_copy(update=MODEL_UPDATES[name]) if name in MODEL_UPDATES else base
