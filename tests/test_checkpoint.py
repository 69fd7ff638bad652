"""Checkpoint / resume with Orbax (shardplan.jax.checkpoint) on 8 simulated CPU devices.

One continuous 4-step FSDP run is the reference; a run interrupted after its step-2 checkpoint and
resumed must reproduce it exactly on the same layout, and within fp32 tolerance on other meshes
(dp=4 x tp=2, and pp=2 x dp=4 which needs the pipeline stacking conversion both ways).
"""

import json

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("orbax.checkpoint")
optax = pytest.importorskip("optax")

from shardplan.errors import ConfigError  # noqa: E402
from shardplan.jax.checkpoint import Checkpointer, leaf_specs, to_numpy  # noqa: E402
from shardplan.jax.data import PackedBatches, load_tokens, shard_batch  # noqa: E402
from shardplan.jax.train import TrainConfig, Trainer, train  # noqa: E402
from shardplan.parallel import ParallelConfig, validate  # noqa: E402
from shardplan.presets.models import MODELS  # noqa: E402
from shardplan.specs.training import TrainingSpec  # noqa: E402

pytestmark = pytest.mark.slow

TINY = MODELS["tiny-llama"]
TR = TrainingSpec(seq_len=32, global_batch_size=16)
CFG = TrainConfig(steps=4, compute_dtype="float32")


class Preempted(Exception):
    pass


def _preempt_at(step):
    def on_step(rec):
        if rec["step"] == step:
            raise Preempted(step)
    return on_step


def _restore(directory, trainer, step=None):
    ck = Checkpointer(directory)
    try:
        return ck.restore(trainer, step)
    finally:
        ck.close()


@pytest.fixture(scope="module")
def batches():
    return PackedBatches(load_tokens(), TR.seq_len, TR.global_batch_size, seed=0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """FSDP (zero_stage=3): continuous 4 steps (dir a), and 2 steps + preemption + resume (dir b)."""
    root = tmp_path_factory.mktemp("ckpt")
    layout = validate(ParallelConfig(zero_stage=3), TINY, TR, 8)
    tr = Trainer(TINY, layout, TR, CFG)
    cont = train(TINY, layout, TR, trainer=tr, checkpoint_dir=root / "a")
    with pytest.raises(Preempted):
        train(TINY, layout, TR, trainer=tr, checkpoint_dir=root / "b", save_every=2, on_step=_preempt_at(2))
    resumed = train(TINY, layout, TR, trainer=tr, checkpoint_dir=root / "b", resume=True)
    return dict(root=root, trainer=tr, layout=layout, cont=cont, resumed=resumed)


def test_resume_same_layout_is_exact(runs):
    cont, resumed = runs["cont"], runs["resumed"]
    assert [r["step"] for r in cont] == [1, 2, 3, 4]
    assert [r["step"] for r in resumed] == [3, 4]  # step counter and data position continue
    np.testing.assert_allclose([r["loss"] for r in resumed], [r["loss"] for r in cont[2:]], rtol=1e-6, atol=0)
    ck = Checkpointer(runs["root"] / "b")
    assert ck.steps() == [2, 4]
    meta = ck.read_meta(2)
    ck.close()
    assert meta["step"] == 2 and meta["data"]["position"] == 2 and meta["plan"]["zero_stage"] == 3
    assert meta["model"]["name"] == "tiny-llama" and meta["mesh"]["fsdp"] == 8
    assert meta["leaves"]["layers/0/attn/wqkv"] == {"shape": [64, 2, 4, 16], "dtype": "float32",
                                                    "logical": ["embed", "kv_heads", "qkv", "head_dim"]}
    a, _ = _restore(runs["root"] / "a", runs["trainer"])
    b, _ = _restore(runs["root"] / "b", runs["trainer"])
    na, nb = to_numpy(a), to_numpy(b)
    assert set(na) == set(nb)
    for k in na:  # params and both Adam moments, bit for bit
        np.testing.assert_array_equal(na[k], nb[k], err_msg=k)


def _check_layout(state, trainer):
    params, opt = state
    specs = leaf_specs(params)
    mu, nu = leaf_specs(optax.tree_utils.tree_get(opt, "mu")), leaf_specs(optax.tree_utils.tree_get(opt, "nu"))
    assert set(specs) == set(trainer.leaves)
    for path, leaf in trainer.leaves.items():
        assert specs[path] == leaf.param_spec, path
        assert mu[path] == leaf.opt_spec == nu[path], path
    for x in jax.tree.leaves(state):
        assert x.sharding.mesh == trainer.mesh


def test_restore_onto_other_meshes(runs, batches, tmp_path):
    """fsdp=8 step 2 -> dp=4 x tp=2 and -> pp=2 x dp=4 (1F1B: embedding / head stacked over pp); then pp=2 step 3
    -> dp=4 x tp=2 and -> pp=2 GPipe (replicated embedding / head), whose step 4 -> pp=2 1F1B again."""
    cont = [r["loss"] for r in runs["cont"]]
    tp = Trainer(TINY, validate(ParallelConfig(tp=2), TINY, TR, 8), TR, CFG)
    state, meta = _restore(runs["root"] / "b", tp, step=2)
    assert meta["step"] == 2
    _check_layout(state, tp)
    assert leaf_specs(state[0])["layers/0/attn/wqkv"] == jax.sharding.PartitionSpec(None, "tp", None, None)
    _, met = tp.step(state, shard_batch(batches.batch(2), tp.mesh))
    np.testing.assert_allclose(float(met["loss"]), cont[2], rtol=2e-5, atol=2e-5)

    pp = Trainer(TINY, validate(ParallelConfig(pp=2), TINY, TR, 8), TR, CFG)
    state, _ = _restore(runs["root"] / "b", pp, step=2)  # layers/<i>/... -> stages/... (2, 1, ...)
    _check_layout(state, pp)
    assert state[0]["stages"]["attn"]["wqkv"].shape == (2, 1, 64, 2, 4, 16)
    # the executed 1F1B: embedding on stage 0, LM head (transposed) on stage 1, as one (pp, V, h) table
    table = np.asarray(jax.device_get(state[0]["boundary"]["table"]))
    assert table.shape == (2, 256, 64) and "embed" not in state[0] and "lm_head" not in state[0]
    assert leaf_specs(state[0])["boundary/table"][0] == "pp"
    state, met = pp.step(state, shard_batch(batches.batch(2), pp.mesh))
    np.testing.assert_allclose(float(met["loss"]), cont[2], rtol=2e-5, atol=2e-5)
    ck = Checkpointer(tmp_path / "pp")
    ck.save(3, state, pp)
    ck.close()
    state, meta = _restore(tmp_path / "pp", tp)  # stages/... -> layers/<i>/...
    assert meta["stacked"] and meta["plan"]["pp"] == 2
    _check_layout(state, tp)
    _, met = tp.step(state, shard_batch(batches.batch(3), tp.mesh))
    np.testing.assert_allclose(float(met["loss"]), cont[3], rtol=2e-5, atol=2e-5)
    # the same checkpoint onto GPipe (same stages, embedding / head replicated over pp) and back to 1F1B
    gp = Trainer(TINY, validate(ParallelConfig(pp=2, schedule="gpipe"), TINY, TR, 8), TR, CFG)
    state, meta = _restore(tmp_path / "pp", gp)
    assert meta["boundary"] and "boundary" not in state[0] and state[0]["lm_head"].shape == (64, 256)
    _check_layout(state, gp)
    state, met = gp.step(state, shard_batch(batches.batch(3), gp.mesh))
    np.testing.assert_allclose(float(met["loss"]), cont[3], rtol=2e-5, atol=2e-5)
    ck = Checkpointer(tmp_path / "gp")
    ck.save(4, state, gp)
    ck.close()
    _, met_gp = gp.step(state, shard_batch(batches.batch(4), gp.mesh))
    state, meta = _restore(tmp_path / "gp", pp)
    assert not meta["boundary"] and state[0]["boundary"]["table"].shape == (2, 256, 64)
    _, met = pp.step(state, shard_batch(batches.batch(4), pp.mesh))
    np.testing.assert_allclose(float(met["loss"]), float(met_gp["loss"]), rtol=2e-5, atol=2e-5)


def test_restore_across_the_qkv_layouts(runs, batches, tmp_path):
    """fsdp=8 (Q/K/V fused) step 2 -> tp=4 with KV-head replication (wq/wk/wv split) and back: the
    conversion is exact, so the next step's loss is the uninterrupted run's."""
    cont = [r["loss"] for r in runs["cont"]]
    rep = Trainer(TINY, validate(ParallelConfig(tp=4, kv_replication=True), TINY, TR, 8), TR, CFG)
    assert not rep.fused_qkv
    state, _ = _restore(runs["root"] / "b", rep, step=2)
    _check_layout(state, rep)
    assert state[0]["layers"][0]["attn"]["wq"].shape == (64, 4, 16) and "wqkv" not in state[0]["layers"][0]["attn"]
    state, met = rep.step(state, shard_batch(batches.batch(2), rep.mesh))
    np.testing.assert_allclose(float(met["loss"]), cont[2], rtol=2e-5, atol=2e-5)
    ck = Checkpointer(tmp_path / "rep")
    ck.save(3, state, rep)
    ck.close()
    state, _ = _restore(tmp_path / "rep", runs["trainer"])  # split -> fused
    _check_layout(state, runs["trainer"])
    _, met = runs["trainer"].step(state, shard_batch(batches.batch(3), runs["trainer"].mesh))
    np.testing.assert_allclose(float(met["loss"]), cont[3], rtol=2e-5, atol=2e-5)


def test_resume_errors(runs, tmp_path):
    layout, d = runs["layout"], runs["root"] / "b"
    wide = TINY.model_copy(update={"ffn_dim": 256, "name": "tiny-wide"})
    with pytest.raises(ConfigError, match=r"ffn_dim: 128 -> 256") as e:
        train(wide, validate(ParallelConfig(zero_stage=3), wide, TR, 8), TR, CFG, checkpoint_dir=d, resume=True)
    assert e.value.field == "ffn_dim"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no checkpoint") as e:
        train(TINY, layout, TR, CFG, checkpoint_dir=tmp_path / "empty", resume=True)
    assert e.value.field == "checkpoint_dir"
    with pytest.raises(ConfigError, match="does not exist"):
        train(TINY, layout, TR, CFG, checkpoint_dir=tmp_path / "missing", resume=True)
    with pytest.raises(ConfigError, match="needs a checkpoint directory"):
        train(TINY, layout, TR, CFG, resume=True)
    with pytest.raises(ConfigError, match="already holds checkpoints"):
        train(TINY, layout, TR, CFG, checkpoint_dir=d)
    with pytest.raises(ConfigError, match="already at step 4") as e:
        train(TINY, layout, TR, CFG, checkpoint_dir=d, resume=True)
    assert e.value.field == "steps"
    with pytest.raises(ConfigError, match="seed=1 differs") as e:
        train(TINY, layout, TR, TrainConfig(steps=8, seed=1), checkpoint_dir=d, resume=True)
    assert e.value.legal == [0]
    with pytest.raises(ConfigError, match="save_every=0"):
        train(TINY, layout, TR, CFG, checkpoint_dir=tmp_path / "x", save_every=0)


def test_cli_checkpoint_and_resume(tmp_path, runs):
    from typer.testing import CliRunner

    from shardplan.cli import app
    runner = CliRunner()
    d, metrics = tmp_path / "ck", tmp_path / "m.jsonl"
    base = ["train", "--model", "tiny-llama", "--devices", "8", "--tp", "2", "--seq-len", "32", "--global-batch",
            "16", "--compute-dtype", "fp32", "--metrics", str(metrics), "--checkpoint-dir", str(d)]
    res = runner.invoke(app, ["train", "--model", "tiny-llama", "--resume", "--checkpoint-dir", str(tmp_path / "no")])
    assert res.exit_code == 2 and "does not exist" in res.output, res.output
    res = runner.invoke(app, base + ["--steps", "2"])
    assert res.exit_code == 0, res.output
    assert [json.loads(x)["step"] for x in metrics.read_text().splitlines()] == [1, 2]
    res = runner.invoke(app, base + ["--steps", "4", "--resume"])
    assert res.exit_code == 0, res.output
    assert "resuming from step 2" in res.output
    recs = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert [r["step"] for r in recs] == [1, 2, 3, 4]
    # the first run's schedule spans 2 steps, the reference's 4: only lr(0) is the same, and the loss of
    # step k is computed before step k's update, so steps 1 and 2 match the reference
    np.testing.assert_allclose([r["loss"] for r in recs[:2]], [r["loss"] for r in runs["cont"][:2]],
                               rtol=2e-5, atol=2e-5)
    ck = Checkpointer(d)
    assert ck.steps() == [2, 4]
    ck.close()


def test_resume_from_an_interrupted_save_says_so(tmp_path):
    # Orbax writes a step into "<step>.orbax-checkpoint-tmp-<time>" and renames it when complete (issue 15)
    (tmp_path / "4.orbax-checkpoint-tmp-1234").mkdir()
    reader = Checkpointer(tmp_path)
    try:
        with pytest.raises(ConfigError, match="checkpoint 4 .* is incomplete"):
            reader.read_meta()
    finally:
        reader.close()
