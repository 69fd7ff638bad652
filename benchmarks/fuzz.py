"""Generated inputs against the CLI's promise: nothing a user types crashes, hangs or lies (issue 15).

Generates inputs of the kinds a user (or a mistake) produces -- numeric flags from 0 to 10^400,
empty names, Hugging Face ``config.json`` files with wrong types and shapes, YAML/JSON model and
hardware specs with odd keys, deep nesting and alias bombs, plan files with loose types, FIFOs,
``/dev/zero`` -- runs each through the CLI in-process (typer's ``CliRunner``) under a per-input
timeout (``signal.alarm``, Unix), and counts the outcomes:

* ``ok``: exit 0 with a sane result; ``negative``: exit 1 (no layout fits / does not fit) with a sane
  result printed; ``clean_error``: exit 2 (or 1 without output) with a message and no traceback;
* ``traceback``: an exception escaped the CLI; ``hang``: no answer within ``--timeout`` seconds;
* ``nonsense``: exit 0 with a non-finite, negative or out-of-range number in the JSON output;
* ``exit0_invalid``: exit 0 on an input the generator knows to be invalid.

Usage::

    PYTHONPATH=. python benchmarks/fuzz.py --n 2000 --seed 0 --timeout 20

The last run is recorded in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

MODELS = ["llama-3-8b", "tiny-llama", "mixtral-8x7b", "gpt2", "llama-3.2-1b", "tiny-moe"]
HARDWARE = ["h100-sxm", "a100-80gb", "tpu-v5e", "mi300x", "tpu7x"]
# numbers a user (or a script) may type: edge, huge, negative, float-looking, garbage
NUMBERS = ["0", "1", "2", "3", "7", "8", "64", "4096", "-1", "-8", "1000000000000000000",
           "1000000000000000001", str(2**63), str(2**70), "1" + "0" * 400, "1e3", "1.5", "nan", "inf", "", "x",
           "0x10", "99999999999999999999999999"]
ODD_VALUES = [0, -1, 1.5, "false", "true", "3", None, [], {}, True, False, 10**18, 10**400, 5e-324, 1e308,
              float("nan"), float("inf"), "x" * 300]


@dataclass
class Case:
    """One generated input: CLI arguments, files to write first, and whether it is known invalid."""

    kind: str
    args: list[str]
    files: dict[str, str] = field(default_factory=dict)
    invalid: bool = False


def _num(rng: random.Random, good: list[str]) -> tuple[str, bool]:
    """A numeric flag value: usually a good one, sometimes one of :data:`NUMBERS` (invalid unless it is
    a plain positive integer of physical size)."""
    if rng.random() < 0.7:
        return rng.choice(good), False
    v = rng.choice(NUMBERS)
    ok = v.isdigit() and 1 <= int(v) <= 2**20
    return v, not ok


def flag_case(rng: random.Random) -> Case:
    """``estimate`` or ``plan`` with random presets and numeric flags."""
    cmd = rng.choice(["estimate", "estimate", "plan"])
    invalid = False
    dev, bad = _num(rng, ["8", "16", "64"])
    invalid |= bad
    seq, bad = _num(rng, ["1024", "2048", "4096"])
    invalid |= bad
    batch, bad = _num(rng, ["64", "128", "256"])
    invalid |= bad
    args = [cmd, "-m", rng.choice(MODELS), "-H", rng.choice(HARDWARE), "-n", dev, "-s", seq, "-b", batch]
    for flag, good in [("--tp", ["1", "2", "4"]), ("--pp", ["1", "2"]), ("--cp", ["1", "2"]),
                       ("--microbatch-size", ["1", "2"]), ("--zero-stage", ["0", "1", "3"])]:
        if rng.random() < 0.3:
            v, bad = _num(rng, good)
            if flag == "--zero-stage":  # 0 is legal here
                bad = not (v.isdigit() and 0 <= int(v) <= 3)
            invalid |= bad
            args += [flag, v]
    if rng.random() < 0.1:
        args[rng.choice([2, 4])] = rng.choice(["", " ", "nope", "nope.yaml", "/", "/dev/null"])
        invalid = True
    return Case("flags", args + ["--json"] * (rng.random() < 0.8), invalid=invalid)


def _hf_base(rng: random.Random) -> dict:
    arch = rng.choice(["LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "GPT2LMHeadModel",
                       "MixtralForCausalLM", "GPTNeoXForCausalLM"])
    if arch == "GPT2LMHeadModel":
        return {"architectures": [arch], "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
                "vocab_size": 50257, "n_positions": 1024}
    cfg = {"architectures": [arch], "model_type": arch[:-11].lower(), "hidden_size": 1024,
           "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4,
           "intermediate_size": 2816, "vocab_size": 32000, "tie_word_embeddings": False}
    if arch == "MixtralForCausalLM":
        cfg.update(num_local_experts=8, num_experts_per_tok=2)
    return cfg


def hf_case(rng: random.Random) -> Case:
    """A Hugging Face config.json with one or two fields mutated (wrong type, zero, huge, missing)."""
    cfg = _hf_base(rng)
    invalid = False
    for _ in range(rng.choice([0, 1, 1, 2])):
        key = rng.choice(list(cfg) + ["head_dim", "attention_bias", "tie_word_embeddings"])
        action = rng.random()
        if action < 0.15 and key in cfg:
            del cfg[key]
            invalid |= key not in ("tie_word_embeddings", "num_key_value_heads", "model_type")
        else:
            cfg[key] = rng.choice(ODD_VALUES)
            invalid = True  # most mutations are invalid; a valid one exiting 0 is not counted below
    cfg_text = json.dumps(cfg) if rng.random() < 0.9 else "{" * 100000
    args = ["estimate", "-m", "cfg/config.json", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64", "--json"]
    return Case("hf_config", args, {"cfg/config.json": cfg_text}, invalid=False if not invalid else None)


def _yaml_doc(rng: random.Random, fields: dict) -> tuple[str, bool]:
    """A YAML document of ``fields`` with one mutation: odd key, odd value, nesting, alias bomb."""
    kind = rng.choice(["plain", "value", "key", "nest", "bomb", "list", "garbage"])
    d = dict(fields)
    if kind == "plain":
        return "\n".join(f"{k}: {json.dumps(v)}" for k, v in d.items()), False
    if kind == "value":
        d[rng.choice(list(d))] = rng.choice(ODD_VALUES)
        return "\n".join(f"{k}: {json.dumps(v, allow_nan=True)}" for k, v in d.items()), None
    if kind == "key":
        return "\n".join(f"{k}: {json.dumps(v)}" for k, v in d.items()) + "\n" + rng.choice(
            ["1: 2", "true: 3", "null: 4", "[1, 2]: 5", "? {a: 1}\n: 6", "unknown_field: 1"]), True
    if kind == "nest":
        depth = rng.choice([50, 1000, 20000])
        return "a: " + "[" * depth + "]" * depth, True
    if kind == "bomb":
        lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
        return "\n".join(lines), True
    if kind == "list":
        return "- 1\n- 2\n", True
    return rng.choice(["", ":", "a: [", "\x00\x01", "key: !!python/object:os.system ls"]), True


def yaml_case(rng: random.Random) -> Case:
    """A YAML/JSON model or hardware spec file."""
    if rng.random() < 0.5:
        fields = {"n_layers": 4, "d_model": 256, "n_heads": 4, "ffn_dim": 1024, "vocab_size": 1000}
        text, invalid = _yaml_doc(rng, fields)
        args = ["estimate", "-m", "spec/model.yaml", "-H", "h100-sxm", "-n", "8", "-s", "1024", "-b", "64", "--json"]
        return Case("yaml_model", args, {"spec/model.yaml": text}, invalid=invalid)
    fields = {"base": "h100-sxm", "matmul_efficiency": 0.6, "scale_out_bandwidth": 5e10}
    text, invalid = _yaml_doc(rng, fields)
    args = ["estimate", "-m", "llama-3-8b", "-H", "spec/hw.yaml", "-n", "8", "-s", "2048", "-b", "64", "--json"]
    return Case("yaml_hardware", args, {"spec/hw.yaml": text}, invalid=invalid)


def _plan_value_invalid(key: str, v: object) -> bool | None:
    """True when a plan-file value is of the wrong JSON type or outside its range; None when it may be
    legal (the layout check decides)."""
    if key == "sp":
        return not isinstance(v, bool)
    if key == "schedule":
        return v not in ("gpipe", "1f1b", "interleaved", "zero-bubble")
    if v is None and key in ("dp", "pp_layers"):
        return None
    if key == "pp_layers":
        return not (isinstance(v, list) and all(type(x) is int and x >= 1 for x in v))
    if type(v) is not int:
        return True
    hi = 3 if key == "zero_stage" else 2**20
    lo = 0 if key == "zero_stage" else 1
    return True if not lo <= v <= hi else None


def plan_case(rng: random.Random) -> Case:
    """A plan JSON file with loose or wrong types, unknown keys, or odd structure."""
    plan = {"tp": 2, "pp": 1, "zero_stage": 1, "microbatch_size": 1}
    invalid: bool | None = True
    r = rng.random()
    if r < 0.2:
        invalid = False
    elif r < 0.6:
        key = rng.choice(list(plan) + ["sp", "schedule", "pp_layers", "dp"])
        plan[key] = rng.choice(ODD_VALUES + [[-1, 33], [1, "2"], "1f1b"])
        invalid = _plan_value_invalid(key, plan[key])
    elif r < 0.75:
        plan["zero_stag"] = 3
    elif r <= 0.9:
        plan[rng.choice(["tp", "zero_stage", "sp"])] = rng.choice([2.0, "3", "yes", 1e300])
    text = json.dumps({"plans": [{"parallel": plan}]} if rng.random() < 0.5 else plan)
    if r > 0.9:
        text = rng.choice(["[]", "{\"plans\": []}", "{\"plans\": 3}", "[" * 50000, "null", "nan"])
    args = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64",
            "--plan", "p/plan.json", "--json"]
    return Case("plan_file", args, {"p/plan.json": text}, invalid=invalid)


MODEL_BOUNDS = {"n_layers": (1, 2, 3, 2**16), "d_model": (1, 2, 64, 2**20), "n_heads": (1, 2, 2**16),
                "ffn_dim": (1, 3, 2**24), "vocab_size": (1, 7, 2**24), "n_experts": (0, 0, 2, 2**16),
                "top_k": (0, 1, 2), "head_dim": (1, 7, 2**16)}
HW_BOUNDS = {"peak_flops_bf16": (1e9, 1e18), "hbm_bytes": (2**20, 2.0**50), "hbm_bandwidth": (1e6, 1e15),
             "scale_up_size": (1, 3, 2**20), "scale_up_bandwidth": (1e6, 1e15), "scale_out_bandwidth": (1e6, 1e15),
             "matmul_efficiency": (0.01, 1.0), "hbm_efficiency": (0.01, 1.0), "scale_out_efficiency": (0.01, 1.0),
             "scale_up_latency": (0.0, 1.0), "collective_latency": (0.0, 1.0), "sm_count": (1, 4096),
             "collective_sms": (0, 4096), "gemm_k_tile": (1, 1024), "runtime_reserve_bytes": (0, 2**20),
             "gemm_tiles": ([[1, 1]], [[0, 128]], [[4096, 4096]], [[-1, 5]])}


def extreme_case(rng: random.Random) -> Case:
    """A model or hardware spec at the edges of the documented ranges (legal or just outside): the answer
    must be a finite result or a clean error."""
    if rng.random() < 0.5:
        spec = {"n_layers": 4, "d_model": 256, "n_heads": 4, "ffn_dim": 1024, "vocab_size": 1000}
        for key in rng.sample(list(MODEL_BOUNDS), rng.randint(1, 3)):
            spec[key] = rng.choice(MODEL_BOUNDS[key])
        files = {"x/model.json": json.dumps(spec)}
        args = ["estimate", "-m", "x/model.json", "-H", rng.choice(HARDWARE)]
    else:
        spec = {"base": rng.choice(HARDWARE)}
        for key in rng.sample(list(HW_BOUNDS), rng.randint(1, 4)):
            spec[key] = rng.choice(HW_BOUNDS[key])
        files = {"x/hw.json": json.dumps(spec)}
        args = [rng.choice(["estimate", "plan"]), "-m", rng.choice(MODELS), "-H", "x/hw.json"]
    args += ["-n", rng.choice(["1", "8", "64", "1048576"]), "-s", rng.choice(["1", "2048", "16777216"]),
             "-b", rng.choice(["1", "64", "1048576"])]
    return Case("extreme", args + ["--json"], files, invalid=None)


IMPORT_TEXTS = ["", "{}", "[]", "null", "a: [", "{" * 50000, "[" * 50000, "a: 1\n1: 2", "tp: true", "x" * 100,
                json.dumps({"train_micro_batch_size_per_gpu": "x", "zero_optimization": {"stage": "3"}}),
                "ici_tensor_parallelism: -1\nici_fsdp_parallelism: 0\n", "ici_tensor_parallelism: 1e400\n",
                "--tensor-model-parallel-size x --pipeline-model-parallel-size 0", "--micro-batch-size",
                "[parallelism]\ntensor_parallel_degree = -1\n", "[parallelism\n", "sharding_axis_dims: [1, -1, 1, 1]",
                "parallelism: 5", "--micro-batch-size 100000000000000000000000 'unbalanced",
                # NeMo 1.x / Megatron-Bridge training YAMLs (shardplan/export/nemo_yaml.py)
                "trainer: {num_nodes: x, devices: -1}\nmodel: {tensor_model_parallel_size: 0, micro_batch_size: 1}\n",
                "model: {tensor_model_parallel_size: '${oc.env:TP}', global_batch_size: 8}\ntrainer: {devices: 8}\n",
                "model: {tensor_model_parallel_size: '${multiply:${.x}, 2}', micro_batch_size: [1]}\ntrainer: {}\n",
                "_target_: x.ConfigContainer\nmodel: {pipeline_model_parallel_size: 1e400}\ntrain: {micro_batch_size: "
                "1}\nmixed_precision: {fp8: [1]}\noptimizer: {use_precision_aware_optimizer: true, exp_avg_dtype: {}}\n",
                "model: {tensor_model_parallel_size: 2}\ntrain: {global_batch_size: 8}\nddp: {}\n",
                "MODEL_ARGS: {--tensor-model-parallel-size: {a: 1}}\n", "MODEL_ARGS: 5\n"]


def import_case(rng: random.Random) -> Case:
    """``shardplan import --from FRAMEWORK FILE`` of a malformed or odd config."""
    fw = rng.choice(["maxtext", "easydel", "torchtitan", "megatron", "deepspeed", "nanotron"])
    args = ["import", "--from", fw, "imp/config.txt"] + rng.choice([[], ["-n", "8"], ["-n", "0"], ["-n", str(10**18)]])
    return Case("import", args, {"imp/config.txt": rng.choice(IMPORT_TEXTS)}, invalid=None)


LAYOUT_FLAGS = {"--tp": ["1", "2", "4", "8", "16", "3"], "--pp": ["1", "2", "3", "4", "8", "32"], "--cp": ["1", "2", "4"],
                "--ep": ["1", "2", "8"], "--dp": ["1", "2", "8", "64"], "--dp-shard": ["1", "2", "4"],
                "--zero-stage": ["0", "1", "2", "3"], "--microbatch-size": ["1", "2", "4", "16"],
                "--virtual-stages": ["1", "2", "4", "1000000"], "--schedule": ["gpipe", "1f1b", "interleaved", "zero-bubble"],
                "--recompute": ["none", "selective", "full"], "--pp-layers": ["17,15", "1,31", "0,32", "-1,33", "16,16"],
                "--fsdp-unit": ["block", "tensor"], "--zero3-gather": ["per_microbatch", "per_step"],
                "--precision": ["bf16-mixed", "fp32", "fp8-mixed", "fp32-params"], "--framework": ["megatron", "deepspeed",
                "torchtitan", "torchtitan-compile", "maxtext", "nanotron", "pytorch-fsdp", "hf-fsdp", "hf-deepspeed"], "--attention": ["flash", "naive"],
                "--scale-up-size": ["1", "3", "8", "64", "1048576"]}
SWITCHES = ["--sp", "--kv-replication", "--offload-optimizer", "--offload-params", "--nvme-offload", "--no-overlap-grad-reduce", "--tp-overlap",
            "--dropout"]


def layout_case(rng: random.Random) -> Case:
    """``estimate`` or ``plan`` of a legal-looking but unusual layout: several layout flags and switches at
    once (the result must be finite, MFU <= 100%, or a clean error)."""
    cmd = rng.choice(["estimate", "estimate", "estimate", "plan"])
    args = [cmd, "-m", rng.choice(MODELS), "-H", rng.choice(HARDWARE), "-n", rng.choice(["1", "8", "16", "64", "96",
            "1024", "8192"]), "-s", rng.choice(["128", "2048", "4096", "32768", "1048576"]),
            "-b", rng.choice(["8", "64", "256", "4096"])]
    for flag in rng.sample(list(LAYOUT_FLAGS), rng.randint(1, 4)):
        args += [flag, rng.choice(LAYOUT_FLAGS[flag])]
    args += rng.sample(SWITCHES, rng.randint(0, 2))
    return Case("layout", args + ["--json"], invalid=None)


FIX_VALUES = ["tp=1e400", "tp=" + "[" * 60 + "1" + "]" * 60, "tp=true", 'zero_stage="3"', "tp=" + "9" * 5000,
              "schedule=[1]", "tp=!!python/object:os.system", "tp=2,pp=2,tp=4", "sp=yes", "tp=0x10", "tp=2024-01-01",
              "tp=.nan", "pp_layers=[16,16],pp=2", "pp_layers=[-1,33],pp=2", "nope=1", "tp", "tp=", "=3", "cp=2",
              "pp_layers=[&a [1,2,3,4,5,6,7,8,9], *a, *a, *a]", "recompute=full", "dp=3"]


def fix_case(rng: random.Random) -> Case:
    """``plan --fix FIELD=VALUE`` with odd values (YAML-parsed: tags, anchors, dates, deep lists)."""
    args = ["plan", "-m", rng.choice(MODELS[:3]), "-H", rng.choice(HARDWARE), "-n", rng.choice(["8", "16"]),
            "-s", "2048", "-b", "64"]
    for _ in range(rng.randint(1, 2)):
        args += ["--fix", rng.choice(FIX_VALUES)]
    return Case("fix", args + ["--json"] * (rng.random() < 0.5), invalid=None)


SPECIALS = [
    (["estimate", "-m", "/dev/zero", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "fifo.yaml", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "fifo.yaml", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "/dev/zero", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "big.yaml", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "", "-n", "8", "-s", "2048", "-b", "64"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64", "--plan", "/dev/zero"],
     True),
    (["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "1000000000000000000"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "1000000000000000000",
      "--microbatch-size", "3"], True),
    (["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "1000000000000000001", "-b", "64",
      "--cp", "2"], True),
]


def special_case(rng: random.Random) -> Case:
    """One of the hand-written cases of issue 15 (special files, empty names, 10^18 batches)."""
    args, invalid = rng.choice(SPECIALS)
    return Case("special", list(args), invalid=invalid)


#: the frameworks a guide case draws, with the device kinds each runs on (FrameworkProfile.device_kinds)
GUIDE_FRAMEWORKS = {"megatron": ("gpu",), "deepspeed": ("gpu",), "torchtitan": ("gpu",), "maxtext": ("gpu", "tpu"),
                    "nanotron": ("gpu",), "jax-runtime": ("gpu", "tpu")}


def guide_case(rng: random.Random) -> Case:
    """``shardplan guide`` with a framework on a hardware kind it may not run on (breaker pass 56: megatron on a TPU
    printed a table with exit 0) and models whose positions may not reach the sequence (gpt2 at 8,192 tokens)."""
    hw, fw = rng.choice(HARDWARE), rng.choice(list(GUIDE_FRAMEWORKS))
    kind = "tpu" if hw.startswith("tpu") else "gpu"
    model = rng.choice(["tiny-llama", "gpt2"])
    args = ["guide", "-m", model, "-n", rng.choice(["8", "16"]), "-H", hw, "--framework", fw]
    return Case("guide", args, invalid=kind not in GUIDE_FRAMEWORKS[fw] or model == "gpt2")


GENERATORS = [(flag_case, 0.18), (hf_case, 0.12), (yaml_case, 0.12), (plan_case, 0.1), (special_case, 0.06),
              (extreme_case, 0.12), (import_case, 0.07), (layout_case, 0.18), (fix_case, 0.05), (guide_case, 0.03)]


def generate(n: int, seed: int) -> list[Case]:
    """``n`` cases drawn from :data:`GENERATORS` with their weights."""
    rng = random.Random(seed)
    gens, weights = zip(*GENERATORS)
    return [rng.choices(gens, weights)[0](rng) for _ in range(n)]


def _non_finite(x: object) -> bool:
    """True if a JSON value holds a non-finite number, or a negative time / memory / throughput."""
    if isinstance(x, float):
        return not math.isfinite(x)
    if isinstance(x, dict):
        if any(isinstance(x.get(k), (int, float)) and not 0 <= x[k] <= 1.0001 for k in ("mfu", "hfu")):
            return True
        for k, v in x.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0 and any(
                    w in str(k) for w in ("step_s", "tokens_per_s", "total", "bytes", "mfu")):
                return True
        return any(_non_finite(v) for v in x.values())
    if isinstance(x, list):
        return any(_non_finite(v) for v in x)
    return False


class _Timeout(BaseException):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout()


def classify(result: object, case: Case) -> str:
    """The outcome class of one CliRunner result."""
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        return "traceback"
    if "Traceback" in result.output or result.exit_code not in (0, 1, 2):
        return "traceback"
    if result.exit_code == 2 or (result.exit_code == 1 and "{" not in result.stdout):
        return "clean_error" if result.exit_code == 2 or "result:" in result.output else "traceback"
    if "--json" in case.args:
        try:
            text = result.stdout
            data = json.loads(text[text.index("{"):]) if "{" in text else None
        except ValueError:
            return "nonsense"
        if data is None or _non_finite(data):
            return "nonsense"
    if result.exit_code == 1:
        return "negative"
    return "exit0_invalid" if case.invalid else "ok"


def run_case(runner: object, app: object, case: Case, root: Path, timeout: float) -> tuple[str, str]:
    """Write the case's files under ``root``, run it in ``root`` (a folder with a ``config.json``, so that a
    model name silently read from the current folder shows), and classify; returns (class, detail)."""
    for name, text in case.files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = runner.invoke(app, case.args, catch_exceptions=True)
        cls = classify(result, case)
        detail = repr(result.exception) if cls == "traceback" else result.output[-200:]
        if cls not in ("ok", "negative", "clean_error") and case.files:
            detail = f"files {dict((k, v[:120]) for k, v in case.files.items())}: {detail}"
    except _Timeout:
        cls, detail = "hang", f"> {timeout:g} s"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return cls, detail


def _prepare(root: Path) -> None:
    """The files the special cases use: a FIFO, a 2 MiB YAML file, a config.json in the folder."""
    os.mkfifo(root / "fifo.yaml")
    (root / "big.yaml").write_text("a: 1\n" + "#" * (2 * 2**20))
    (root / "config.json").write_text(json.dumps(_hf_base(random.Random(1))))


def main(argv: list[str] | None = None) -> dict:
    """Run the fuzz and print counts per class and kind; returns the summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--show", type=int, default=5, help="examples printed per bad class")
    ap.add_argument("--max-memory-gib", type=float, default=4.0,
                    help="address-space limit, so that a runaway read raises MemoryError instead of swapping")
    a = ap.parse_args(argv)
    import resource
    limit = int(a.max_memory_gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    from typer.testing import CliRunner

    from shardplan.cli import app
    cases, counts, bad = generate(a.n, a.seed), Counter(), {}
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        root = Path(tmp)
        _prepare(root)
        runner = CliRunner()
        for case in cases:
            cls, detail = run_case(runner, app, case, root, a.timeout)
            counts[cls] += 1
            counts[f"{case.kind}:{cls}"] += 1
            if cls not in ("ok", "negative", "clean_error"):
                bad.setdefault(cls, []).append((case.args, detail))
    summary = {c: counts[c] for c in ("ok", "negative", "clean_error", "traceback", "hang", "nonsense", "exit0_invalid")}
    print(f"{a.n} inputs (seed {a.seed}, timeout {a.timeout:g} s) in {time.time() - t0:.0f} s: {summary}")
    for key in sorted(k for k in counts if ":" in k):
        print(f"  {key}: {counts[key]}")
    for cls, items in bad.items():
        for args, detail in items[:a.show]:
            print(f"{cls}: {' '.join(map(str, args))[:200]} -> {detail[:300]!r}")
    return summary


if __name__ == "__main__":
    sys.exit(main() and 0)
