"""Structure rules of the code base (issue 13): short functions, no JAX in the planner, no cycles."""

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "shardplan"
MAX_LINES = 60


def test_no_function_over_60_lines():
    # from the def line to the last line of the body (decorators excluded)
    long = []
    for f in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES:
                    long.append(f"{f.relative_to(PKG.parent)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, "functions over 60 lines:\n" + "\n".join(long)


def test_planner_and_cli_import_no_jax():
    code = ("import sys, shardplan.cli, shardplan.search, shardplan.crosscheck, shardplan.cost.step; "
            "bad = sorted(m for m in sys.modules if m == 'jax' or m.startswith(('jax.', 'flax', 'optax'))); "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_import_cycles_between_modules():
    # module-level imports only (imports inside functions are deliberate late bindings)
    graph: dict[str, set[str]] = {}
    for f in PKG.rglob("*.py"):
        mod = ".".join(f.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
        deps = set()
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shardplan"):
                deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("shardplan")}
        graph[mod] = deps
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in graph.get(m, ()):
            if d not in graph or d == m:  # `from pkg import submodule` inside pkg/__init__ is no cycle
                continue
            assert state.get(d) != 1, "import cycle: " + " -> ".join(path + [m, d])
            if d not in state:
                visit(d, path + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])
