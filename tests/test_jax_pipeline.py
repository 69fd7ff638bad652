"""Pipeline parallelism (pp > 1) on 8 simulated CPU devices: GPipe over the ``pp`` mesh axis.

tiny-llama scaled to 4 layers trains 3 steps in fp32 with pp=2 x dp=4, pp=4 x dp=2,
pp=2 x fsdp=2 x tp=2 (ZeRO-3) and an uneven split pp_layers=(3, 1); the losses must equal
single-device training, and the stacked block parameters must be sharded over ``pp``.
"""

import json

import numpy as np
import pytest

from _jax_helpers import run_steps as _run_steps

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
from jax.sharding import PartitionSpec as P  # noqa: E402

from shardplan.errors import ConfigError  # noqa: E402
from shardplan.jax.data import PackedBatches, load_tokens, shard_batch  # noqa: E402
from shardplan.jax.pipeline import check_pipeline, decay_mask, layout_params, slot_mask  # noqa: E402
from shardplan.jax.train import TrainConfig, Trainer  # noqa: E402
from shardplan.parallel import ParallelConfig, validate  # noqa: E402
from shardplan.presets.models import MODELS  # noqa: E402
from shardplan.specs.training import TrainingSpec  # noqa: E402

pytestmark = pytest.mark.slow

TINY4 = MODELS["tiny-llama"].model_copy(update={"n_layers": 4, "name": "tiny-llama-4l"})
TR = TrainingSpec(seq_len=32, global_batch_size=16)
CFG = TrainConfig(steps=3, compute_dtype="float32")

# name: (ParallelConfig kwargs, mesh (pp, dp, fsdp, tp),
#        spec of stages/attn/wqkv (pp, L, embed, kv_heads, qkv, head_dim))
CASES = {
    "pp2-dp4": (dict(pp=2), (2, 4, 1, 1), P("pp", None, None, None, None, None)),
    "pp4-dp2": (dict(pp=4), (4, 2, 1, 1), P("pp", None, None, None, None, None)),
    "pp2-fsdp2-tp2": (dict(pp=2, tp=2, zero_stage=3), (2, 1, 2, 2), P("pp", None, "fsdp", "tp", None, None)),
    "pp2-uneven-3-1": (dict(pp=2, pp_layers=(3, 1), schedule="gpipe"), (2, 4, 1, 1),
                       P("pp", None, None, None, None, None)),
}


@pytest.fixture(scope="module")
def batches():
    return PackedBatches(load_tokens(), TR.seq_len, TR.global_batch_size, seed=0)


def run_steps(tr, batches, n=3):
    """Shared helper with this file's default step count."""
    return _run_steps(tr, batches, n)


@pytest.fixture(scope="module")
def reference(batches):
    lay = validate(ParallelConfig(dp=1), TINY4, TR, 1)
    return run_steps(Trainer(TINY4, lay, TR, CFG, devices=jax.devices()[:1]), batches)[1]


def _specs(tree):
    return {"/".join(str(getattr(k, "key", k)) for k in kp): leaf.sharding.spec
            for kp, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]}


@pytest.mark.parametrize("name", list(CASES))
def test_pipeline_matches_single_device(name, batches, reference):
    kw, mesh, wq_spec = CASES[name]
    layout = validate(ParallelConfig(**kw), TINY4, TR, 8)
    tr = Trainer(TINY4, layout, TR, CFG)
    assert tuple(tr.mesh.shape[a] for a in ("pp", "dp", "fsdp", "tp")) == mesh
    assert tr.pipeline is not None and "GPipe" in tr.pipeline.note
    state, losses = run_steps(tr, batches)
    np.testing.assert_allclose(losses, reference, rtol=2e-5, atol=2e-5)
    params, opt = state
    specs, mu = _specs(params), _specs(optax.tree_utils.tree_get(opt, "mu"))
    assert set(specs) == set(tr.leaves) and not any(p.startswith("layers/") for p in specs)
    for path, leaf in tr.leaves.items():
        assert specs[path] == leaf.param_spec and mu[path] == leaf.opt_spec, path
        if path.startswith("stages/"):
            assert specs[path][0] == "pp", path  # stage dimension on the pp axis
        else:
            assert "pp" not in jax.tree.leaves(tuple(specs[path])), path  # embed / head replicated over pp
    assert specs["stages/attn/wqkv"] == wq_spec
    lmax = max(layout.stage_layers)
    assert params["stages"]["attn"]["wqkv"].shape == (layout.parallel.pp, lmax, 64, 2, 4, 16)
    hlo = tr.compiled.as_text()
    assert "collective-permute" in hlo  # the ppermute between stages
    if name == "pp2-uneven-3-1":
        # stage 1 holds 1 layer in 3 slots: the 2 padding slots stay exactly zero through training
        wq = np.asarray(jax.device_get(params["stages"]["attn"]["wqkv"]))
        assert np.all(wq[1, 1:] == 0) and np.all(wq[1, 0] != 0) and np.all(wq[0] != 0)
        assert "2 masked padding slot(s)" in tr.pipeline.note
    else:
        assert "'1f1b' is executed as GPipe" in tr.pipeline.note


def test_stacked_layout_helpers():
    lay = validate(ParallelConfig(pp=2, pp_layers=(3, 1)), TINY4, TR, 8)
    assert slot_mask(lay.stage_layers).tolist() == [[True, True, True], [True, False, False]]
    params, logical = layout_params(TINY4, lay)
    assert "layers" not in params and params["stages"]["mlp"]["w_gate_up"].shape == (2, 3, 64, 2, 128)
    assert logical["stages"]["mlp"]["w_gate_up"] == ("layers", None, "embed", "gate_up", "mlp")
    mask = decay_mask(params)  # weight decay on matrices only, counted without the 2 stacking dims
    assert mask["stages"]["mlp"]["w_gate_up"] and not mask["stages"]["attn_norm"]["scale"]
    assert mask["embed"] and not mask["final_norm"]["scale"]
    # pp=1 keeps the per-layer layout
    params1, _ = layout_params(TINY4, validate(ParallelConfig(), TINY4, TR, 8))
    assert "stages" not in params1 and len(params1["layers"]) == 4


def test_pipeline_refusals():
    moe = MODELS["tiny-moe"].model_copy(update={"n_layers": 4, "n_dense_layers": 1})
    lay = validate(ParallelConfig(pp=2), moe, TR, 8)
    with pytest.raises(ConfigError, match="mixes 1 dense and 3 MoE blocks") as e:
        check_pipeline(moe, lay)
    assert e.value.field == "pp" and e.value.legal == [1]
    # an uneven split without pp_layers is chosen automatically: 4 layers over pp=3 -> (1, 2, 1)
    lay = validate(ParallelConfig(pp=3, dp=2), TINY4, TrainingSpec(seq_len=32, global_batch_size=6), 6)
    assert lay.stage_layers == (1, 2, 1)


def test_cli_train_pp(tmp_path):
    from typer.testing import CliRunner

    from shardplan.cli import app
    metrics = tmp_path / "m.jsonl"
    # default bf16 compute: the pp all-reduces must stay fp32 (XLA:CPU aborts on bf16 ones there)
    res = CliRunner().invoke(app, ["train", "--model", "tiny-llama", "--devices", "8", "--pp", "2", "--steps", "2",
                                   "--seq-len", "32", "--global-batch", "16", "--metrics", str(metrics)])
    assert res.exit_code == 0, res.output
    assert "pp=2 dp=4" in res.output and "GPipe over pp=2 stages" in res.output
    recs = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert len(recs) == 2 and recs[1]["loss"] < recs[0]["loss"]
