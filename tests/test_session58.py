"""Findings of the fifty-eighth session: each test fails on the behaviour before the fix."""

import json

import pytest


def _cli(args):
    from typer.testing import CliRunner

    from shardplan.cli import app
    return CliRunner().invoke(app, args)


def _llama_cfg(**extra):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
           "max_position_embeddings": 2048, "tie_word_embeddings": False}
    return {**cfg, **extra}


@pytest.mark.parametrize("key", ["hidden_act", "hidden_activation", "activation_function"])
def test_unknown_activation_is_refused_with_the_legal_names(tmp_path, key):
    # transformers' ACT2FN[name] raises KeyError on a name it does not build; the planner read such a config silently
    p = tmp_path / "config.json"
    p.write_text(json.dumps(_llama_cfg(**{key: "swishh"})))
    r = _cli(["estimate", "-m", str(p), "-H", "h100-sxm", "-n", "8", "-s", "512", "-b", "8"])
    assert r.exit_code == 2, r.output
    assert f"{key}='swishh'" in r.output and "silu" in r.output and "gelu_pytorch_tanh" in r.output


def test_known_activations_still_load(tmp_path):
    from shardplan.loaders import load_model
    for act in ("silu", "gelu_pytorch_tanh", "relu2", "gelu_new"):
        p = tmp_path / f"{act}.json"
        p.write_text(json.dumps(_llama_cfg(hidden_act=act)))
        # 2 layers x (attention 256 x (256 + 2 x 128 + 256) + SwiGLU 3 x 256 x 512 + 2 norms 256) + 2 x 1024 x 256
        # + final norm 256 = 2 x (196,608 + 393,216 + 512) + 524,288 + 256 = 1,705,216
        assert load_model(str(p)).n_params == 1_705_216


def _mixtral_estimate(global_batch_size=16, **parallel):
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=4096, global_batch_size=global_batch_size)
    return estimate(MODELS["mixtral-8x7b"], HARDWARE["h100-sxm"], tr, ParallelConfig(**parallel), 16)


def test_routed_tokens_kept_after_the_expert_tp_gather():
    # Megatron-Core's alltoall dispatcher all-gathers the dispatched tokens over the expert-tp group before the experts,
    # and the first grouped GEMM keeps the gathered rows: with etp = tp = 2 a rank keeps twice the routed tokens that
    # etp = 1 keeps (the planner divided by tp in both cases)
    from shardplan.cost.memory import routed_token_bytes
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    model, tr = MODELS["mixtral-8x7b"], TrainingSpec(seq_len=4096, global_batch_size=16)
    b = {etp: routed_token_bytes(model, tr, validate(ParallelConfig(tp=2, sp=True, ep=8, etp=etp), model, tr, 16))
         for etp in (1, 2)}
    # per local token, bf16, top 2, h 4096, one copy (megatron profile): etp 1: 2 x 2 x 4096 / 2 = 8,192 B;
    # etp 2: x 2 = 16,384 B
    assert b[1] == 8_192 and b[2] == 16_384


def test_folding_the_experts_off_tp_is_faster_when_top_k_grows():
    # MoE Parallel Folding (Liu et al. 2025) measures etp 1 faster than etp = tp; the planner priced the two equal.
    # With etp = tp the dispatcher's exposed gathers move top_k copies per token: the gain must show
    # (global batch 256: etp 1 adds an expert data-parallel group of 2 across the nodes, whose per-step gradient
    # AllReduce a 16-sequence batch cannot hide)
    e_tp = _mixtral_estimate(256, tp=2, sp=True, ep=8, tp_overlap=True)
    e_1 = _mixtral_estimate(256, tp=2, sp=True, ep=8, etp=1, tp_overlap=True)
    tokens = [c for c in e_tp.collectives if c.tensor == "tokens" and c.axis == "tp"]
    # the dispatcher rows are all exposed: 4 calls per MoE layer (see test_arch_costs), and they are what etp 1 saves
    # beside the AllToAll, which leaves the node with etp = tp (ep 8 ranks 2 apart) and stays in it with etp 1
    a2a = {etp: sum(c.exposed_s for c in e.collectives if c.axis == "ep") for etp, e in ((2, e_tp), (1, e_1))}
    saved = sum(c.exposed_s for c in tokens) + a2a[2] - a2a[1]
    assert all(c.exposed_s == c.time_s for c in tokens) and e_1.step_s < e_tp.step_s
    assert e_tp.step_s - e_1.step_s == pytest.approx(saved, rel=0.25)


def test_allgather_dispatcher_does_not_also_charge_the_tp_gather():
    # Megatron's allgather dispatcher gathers the tokens over etp x ep itself (ep module); the tp module charged the MoE
    # layers' sequence-parallel MLP rows on top of it
    e = _mixtral_estimate(tp=2, sp=True, ep=4, moe_dispatcher="allgather")
    tp_layer = [c for c in e.collectives if c.axis == "tp" and c.scope == "layers" and c.phase != "step"]
    # 32 MoE layers: only the 5 attention rows per layer remain over tp, 2 microbatches (16 sequences / dp 8)
    assert sum(c.count for c in tp_layer) == 5 * 32 * 2


def test_deepep_with_expert_tp_sends_to_every_expert_tp_rank():
    # Megatron-Core's flex (DeepEP) dispatcher runs over the tp x ep group with tp x top_k copies and no separate
    # expert-tp gather; the planner priced a gather over tp on top of an ep-only dispatch
    e = _mixtral_estimate(tp=2, sp=True, ep=4, moe_dispatcher="deepep")
    assert not [c for c in e.collectives if c.tensor == "tokens" and c.axis == "tp"]
    a2a = [c for c in e.collectives if c.axis == "ep"]
    assert {c.group_size for c in a2a} == {8} and {c.level for c in a2a} == {"NVLink"}
    # payload: bf16 x (4,096 / tp 2) tokens x top 2 x h 4,096 = 33,554,432 B, x etp 2 copies, x DeepEP's share in one
    # node: ranks hit / top_k = 4 (1 - C(6, 2) / C(8, 2)) / 2 = 13/14; an AllToAll moves (n - 1) / n of it, n = 8
    per_call = 33_554_432 * 2 * 13 / 14 * 7 / 8
    assert a2a[0].bytes_per_device / a2a[0].count == pytest.approx(per_call)
