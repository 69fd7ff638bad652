"""Context parallelism by AllToAll (DeepSpeed-Ulysses, ``cp_comm='a2a'``): validation, the collectives' bytes,
the attention core's time, the framework defaults, the search, and the Megatron-LM / DeepSpeed configs."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.compute import attention_core_s
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, a2a_kv_heads, validate
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import search
from shardplan.specs.training import TrainingSpec

runner = CliRunner()
L8B, H100 = MODELS["llama-3-8b"], HARDWARE["h100-sxm"]


def _training(fw="megatron", seq=8192, gbs=8, **kw):
    return TrainingSpec(seq_len=seq, global_batch_size=gbs, framework=FRAMEWORKS[fw], **kw)


def test_no_cp_means_no_exchange():
    # cp_comm describes the cp group; with cp = 1 validation gives the default (as tp_overlap at tp = 1), and a
    # value that is not an exchange is refused whatever cp is
    assert validate(ParallelConfig(cp=1, cp_comm="a2a"), L8B, _training(), 8).parallel.cp_comm == "ring"
    assert ParallelConfig(cp=2, cp_comm="a2a").cp_comm == "a2a"
    with pytest.raises(ValueError):
        ParallelConfig(cp_comm="ulysses")
    assert "cp=2(a2a)" in ParallelConfig(cp=2, cp_comm="a2a").short()


def test_ulysses_bytes_per_layer_by_hand():
    # Llama-3-8B (32 query heads, 8 KV heads, head_dim 128) at tp 1, cp 4, seq 8192, mbs 1, bf16 (2 B):
    # local tokens u = 8192 / 4 = 2,048. Payload per call and device: Q = 2 x 2048 x 32 x 128 = 16,777,216 B,
    # K = V = 2 x 2048 x 8 x 128 = 4,194,304 B, the output as Q. An AllToAll sends (cp - 1) / cp of it:
    # Q 12,582,912 B, K 3,145,728 B. Calls: 32 layers x 4 microbatches (gbs 8 over dp 2) = 128 per tensor and
    # pass; no recompute, so the backward has as many.
    e = estimate(L8B, H100, _training(), ParallelConfig(cp=4, cp_comm="a2a", zero_stage=1), 8)
    cp = {(c.tensor, c.phase): c for c in e.collectives if c.axis == "cp"}
    assert set(cp) == {(t, ph) for t in ("q", "k", "v", "out") for ph in ("fwd", "bwd")}
    assert all(c.op == "AllToAll" and c.count == 128 for c in cp.values())
    assert cp["q", "fwd"].bytes_per_device == pytest.approx(12_582_912 * 128)
    assert cp["out", "bwd"].bytes_per_device == pytest.approx(12_582_912 * 128)
    assert cp["k", "fwd"].bytes_per_device == pytest.approx(3_145_728 * 128)
    # all exposed: nothing overlaps Ulysses' AllToAlls (DistributedAttention, Transformer Engine's a2a path)
    assert all(c.exposed_s == pytest.approx(c.time_s) for c in cp.values())


def test_recompute_runs_the_forward_alltoalls_again():
    # full recompute re-runs the layer's forward, its four AllToAlls included: backward count 2 x 128
    e = estimate(L8B, H100, _training(), ParallelConfig(cp=4, cp_comm="a2a", zero_stage=1, recompute="full"), 8)
    bwd = [c for c in e.collectives if c.axis == "cp" and c.phase == "bwd"]
    assert {c.count for c in bwd} == {256}


def test_replicated_kv_heads_are_sent_as_cp_heads():
    # cp 16 over 8 KV heads: DeepSpeed replicates them to 16 (one per rank after the AllToAll), so K carries
    # 16 heads: 2 B x (32768 / 16 = 2048 tokens) x 16 x 128 = 8,388,608 B, of which 15/16 leave: 7,864,320 B
    assert a2a_kv_heads(L8B, 1, 16) == 16 and a2a_kv_heads(L8B, 1, 4) == 8 and a2a_kv_heads(L8B, 8, 2) == 2
    e = estimate(L8B, H100, _training("hf-deepspeed", seq=32768, gbs=16),
                 ParallelConfig(cp=16, cp_comm="a2a", zero_stage=3, recompute="full"), 16)
    k = next(c for c in e.collectives if c.axis == "cp" and c.tensor == "k" and c.phase == "fwd")
    assert k.bytes_per_device / k.count == pytest.approx(7_864_320)


def test_attention_core_is_whole_sequences_for_a_head_shard():
    # Ulysses' rank attends over the whole sequence for 32 / 4 = 8 heads: the same kernel speed (key length
    # 8192) as one device on 32 heads, a quarter of the work; at mbs 2 both keep the 132 SMs busy
    tr = _training(gbs=16)
    one = attention_core_s(L8B, tr, H100, ParallelConfig(microbatch_size=2), 2 * 8192)
    a2a = attention_core_s(L8B, tr, H100, ParallelConfig(cp=4, cp_comm="a2a", microbatch_size=2), 2 * 8192 / 4)
    assert a2a[0] == pytest.approx(one[0] / 4) and a2a[1] == pytest.approx(one[1] / 4)
    # the ring's blocks run at the kernel's speed for key length 2048: slower per FLOP than Ulysses' 8192
    ring = attention_core_s(L8B, tr, H100, ParallelConfig(cp=4, microbatch_size=2), 2 * 8192 / 4)
    assert ring[0] > a2a[0]


def test_heads_must_split_over_cp():
    # tp 8: each rank has 32 / 8 = 4 query heads and max(8 / 8, 1) = 1 KV head. DeepSpeed replicates KV heads:
    # cp must divide 4 (1 KV head divides into every cp): legal cp 1, 2, 4; cp 8 is refused naming them
    # (the deepspeed profile, Megatron-DeepSpeed: hf-deepspeed runs Ulysses without AutoTP, test below)
    tr = _training("deepspeed", seq=8192, gbs=8)
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(tp=8, cp=8, cp_comm="a2a", zero_stage=1), L8B, tr, 64)
    assert err.value.field == "cp" and "4 query heads" in str(err.value) and "legal cp: 1, 2, 4" in str(err.value)
    validate(ParallelConfig(tp=8, cp=4, cp_comm="a2a", zero_stage=1), L8B, tr, 64)
    # Megatron-LM's a2a (Transformer Engine) splits the KV heads too and does not replicate them: with 1 KV head
    # per rank only cp 1 remains; at tp 1 (8 KV heads) cp 2, 4, 8 divide both, 16 does not
    with pytest.raises(ConfigError, match="does not replicate"):
        validate(ParallelConfig(tp=8, cp=4, cp_comm="a2a", zero_stage=1), L8B, _training(seq=8192, gbs=8), 64)
    validate(ParallelConfig(cp=8, cp_comm="a2a", zero_stage=1), L8B, _training(seq=8192, gbs=8), 8)
    with pytest.raises(ConfigError, match="legal cp: 1, 2, 4, 8"):
        validate(ParallelConfig(cp=16, cp_comm="a2a", zero_stage=1), L8B, _training(seq=8192, gbs=16), 16)


def test_a2a_needs_cp_not_2cp_and_no_flash():
    # the ring's load-balanced causal split needs seq_len % (2 cp); Ulysses' whole sequences need only seq % cp:
    # 4100 = 4 x 1025 (odd), so cp 4 splits it for Ulysses and not for the ring
    tr = _training(seq=4100, gbs=8)
    validate(ParallelConfig(cp=4, cp_comm="a2a", zero_stage=1), L8B, tr, 8)
    with pytest.raises(ConfigError, match="2\\*cp"):
        validate(ParallelConfig(cp=4, zero_stage=1), L8B, tr, 8)
    # unfused attention works after DeepSpeed-Ulysses' AllToAll (an ordinary attention per head shard), not in a
    # ring, nor in Megatron-LM's a2a (Transformer Engine runs context parallelism in its fused kernels only)
    validate(ParallelConfig(cp=4, cp_comm="a2a", zero_stage=1), L8B, _training("hf-deepspeed", attention="naive"), 8)
    with pytest.raises(ConfigError, match="blockwise"):
        validate(ParallelConfig(cp=4, zero_stage=1), L8B, _training(attention="naive"), 8)
    with pytest.raises(ConfigError, match="Transformer Engine"):
        validate(ParallelConfig(cp=4, cp_comm="a2a", zero_stage=1), L8B, _training(attention="naive"), 8)


def test_frameworks_say_which_exchange_they_run():
    assert FRAMEWORKS["megatron"].cp_comms == ("ring", "a2a")
    assert FRAMEWORKS["deepspeed"].cp_comms == FRAMEWORKS["hf-deepspeed"].cp_comms == ("a2a",)
    with pytest.raises(ConfigError) as err:  # torchtitan's context parallelism is a ring
        validate(ParallelConfig(cp=4, cp_comm="a2a", zero_stage=3), L8B, _training("torchtitan"), 8)
    assert err.value.field == "cp_comm" and "legal cp_comm: ring" in str(err.value)


def test_deepspeed_layouts_take_ulysses_by_default():
    base = ["--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "8", "--seq-len", "32768",
            "--global-batch", "16", "--zero-stage", "3", "--framework", "hf-deepspeed", "--recompute", "full"]
    # (full recompute: without it transformers' eager layers keep 51 B per token and d_model element per layer,
    # 32 layers x 8,192 tokens x 51 x 4,096 B = 55 GB, which with the 12.6 GB loss and 16 GB of ZeRO-3 state
    # does not fit 80 GB)
    r = runner.invoke(app, ["estimate", *base, "--cp", "4", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["parallel"]["cp_comm"] == "a2a"
    assert "cp_comm=a2a: the context-parallel exchange the hf-deepspeed profile implements" in r.stderr
    r = runner.invoke(app, ["estimate", *base, "--cp", "4", "--cp-comm", "ring"])
    assert r.exit_code == 2 and "legal cp_comm: a2a" in r.output


def test_search_under_deepspeed_gives_cp_layouts_ulysses():
    res = search(L8B, H100, _training("hf-deepspeed", seq=32768, gbs=16), 8, fix={"cp": 2}, top_k=5)
    assert res.plans and all(e.parallel.cp == 2 and e.parallel.cp_comm == "a2a" for e in res.plans)


def _export(tmp_path, to, *flags):
    out = tmp_path / f"cfg.{to}"
    r = runner.invoke(app, ["export", "--to", to, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "8",
                            "--seq-len", "32768", "--global-batch", "16", *flags, "-o", str(out)])
    return r, out


def test_megatron_and_deepspeed_configs_round_trip(tmp_path):
    r, out = _export(tmp_path, "megatron", "--cp", "4", "--cp-comm", "a2a", "--recompute", "full")
    assert r.exit_code == 0, r.output
    assert "--cp-comm-type a2a" in out.read_text()
    r = runner.invoke(app, ["import", "--from", "megatron", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["parallel"]["cp_comm"] == "a2a"
    r, out = _export(tmp_path, "deepspeed", "--cp", "4", "--zero-stage", "3", "--recompute", "full")
    assert r.exit_code == 0, r.output
    cfg = json.loads(out.read_text())
    assert cfg["sequence_parallel_size"] == 4 and "train_batch_size" not in cfg
    r = runner.invoke(app, ["import", "--from", "deepspeed", str(out)])
    assert r.exit_code == 0, r.output
    p = json.loads(r.stdout)["parallel"]
    assert (p["cp"], p["cp_comm"], p["dp"]) == (4, "a2a", 2)


def test_configs_that_cannot_say_it_refuse(tmp_path):
    # Transformer Engine's a2a splits the KV heads over cp and does not replicate them: a DeepSpeed-priced plan
    # with 8 KV heads at cp 16 is refused by the Megatron-LM exporter
    r, _ = _export(tmp_path, "megatron", "--devices", "16", "--cp", "16", "--cp-comm", "a2a", "--framework",
                   "hf-deepspeed", "--zero-stage", "3", "--recompute", "full")
    assert r.exit_code == 2 and "Transformer Engine's a2a" in r.output
    # torchtitan has no Ulysses: refused naming the field
    r, _ = _export(tmp_path, "torchtitan", "--cp", "4", "--cp-comm", "a2a")
    assert r.exit_code == 2 and "cp_comm" in r.output
    # a Megatron-LM script whose layers mix exchanges is refused on import
    script = tmp_path / "mixed.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py --context-parallel-size 2 --cp-comm-type p2p a2a "
                      "--micro-batch-size 1 --global-batch-size 8 --num-layers 2\n")
    r = runner.invoke(app, ["import", "--from", "megatron", str(script)])
    assert r.exit_code == 2 and "differs between layers" in r.output


def test_mla_sends_up_projected_heads():
    # MLA (DeepSeek-V2-Lite: 16 heads, Q/K head width 128 + 64 = 192, V head width 128): Ulysses re-shards the
    # per-head Q, K (192 wide) and V, output (128 wide), every head a KV head; at tp 1, cp 2, seq 4096, mbs 1,
    # bf16: u = 2,048 tokens; Q and K payloads 2 x 2048 x 16 x 192 = 12,582,912 B, V and output 2 x 2048 x 16 x
    # 128 = 8,388,608 B, half of each sent
    m = MODELS["deepseek-v2-lite"]
    e = estimate(m, H100, _training(seq=4096, gbs=8), ParallelConfig(cp=2, cp_comm="a2a", ep=2, zero_stage=1), 8)
    per_call = {c.tensor: c.bytes_per_device / c.count for c in e.collectives if c.axis == "cp" and c.phase == "fwd"}
    assert per_call == pytest.approx({"q": 6_291_456, "k": 6_291_456, "v": 4_194_304, "out": 4_194_304})


def test_an_imported_plan_is_priced_with_its_framework(tmp_path):
    # export (priced with hf-deepspeed, --to deepspeed's default) -> ds_config -> import (framework hf-deepspeed:
    # sequence_parallel_size is the Hugging Face integration's Ulysses) -> estimate --plan without --framework prices
    # with the plan's hf-deepspeed profile, not megatron
    r, out = _export(tmp_path, "deepspeed", "--cp", "4", "--zero-stage", "3", "--recompute", "full")
    assert r.exit_code == 0, r.output
    plan = tmp_path / "plan.json"
    assert runner.invoke(app, ["import", "--from", "deepspeed", str(out), "-o", str(plan)]).exit_code == 0
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "--plan", str(plan), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["training"]["framework"].startswith("hf-deepspeed") and d["parallel"]["cp_comm"] == "a2a"
    assert "--framework hf-deepspeed from --plan" in " ".join(r.stderr.split())


def test_hf_deepspeed_runs_autotp_alone():
    # DeepSpeed AutoTP shards the linear layers only (no Megatron sequence parallelism) and the Hugging Face
    # Ulysses integration runs without AutoTP: both refused under hf-deepspeed, naming the legal values, and the
    # search never ranks them (the DeepSpeed export refuses the same two)
    tr = _training("hf-deepspeed", seq=8192, gbs=8)
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(tp=2, sp=True, zero_stage=1), L8B, tr, 8)
    assert err.value.field == "sp" and "legal sp: False" in str(err.value)
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(tp=2, cp=2, cp_comm="a2a", zero_stage=1), L8B, tr, 8)
    assert err.value.field == "tp" and "legal tp with cp=2: 1" in str(err.value)
    validate(ParallelConfig(tp=2, zero_stage=1), L8B, tr, 8)
    validate(ParallelConfig(cp=2, cp_comm="a2a", zero_stage=1), L8B, tr, 8)
    res = search(L8B, H100, tr, 8, top_k=200)
    assert res.plans and not any(p.parallel.tp > 1 and (p.parallel.sp or p.parallel.cp > 1) for p in res.plans)
    assert any(p.parallel.tp > 1 for p in res.plans) and any(p.parallel.cp > 1 for p in res.plans)


def test_train_header_says_how_cp_attention_runs():
    # tiny-llama: 2 KV heads; at cp 4 Ulysses copies each twice (one per cp rank); at cp 2 none; ring / allgather named
    from shardplan.cli.train import _cp_attention_line
    tiny = MODELS["tiny-llama"]
    assert "copied 2x" in _cp_attention_line(tiny, ParallelConfig(cp=4, cp_comm="a2a"), "a2a")
    assert "copied" not in _cp_attention_line(tiny, ParallelConfig(cp=2, cp_comm="a2a"), "a2a")
    assert "K/V ring" in _cp_attention_line(tiny, ParallelConfig(cp=2), "ring")
    assert _cp_attention_line(tiny, ParallelConfig(), "ring") is None
