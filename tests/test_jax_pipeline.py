"""Pipeline parallelism (pp > 1) on 8 simulated CPU devices: 1F1B and GPipe over the ``pp`` mesh axis.

tiny-llama scaled to 4 layers trains 3 steps in fp32 under the executed 1F1B schedule (explicit
per-stage vjp) with pp=2 x dp=4, pp=4 x dp=2, pp=2 x fsdp=2 x tp=2 (ZeRO-3), pp=2 x dp=2 x tp=2,
fewer microbatches than stages, and under GPipe with an uneven split pp_layers=(3, 1); the losses
and the updated parameters must equal single-device training, and the stacked block parameters
must be sharded over ``pp``. The executed 1F1B order is checked against the planner's schedule
simulator, and its compiled temp memory against GPipe's.
"""

import json

import numpy as np
import pytest

from _jax_helpers import run_steps as _run_steps

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
from jax.sharding import PartitionSpec as P  # noqa: E402

from shardplan.cost.pipeline_schedule import rank_orders  # noqa: E402
from shardplan.errors import ConfigError  # noqa: E402
from shardplan.jax.data import PackedBatches, load_tokens, shard_batch  # noqa: E402
from shardplan.jax.checkpoint import saved_placement, unstack_params  # noqa: E402
from shardplan.jax.pipeline import (boundary_tables, check_pipeline, decay_mask, interleaved_placement,  # noqa: E402
                                    layout_params, layout_placement, one_f_one_b_permutation, one_f_one_b_slots,
                                    one_f_one_b_work, slot_mask, stack_params)
from shardplan.pipeline_program import interleaved_table  # noqa: E402
from shardplan.jax.train import TrainConfig, Trainer  # noqa: E402
from shardplan.parallel import ParallelConfig, validate  # noqa: E402
from shardplan.presets.models import MODELS  # noqa: E402
from shardplan.presets.frameworks import JAX_RUNTIME  # noqa: E402
from shardplan.specs.training import TrainingSpec  # noqa: E402

pytestmark = pytest.mark.slow

TINY4 = MODELS["tiny-llama"].model_copy(update={"n_layers": 4, "name": "tiny-llama-4l"})
# the runtime's plans are priced with the jax-runtime profile, as `shardplan train` / `validate` do (the default
# megatron profile refuses ZeRO-3 with pp > 1: Megatron-FSDP does not pipeline)
TR = TrainingSpec(seq_len=32, global_batch_size=16, framework=JAX_RUNTIME)
CFG = TrainConfig(steps=3, compute_dtype="float32")

# name: (ParallelConfig kwargs, mesh (pp, dp, fsdp, tp), microbatches,
#        spec of stages/attn/wqkv (pp, L, embed, kv_heads, qkv, head_dim))
CASES = {
    "pp2-dp4": (dict(pp=2), (2, 4, 1, 1), 4, P("pp", None, None, None, None, None)),
    "pp4-dp2": (dict(pp=4), (4, 2, 1, 1), 8, P("pp", None, None, None, None, None)),
    "pp4-dp2-m2": (dict(pp=4, microbatch_size=4), (4, 2, 1, 1), 2, P("pp", None, None, None, None, None)),
    "pp2-fsdp2-tp2": (dict(pp=2, tp=2, zero_stage=3, microbatch_size=2), (2, 1, 2, 2), 4,
                      P("pp", None, "fsdp", "tp", None, None)),
    "pp2-dp2-tp2": (dict(pp=2, tp=2, microbatch_size=2), (2, 2, 1, 2), 4, P("pp", None, None, "tp", None, None)),
    "pp2-uneven-3-1-m1": (dict(pp=2, pp_layers=(3, 1), microbatch_size=4), (2, 4, 1, 1), 1,
                          P("pp", None, None, None, None, None)),
    "pp2-uneven-3-1-gpipe": (dict(pp=2, pp_layers=(3, 1), schedule="gpipe"), (2, 4, 1, 1), 4,
                             P("pp", None, None, None, None, None)),
    "pp2-dp4-interleaved": (dict(pp=2, schedule="interleaved", virtual_stages=2), (2, 4, 1, 1), 4,
                            P("pp", None, None, None, None, None)),
    "pp2-dp2-tp2-interleaved": (dict(pp=2, tp=2, schedule="interleaved", virtual_stages=2, microbatch_size=2),
                                (2, 2, 1, 2), 4,
                                P("pp", None, None, "tp", None, None)),
}


@pytest.fixture(scope="module")
def batches():
    return PackedBatches(load_tokens(), TR.seq_len, TR.global_batch_size, seed=0)


def run_steps(tr, batches, n=3):
    """Shared helper with this file's default step count."""
    return _run_steps(tr, batches, n)


def _grads(tr, batches):
    """(loss, gradients) of the first batch at the initial parameters, as the training step computes them."""
    from shardplan.jax.rules import activation_sharding

    with activation_sharding(tr.mesh, tr.rules):
        fn = jax.jit(tr._grads_gspmd, in_shardings=(tr.param_shardings, tr.batch_sharding))
        return fn(tr.init_state()[0], shard_batch(batches.batch(0), tr.mesh))[1]


@pytest.fixture(scope="module")
def reference(batches):
    """Single-device training: the losses of 3 steps and the first step's gradients."""
    lay = validate(ParallelConfig(dp=1), TINY4, TR, 1)
    tr = Trainer(TINY4, lay, TR, CFG, devices=jax.devices()[:1])
    return run_steps(tr, batches)[1], jax.device_get(_grads(tr, batches))


def _specs(tree):
    return {"/".join(str(getattr(k, "key", k)) for k in kp): leaf.sharding.spec
            for kp, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]}


@pytest.mark.parametrize("name", list(CASES))
def test_pipeline_matches_single_device(name, batches, reference):
    """Losses of 3 fp32 steps and the first step's gradients equal single-device training's."""
    kw, mesh, m, wq_spec = CASES[name]
    layout = validate(ParallelConfig(**kw), TINY4, TR, 8)
    assert layout.microbatches == m
    tr = Trainer(TINY4, layout, TR, CFG)
    assert tuple(tr.mesh.shape[a] for a in ("pp", "dp", "fsdp", "tp")) == mesh
    state, losses = run_steps(tr, batches)
    ref_losses, reference_grads = reference
    np.testing.assert_allclose(losses, ref_losses, rtol=2e-5, atol=2e-5)
    params, opt = state
    # the first step's gradients equal single-device training's, stacked per stage
    grads = jax.device_get(_grads(tr, batches))
    ref_grads = stack_params(reference_grads, layout_placement(layout), boundary_tables(layout))
    for (path, a), b in zip(jax.tree_util.tree_flatten_with_path(grads)[0], jax.tree_util.tree_leaves(ref_grads)):
        # fp32 summation-order noise: within 1e-3 of the leaf's largest gradient
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3 * np.abs(b).max(), err_msg=jax.tree_util.keystr(path))
    specs, mu = _specs(params), _specs(optax.tree_utils.tree_get(opt, "mu"))
    assert set(specs) == set(tr.leaves) and not any(p.startswith("layers/") for p in specs)
    for path, leaf in tr.leaves.items():
        assert specs[path] == leaf.param_spec and mu[path] == leaf.opt_spec, path
        if path.startswith("stages/") or path.startswith("boundary/"):
            assert specs[path][0] == "pp", path  # stage dimension on the pp axis
        else:
            assert "pp" not in jax.tree.leaves(tuple(specs[path])), path  # GPipe: embed / head replicated over pp
    # the executed 1F1B holds the embedding on stage 0 and the head on the last (a (pp, V, h) table over pp)
    assert ("boundary/table" in specs) == (kw.get("schedule") != "gpipe") and ("embed" in specs) != (
        "boundary/table" in specs)
    assert specs["stages/attn/wqkv"] == wq_spec
    lmax = max(layout.stage_layers)
    assert params["stages"]["attn"]["wqkv"].shape == (layout.parallel.pp, lmax, 64, 2, 4, 16)
    hlo = tr.compiled.as_text()
    assert "collective-permute" in hlo  # the ppermute between stages
    if name.startswith("pp2-uneven"):
        # stage 1 holds 1 layer in 3 slots: the 2 padding slots stay exactly zero through training
        wq = np.asarray(jax.device_get(params["stages"]["attn"]["wqkv"]))
        assert np.all(wq[1, 1:] == 0) and np.all(wq[1, 0] != 0) and np.all(wq[0] != 0)
        assert "2 masked padding slot(s)" in tr.pipeline.note
    if kw.get("schedule") == "gpipe":
        assert tr.pipeline.executed == "gpipe" and "GPipe over pp=2" in tr.pipeline.note
    else:
        assert tr.pipeline.executed == kw.get("schedule", "1f1b")
        assert ("interleaved 1F1B (Megatron, 2 chunks" if tr.pipeline.executed == "interleaved" else
                "1F1B (PipeDream-Flush") in tr.pipeline.note
        assert "executed as" not in tr.pipeline.note
        # bubble slots compute nothing: each slot's work is a per-device lax.switch branch
        assert "conditional" in hlo
        # ZeRO-0 with m > 1: the pipeline is manual over dp too and reduces the gradients once per step
        assert tr.local_axes == (("dp",) if m > 1 and mesh[1] > 1 else ())


def test_stacked_layout_helpers():
    lay = validate(ParallelConfig(pp=2, pp_layers=(3, 1)), TINY4, TR, 8)
    assert slot_mask(lay.stage_layers).tolist() == [[True, True, True], [True, False, False]]
    params, logical = layout_params(TINY4, lay)
    assert "layers" not in params and params["stages"]["mlp"]["w_gate_up"].shape == (2, 3, 64, 2, 128)
    assert logical["stages"]["mlp"]["w_gate_up"] == ("layers", None, "embed", "gate_up", "mlp")
    mask = decay_mask(params)  # weight decay on matrices only, counted without the 2 stacking dims
    assert mask["stages"]["mlp"]["w_gate_up"] and not mask["stages"]["attn_norm"]["scale"]
    # the executed 1F1B stacks the embedding / head table (rank 0: embedding, rank 1: head) and the final norm
    assert params["boundary"]["table"].shape == (2, 256, 64) and "embed" not in params and "lm_head" not in params
    assert logical["boundary"]["table"] == ("layers", "vocab", "embed")
    assert mask["boundary"]["table"] and not mask["boundary"]["final_norm"]["scale"]
    gp, _ = layout_params(TINY4, validate(ParallelConfig(pp=2, schedule="gpipe"), TINY4, TR, 8))
    assert "boundary" not in gp and gp["embed"].shape == (256, 64)
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
    assert "pp=2 dp=4" in res.output and "1F1B (PipeDream-Flush, explicit per-stage vjp) over pp=2" in res.output
    recs = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert len(recs) == 2 and recs[1]["loss"] < recs[0]["loss"]


@pytest.mark.parametrize("pp,m", [(2, 1), (2, 4), (3, 2), (3, 5), (4, 2), (4, 8)])
def test_one_f_one_b_slots_follow_the_planner_order(pp, m):
    """The executed slots give each rank the planner simulator's 1F1B order (warm-up, 1F1B, cool-down),
    every pass consumes what the previous slot's ppermute delivered, and stage k holds at most
    min(m, pp - k) microbatches in flight."""
    n = one_f_one_b_slots(pp, m)
    assert n == 2 * (m + pp - 1)
    sent = {}  # receiver -> (kind, microbatch) delivered after the previous slot
    done = {k: set() for k in range(pp)}
    for t in range(n):
        recv, sent = sent, {}
        for k in range(pp):
            is_f, fi, is_b, bi = one_f_one_b_work(pp, m, k, t)
            assert not (is_f and is_b)
            if is_f:
                assert k == 0 or recv.get(k) == ("F", fi), (t, k)  # stage k-1's output of this microbatch
                done[k].add(("F", fi))
                assert len({i for kind, i in done[k] if kind == "F"} - {i for kind, i in done[k] if kind == "B"}) \
                    <= min(m, pp - k)
            if is_b:
                assert (("F", bi) in done[k]) and (k == pp - 1 or recv.get(k) == ("B", bi)), (t, k)
                done[k].add(("B", bi))
        for src, dst in one_f_one_b_permutation(pp, t % 2):
            is_f, fi, is_b, bi = one_f_one_b_work(pp, m, src, t)
            if is_f or is_b:
                assert dst == (src + 1 if is_f else src - 1)
                sent[dst] = ("F", fi) if is_f else ("B", bi)
    for k in range(pp):
        order = []
        for t in range(n):
            is_f, fi, is_b, bi = one_f_one_b_work(pp, m, k, t)
            order += [("F", fi, 0)] if is_f else [("B", bi, 0)] if is_b else []
        assert order == rank_orders(pp, m, "1f1b")[k], k


def test_one_f_one_b_needs_less_temp_memory_than_gpipe():
    """Same plan, m = 2 pp: the executed 1F1B keeps min(m, pp) stage inputs (+ one stage's residuals
    while a backward runs), GPipe the residuals of all m + pp - 1 ticks; the interleaved 1F1B keeps
    at most pp v + pp - 1 chunk inputs (+ one chunk's residuals).

    Measured (jax 0.10.2, XLA:CPU, fp32, tiny-llama 4 layers, seq 32, global batch 16), compiled temp
    bytes per device: pp=2 x dp=4, m=4: GPipe 3,636,344, 1F1B 1,717,128, interleaved (v=2) 1,622,680;
    pp=4 x dp=2, m=8: GPipe 3,354,360, 1F1B 1,024,112.
    """
    temp = {}
    for pp, schedules in ((2, ("gpipe", "1f1b", "interleaved")), (4, ("gpipe", "1f1b"))):
        for schedule in schedules:
            kw = dict(virtual_stages=2) if schedule == "interleaved" else {}
            lay = validate(ParallelConfig(pp=pp, schedule=schedule, **kw), TINY4, TR, 8)
            assert lay.microbatches == 2 * pp
            temp[pp, schedule] = Trainer(TINY4, lay, TR, CFG).memory["temp"]
    for key, t in temp.items():
        assert key[1] == "gpipe" or t < 0.6 * temp[key[0], "gpipe"], temp


@pytest.mark.parametrize("pp,m,v", [(2, 2, 2), (2, 4, 2), (2, 4, 3), (3, 6, 2), (4, 4, 2), (4, 8, 2)])
def test_interleaved_table_follows_the_planner_order_and_delivers_every_input(pp, m, v):
    """The executed interleaved lock-step: each rank runs Megatron's interleaved order (the planner's
    simulator), and replaying the table's buffer rows and the two cyclic ppermutes with labels shows
    every pass reading its own chunk input / output cotangent (no row overwritten while live)."""
    tbl, nv = interleaved_table(pp, m, v), pp * v
    T = tbl.kind.shape[0]
    inp = [[None] * tbl.rows_in for _ in range(pp)]
    cot = [[None] * tbl.rows_cot for _ in range(pp)]
    order = [[] for _ in range(pp)]
    for t in range(T):
        out = [None] * pp
        for k in range(pp):
            kind, i, c = int(tbl.kind[t, k]), int(tbl.mb[t, k]), int(tbl.chunk[t, k])
            if kind == 0:
                continue
            j = c * pp + k
            order[k].append(("F" if kind == 1 else "B", i, c))
            if kind == 1 and j == 0:
                inp[k][tbl.in_row[t, k]] = ("x", 0, i)
            assert inp[k][tbl.in_row[t, k]] == ("x", j, i), (t, k)
            if kind == 2 and j < nv - 1:
                assert cot[k][tbl.cot_row[t, k]] == ("dy", j, i), (t, k)
            out[k] = ("x", j + 1, i) if kind == 1 else ("dy", j - 1, i)
        for k in range(pp):  # what the ppermutes deliver (k-1 -> k forward, k+1 -> k backward)
            if tbl.recv_f[t, k]:
                inp[k][tbl.recv_f_row[t, k]] = out[(k - 1) % pp]
            if tbl.recv_b[t, k]:
                cot[k][tbl.recv_b_row[t, k]] = out[(k + 1) % pp]
    assert order == rank_orders(pp, m, "interleaved", v)
    # Megatron's bound (Korthikanti et al. 2022 Sec. 4.2.3): rank 0 holds p (1 + (p-1)/(p v)) stage
    # activations, i.e. at most p v + p - 1 chunk inputs
    assert tbl.rows_in <= min(m * v, pp * v + pp - 1)
    # chunk slots: (m v + pp - 1) forwards and as many backwards of 1/v stage each (lock-step, t_b = t_f)
    assert T == 2 * (m * v + pp - 1)


def test_interleaved_placement_and_its_inverse():
    """Virtual stage j = c pp + k holds the j-th run of layers; unstacking inverts stacking."""
    assert interleaved_placement((2, 2), 2) == ((0, 2), (1, 3))
    assert interleaved_placement((3, 2), 2) == ((0, 1, 3, -1), (2, -1, 4, -1))  # chunks (2, 1) and (1, 1)
    lay = validate(ParallelConfig(pp=2, schedule="interleaved", virtual_stages=2), TINY4, TR, 8)
    assert layout_placement(lay) == ((0, 2), (1, 3))
    params = {"embed": np.zeros(2), "layers": {i: {"w": np.full((3,), float(i))} for i in range(4)}}
    stacked = stack_params(params, layout_placement(lay))
    assert stacked["stages"]["w"][:, :, 0].tolist() == [[0, 2], [1, 3]]
    back = unstack_params(stacked, layout_placement(lay))
    assert [float(back["layers"][i]["w"][0]) for i in range(4)] == [0, 1, 2, 3]
    # checkpoints record the slot table; older ones (stage_layers only) are contiguous
    assert saved_placement({"slot_layers": [[0, 2], [1, 3]], "stage_layers": [2, 2]}) == ((0, 2), (1, 3))
    assert saved_placement({"stage_layers": [3, 1]}) == (3, 1)


def test_interleaved_pp4_matches_single_device(batches):
    """8 layers, pp=4 x dp=2, v=2 (virtual stages 0..7 alternate over the ranks), m=4: 2 steps' losses and
    the first gradients equal single-device training's."""
    tiny8 = TINY4.model_copy(update={"n_layers": 8, "name": "tiny-llama-8l"})
    ref = Trainer(tiny8, validate(ParallelConfig(dp=1), tiny8, TR, 1), TR, CFG, devices=jax.devices()[:1])
    layout = validate(ParallelConfig(pp=4, schedule="interleaved", virtual_stages=2, microbatch_size=2), tiny8, TR, 8)
    assert layout.stage_layers == (2, 2, 2, 2) and layout.microbatches == 4
    tr = Trainer(tiny8, layout, TR, CFG)
    assert tr.pipeline.executed == "interleaved" and tr.pipeline.placement == ((0, 4), (1, 5), (2, 6), (3, 7))
    np.testing.assert_allclose(run_steps(tr, batches, 2)[1], run_steps(ref, batches, 2)[1], rtol=2e-5, atol=2e-5)
    grads, ref_grads = jax.device_get(_grads(tr, batches)), stack_params(jax.device_get(_grads(ref, batches)),
                                                                          tr.pipeline.placement, True)
    for a, b in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(ref_grads)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3 * np.abs(b).max())


def test_checkpoint_converts_interleaved_to_contiguous(batches, tmp_path):
    """A checkpoint of the interleaved placement (rank 0 holds layers 0 and 2) restores onto the
    contiguous 1F1B layout (rank 0 holds layers 0 and 1): the next step's loss is the same."""
    from shardplan.jax.checkpoint import Checkpointer

    inter = Trainer(TINY4, validate(ParallelConfig(pp=2, schedule="interleaved", virtual_stages=2), TINY4, TR, 8),
                    TR, CFG)
    state, _ = inter.step(inter.init_state(), shard_batch(batches.batch(0), inter.mesh))
    ck = Checkpointer(tmp_path / "ckpt")
    ck.save(1, state, inter)
    ck.close()
    _, met = inter.step(state, shard_batch(batches.batch(1), inter.mesh))
    one = Trainer(TINY4, validate(ParallelConfig(pp=2), TINY4, TR, 8), TR, CFG)
    ck = Checkpointer(tmp_path / "ckpt")
    restored, meta = ck.restore(one, 1)
    ck.close()
    assert meta["slot_layers"] == [[0, 2], [1, 3]] and one.pipeline.placement == (2, 2)
    _, met1 = one.step(restored, shard_batch(batches.batch(1), one.mesh))
    np.testing.assert_allclose(float(met1["loss"]), float(met["loss"]), rtol=2e-5, atol=2e-5)


def test_tied_embeddings_and_learned_positions_pp4(batches):
    """Tied embeddings + learned positions (GPT-2 style) on tiny-llama with 4 layers, pp=4 x dp=2, 1F1B: the
    first and last rank each hold the table and their gradients are summed over the embedding group (pp > 2:
    a swap of the two by one ppermute), the middle ranks' slices stay zero; the learned positions stay
    replicated over pp. 2 steps' losses equal single-device training's, and the two copies stay equal."""
    m = TINY4.model_copy(update={"tied_embeddings": True, "position": "learned", "max_position_embeddings": 64,
                                 "name": "tiny-gpt-4l"})
    ref = Trainer(m, validate(ParallelConfig(dp=1), m, TR, 1), TR, CFG, devices=jax.devices()[:1])
    tr = Trainer(m, validate(ParallelConfig(pp=4), m, TR, 8), TR, CFG)
    assert tr.pipeline.boundary and tr.pipeline.tied
    state, losses = run_steps(tr, batches, 2)
    np.testing.assert_allclose(losses, run_steps(ref, batches, 2)[1], rtol=2e-5, atol=2e-5)
    table = np.asarray(jax.device_get(state[0]["boundary"]["table"]))
    assert table.shape == (4, 256, 64) and "pos_embed" in state[0]
    np.testing.assert_array_equal(table[0], table[3])
    assert not table[1:3].any()
    assert "collective-permute" in tr.compiled.as_text()
