"""Regenerate the worked examples of docs/export.md: one plan per framework, exported with
:func:`shardplan.export.export_text` (the same text ``shardplan export --to NAME ... -o FILE`` writes).

Usage: python benchmarks/export_examples.py [--doc docs/export.md]

The examples replace the text between ``<!-- examples:begin -->`` and ``<!-- examples:end -->``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from shardplan.cli.export import TARGET_PROFILES
from shardplan.cost.step import estimate
from shardplan.export import EXPORTERS, export_text, reproduce_command
from shardplan.inputs import build_inputs

ROOT = Path(__file__).resolve().parents[1]

#: framework -> (why this plan, the plan's inputs); each plan is one the framework can express
EXAMPLES = {
    "megatron": ("the issue's case: Llama-3-70B on 512 H100, tp=8 + sp, pp=4 interleaved, cp=2, ZeRO-1, "
                 "selective recompute",
                 dict(model="llama-3-70b", devices=512, seq_len=8192, global_batch=512, tp=8, sp=True, pp=4,
                      schedule="interleaved", virtual_stages=2, cp=2, zero_stage=1, recompute="selective")),
    "torchtitan": ("the same layout with the weights ZeRO-3 sharded (torchtitan's FSDP2 has no ZeRO-1)",
                   dict(model="llama-3-70b", devices=512, seq_len=8192, global_batch=512, tp=8, sp=True, pp=4,
                        schedule="interleaved", virtual_stages=2, cp=2, zero_stage=3, recompute="selective")),
    "maxtext": ("Mixtral-8x7B on 64 H100 with ep=8 carved from the ZeRO-3 group, tp=2 + sp",
                dict(model="mixtral-8x7b", devices=64, seq_len=4096, global_batch=256, tp=2, sp=True, ep=8,
                     zero_stage=3, recompute="full")),
    "easydel": ("Llama-3-8B on 64 H100, plain FSDP: the seed's sharding_axis_dims question",
                dict(model="llama-3-8b", devices=64, seq_len=8192, global_batch=128, zero_stage=3, recompute="full")),
    "deepspeed": ("Llama-3-8B on 64 H100, ZeRO-3, full recompute",
                  dict(model="llama-3-8b", devices=64, seq_len=8192, global_batch=128, zero_stage=3,
                       recompute="full")),
    "nanotron": ("Llama-3-8B on 64 H100 planned with the nanotron profile (its cost-greedy layer split, 18 + 14), "
                 "tp=2 + sp, pp=2 1F1B, dp=16 ZeRO-1",
                 dict(model="llama-3-8b", devices=64, seq_len=8192, global_batch=64, tp=2, sp=True, pp=2,
                      zero_stage=1, framework="nanotron")),
}
_LANG = {".sh": "bash", ".json": "json", ".toml": "toml", ".yml": "yaml", ".yaml": "yaml", ".py": "python"}


def example(name: str) -> str:
    """The Markdown section of one framework: what the plan is, the command, the file."""
    why, inputs = EXAMPLES[name]
    kw = dict(inputs)
    # priced as `shardplan export --to NAME` prices it: the target framework's own profile unless one is given
    kw.setdefault("framework", TARGET_PROFILES.get(name))
    n = kw.pop("devices")
    m, hw, tr, pc = build_inputs(hardware="h100-sxm", devices=n, global_batch_tokens=None, **kw)
    e = estimate(m, hw, tr, pc, n)
    ex = EXPORTERS[name]
    out = f"{name}{ex.suffix}"
    cmd = reproduce_command(name, e, out)
    text = export_text(name, e, cmd)
    return (f"### {ex.title}\n\n{why}.\n\n```bash\n{cmd}\n```\n\n"
            f"```{_LANG[ex.suffix]}\n{text.rstrip()}\n```\n")


def main() -> None:
    """Rewrite the examples section of docs/export.md (``--doc`` another file)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "export.md")
    args = ap.parse_args()
    body = "\n".join(example(name) for name in EXAMPLES)
    doc = args.doc.read_text()
    new = re.sub(r"(<!-- examples:begin -->\n).*?(<!-- examples:end -->)", lambda mt: mt.group(1) + "\n" + body
                 + "\n" + mt.group(2), doc, flags=re.S)
    args.doc.write_text(new)
    print(f"wrote {len(EXAMPLES)} examples to {args.doc}")


if __name__ == "__main__":
    main()
