"""Test session setup: 8 simulated CPU devices and a persistent JAX compilation cache.

Both are set through environment variables *before* anything imports JAX (JAX reads its
configuration from ``JAX_*`` variables at import time), so the planner tests never import JAX.
"""

import os
import sys
from pathlib import Path

_FLAG = "--xla_force_host_platform_device_count=8"
_CACHE = Path(__file__).resolve().parent.parent / "tmp" / ".jax_cache"

if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FLAG}".strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")

if "jax" in sys.modules:  # imported by a plugin before this file: apply the cache settings directly
    import jax

    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)

# Property tests draw the same examples on every run (``derandomize``) so that CI passes or fails on
# the code, not on the draw; ``HYPOTHESIS_PROFILE=explore`` (with ``ROBUST_EXAMPLES=2000``) searches new
# inputs, as benchmarks/fuzz.py does for the CLI. Any failure found that way becomes a fixed example.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", derandomize=True, database=None)
_hypothesis_settings.register_profile("explore", derandomize=False)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
