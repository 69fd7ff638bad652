"""Breaker pass 45: what a breaker and the helpers found, each with the behaviour it pins."""

import json

from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.collective import axis_label

runner = CliRunner()

#: llama-3-70b on 64 H100 with dp=1 cp=8: ZeRO-3 shards over the 8 cp ranks (the breaker's --objective memory #1)
_DP1_CP8 = ["-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "8192", "-b", "128", "--dp", "1",
            "--zero-stage", "3", "--tp", "8", "--cp", "8", "--recompute", "full"]


def test_zero_group_of_cp_ranks_is_not_called_dp():
    # dp=1: the 8-rank ZeRO group is the cp group; the tables and "bound by" called it "dp" (a group of 1)
    r = runner.invoke(app, ["estimate", *_DP1_CP8])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "dp-cp over scale-out" in text and "dp over" not in text, text
    r = runner.invoke(app, ["estimate", *_DP1_CP8, "--json"])
    colls = json.loads(r.stdout)["collectives"]
    zero = [c for c in colls if c["tensor"] in ("params", "grads")]
    # three ZeRO-3 collectives (forward / backward gather, gradient reduce-scatter), each over dp x cp = 1 x 8 ranks
    assert len(zero) == 3 and {(c["axis"], c["axis_label"], c["group_size"]) for c in zero} == {("dp", "dp-cp", 8)}


def test_axis_label_rule():
    assert axis_label("dp", 1) == "dp"            # no cp: the data-parallel group is dp
    assert axis_label("dp", 2) == "dp-cp"         # cp ranks share the weights
    assert axis_label("dp", 2, replicas=True) == "dp"  # the HSDP AllReduce runs across replicas only
    assert axis_label("tp", 4) == "tp"


def test_every_shared_published_row_is_covered():
    # issue 9's acceptance: every shared row is priced. Restricting the megatron profiles to ZeRO 0/1 with pp > 1
    # (Megatron-FSDP does not pipeline) left MegaScale's four Megatron-LM baseline rows (ZeRO-2-style, PP 8, the
    # megatron-legacy profile) "layout rejected" while no test noticed
    from shardplan.calibration import load_rows, reproduce_row

    rows = load_rows()
    uncovered = [(r["id"], res.reason) for r in rows for res in [reproduce_row(r)] if not res.covered]
    assert len(rows) >= 53 and uncovered == []


def test_zero_with_pipelining_refusal_names_frameworks_that_run_it():
    # Meta's Llama 3 405B layout (ZeRO-2-style FSDP beside PP 16, interleaved) is refused by the megatron profile
    # (Megatron-FSDP does not pipeline); the error now names the built-in profiles whose zero_stages,
    # pipeline_zero_stages and schedules take it: torchtitan (0/2/3, any schedule), automodel, torchtitan-compile and
    # megatron-legacy (its ZeRO-2-style distributed optimizer); not deepspeed / nanotron (ZeRO 0/1 with pp), not
    # maxtext / paxml (gpipe only), not the non-pipelining pytorch-fsdp / llm-foundry / hf-* profiles
    r = runner.invoke(app, ["estimate", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "8192", "-s", "8192", "-b",
                            "2048", "--tp", "8", "--pp", "16", "--schedule", "interleaved", "--virtual-stages", "8",
                            "--zero-stage", "2"])
    assert r.exit_code == 2
    line = [x for x in r.output.splitlines() if x.startswith("error:")][0]
    assert line.endswith("--framework torchtitan, automodel, torchtitan-compile, megatron-legacy run it"), line
