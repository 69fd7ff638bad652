"""Framework profiles (``--framework``): one :class:`~shardplan.specs.framework.FrameworkProfile`
per training framework. Each number has its source or the published rows it was fitted on
(docs/accuracy.md shows the fits); a field left at its default keeps Megatron-LM's behaviour.
"""

from __future__ import annotations

from shardplan.errors import ConfigError
from shardplan.specs.framework import FrameworkProfile

_FP32_MAIN_GRADS = ("Megatron-LM accumulates gradients in an fp32 main_grad buffer (--accumulate-allreduce-grads-in-fp32, "
                    "default with bf16); nanotron likewise (accumulate_grad_in_fp32)")

FRAMEWORKS: dict[str, FrameworkProfile] = {
    p.name: p for p in [
        FrameworkProfile(name="megatron"),
        FrameworkProfile(name="maxtext"),
        FrameworkProfile(name="torchtitan"),
        FrameworkProfile(name="pytorch-fsdp"),
        FrameworkProfile(name="deepspeed"),
        FrameworkProfile(name="nanotron", grad_buffer_bytes=4, sources={"grad_buffer_bytes": _FP32_MAIN_GRADS}),
    ]
}


def framework_profile(name: str) -> FrameworkProfile:
    """Look up a framework profile by name.

    Raises:
        ConfigError: for an unknown name (lists the legal names).
    """
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise ConfigError(f"framework={name!r} is unknown; legal framework: {', '.join(FRAMEWORKS)}",
                          field="framework", value=name, legal=list(FRAMEWORKS)) from None
