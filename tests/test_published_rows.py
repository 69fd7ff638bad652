"""Rows of a published-runs table that the shared set does not have: model names, hardware, sources
and empty columns a user's (or a held-out) table may use (shardplan.calibration)."""

import pytest

from shardplan.calibration import framework_of, load_rows, reproduce_row, resolve_model, row_inputs
from shardplan.errors import ConfigError
from shardplan.presets.models import MODELS

def published_row(**cols: str) -> dict:
    """A published-runs row: ``cols`` over empty DP, CP and global_batch_tokens columns (the planner fills
    them in) and tp = pp = 1."""
    return {"TP": "1", "PP": "1", "DP": "", "CP": "", "global_batch_tokens": "", **cols}


#: the dgxc-benchmarking Llama 3.1 70B BF16 run (NeMo 24.09, llama3.1/README_70b.md): 64 H100, TP4 PP4 CP2 VP5,
#: MBS 1, GBS 128, seq 8192, 14.72 s per step
ROW = published_row(id="dgxc_llama31_70b_bf16_64", source="NVIDIA dgxc-benchmarking (NeMo 24.09)",
                    model="Llama 3.1 70B", hardware="H100-SXM 80GB", n_devices="64", TP="4", PP="4", CP="2",
                    virtual_pipeline_stages="5", microbatch_size="1", seq_len="8192", global_batch_sequences="128",
                    precision="bf16", zero_stage_or_fsdp="distributed optimizer", recompute="none", step_time_s="14.72")


def test_model_names_resolve_to_presets_without_a_map_entry():
    # case, spaces and dashes do not matter; Llama 3.1 70B has its own preset since session 54 (the Llama 3 70B
    # shapes, plus its RoPE scaling for the exporters): the same parameter count
    assert resolve_model({"model": "Llama 3.1 70B"}) is MODELS["llama-3.1-70b"]
    assert MODELS["llama-3.1-70b"].n_params == MODELS["llama-3-70b"].n_params
    assert resolve_model({"model": "LLAMA3.1-405B"}) is MODELS["llama-3.1-405b"]
    assert resolve_model({"model": "Mixtral 8x7B"}) is MODELS["mixtral-8x7b"]
    assert resolve_model({"model": "nemotron-4 340B"}) is MODELS["nemotron-4-340b"]


def test_unknown_model_is_built_from_its_shape_columns():
    # Llama-2-7B's shapes under another name: 32 x (4 x 4096^2 + 3 x 4096 x 11008) + 2 x 32000 x 4096 + norms
    # = 6,738,415,616 parameters with a SwiGLU MLP (params_B 6.74 picks it over GeLU's 5.6e9)
    row = {"model": "MyLM-7B", "n_layers": "32", "d_model": "4096", "n_heads": "32", "n_kv_heads": "",
           "ffn_dim": "11008", "vocab": "32000", "params_B": "6.74"}
    m = resolve_model(row)
    assert m.mlp == "swiglu" and m.n_params == MODELS["llama-2-7b"].n_params == 6_738_415_616
    with pytest.raises(ConfigError, match="no preset for model 'Mystery'"):
        resolve_model({"model": "Mystery"})


def test_hardware_and_framework_of_unseen_sources():
    base = dict(ROW)
    assert framework_of(base) == "megatron"
    assert framework_of({"source": "OLMo 2 technical report", "id": "x"}) == "pytorch-fsdp"
    assert framework_of({"source": "x", "id": "x", "framework": "torchtitan"}) == "torchtitan"
    for text, name, hbm in (("H200 141GB", "h200", 143771 * 2**20), ("H800", "h800", 80 * 2**30), ("GH200", "gh200", 96 * 2**30), ("A800 80GB", "a800", 80 * 2**30),
                            ("TPU v5e", "tpu-v5e", 16 * 2**30), ("MI300X", "mi300x", 205_822_885_888)):
        _, hw, _, _, _ = row_inputs({**base, "hardware": text})
        assert hw.name == name and hw.hbm_bytes == hbm, text
    with pytest.raises(ConfigError, match="has no preset mapping"):
        row_inputs({**base, "hardware": "Gaudi 3"})


def test_nemo_recipe_row_from_another_source_is_reproduced():
    # DP left empty: 64 / (4 x 4 x 2) = 2; a NeMo recipe source turns on SP and TP overlap; the step time gives
    # 128 x 8192 / 14.72 / 64 = 1,113 tokens/s per device, which the planner predicts within 10%
    model, hw, tr, pc, n = row_inputs(ROW)
    assert pc.dp == 2 and pc.sp and pc.tp_overlap and model is MODELS["llama-3.1-70b"]
    res = reproduce_row(ROW)
    assert res.covered and res.metric == "tokens/s per device"
    assert res.reported == pytest.approx(128 * 8192 / 14.72 / 64)
    assert abs(res.error) < 0.10


def test_bad_rows_are_not_covered_with_a_reason_not_a_traceback():
    assert "not a number" in reproduce_row({**ROW, "TP": "four"}).reason
    assert "reports no positive step time" in reproduce_row({**ROW, "step_time_s": ""}).reason


def test_shared_rows_keep_their_frameworks():
    # the wider source table must not move a shared row to another profile
    fw = {r["id"]: framework_of(r) for r in load_rows()}
    assert fw["bloom_176b"] == "deepspeed" and fw["tt_a100_llama3_8b_64"] == "torchtitan"
    assert fw["llmfoundry_MPT_7B_H100_8"] == "llm-foundry" and fw["maxtext_v5p_32b_1xv5p128"] == "maxtext"
    assert fw["narayanan21_t2_zero3_174.6B_384gpu"] == "deepspeed" and fw["nemo2407_GPT3_175B_128"] == "megatron"
    # the 2021-2023 Megatron-LM releases ran blocking pipeline sends (the megatron-legacy profile)
    assert fw["megascale_175b_megatron_256"] == fw["narayanan21_t1_76.1B"] == fw["korthikanti22_175B"] == "megatron-legacy"


def test_nan_and_zero_cells_are_missing_or_refused_never_a_traceback():
    # pandas writes missing values as 'nan': an empty DP is derived (64 / (4 x 4 x 2) = 2), a 'nan' step time
    # with no other figure leaves the row uncovered; PP=0, a global batch of 1 sequence (smaller than
    # DP x microbatch_size = 2 x 1) and a reported MFU of 0 are refused with a reason
    _, _, _, pc, _ = row_inputs({**ROW, "DP": "nan"})
    assert pc.dp == 2
    assert "reports no positive step time" in reproduce_row({**ROW, "step_time_s": "nan"}).reason
    assert "not a positive integer" in reproduce_row({**ROW, "PP": "0"}).reason
    assert "smaller than DP x microbatch_size" in reproduce_row({**ROW, "global_batch_sequences": "1"}).reason
    assert not reproduce_row({**ROW, "step_time_s": "", "reported_MFU": "0"}).covered


#: fms-fsdp README (IBM + Meta): Llama 2 13B, HSDP, no activation checkpointing, batch 1 per GPU, seq 4096,
#: 128 A100 80GB on AWS p4de nodes (the repo's scripts load the EFA libraries), 1,700 tokens/s per GPU
FMS_13B = published_row(id="fms_fsdp_llama2_13b_128", source="fms-fsdp README (IBM)", model="Llama 2 13B",
                        hardware="A100 80GB (AWS p4de)", n_devices="128", microbatch_size="1", seq_len="4096",
                        global_batch_sequences="128", precision="bf16", zero_stage_or_fsdp="HSDP", recompute="none",
                        reported_tokens_per_sec="1700", tokens_per_sec_scope="per_device")


def test_hybrid_sharded_fsdp_row_on_an_efa_cluster():
    model, hw, tr, pc, n = row_inputs(FMS_13B)
    # HSDP shards inside the 8-GPU node and replicates across the 16 nodes; 400 Gb/s of EFA per node
    # is 50 GB/s / 8 = 6.25 GB/s per GPU
    assert (pc.zero_stage, pc.dp, pc.dp_shard) == (3, 128, 8) and tr.framework.name == "pytorch-fsdp"
    assert hw.scale_out_bandwidth == 6.25e9 and hw.hbm_bytes == 80 * 2**30
    from shardplan.cost.step import estimate
    e = estimate(model, hw, tr, pc, n)
    (ar,) = [c for c in e.collectives if c.op == "AllReduce" and c.axis == "dp"]
    # ring all-reduce of one 1/8 shard across 16 replicas: 13,015,864,320 / 8 x 2 B x 2 x 15/16 = 6.10 GB sent,
    # at 6.25 GB/s x the preset's 0.85 scale-out efficiency ~ 1.15 s (plus ring latency)
    assert ar.replicas and ar.bytes_per_device == pytest.approx(13_015_864_320 / 8 * 2 * 2 * 15 / 16, rel=1e-6)
    assert 1.14 < ar.time_s < 1.25
    res = reproduce_row(FMS_13B)
    assert res.covered and abs(res.error) < 0.10
    # "HSDP (16-way shard)" names the group; FSDP's SHARD_GRAD_OP is ZeRO-2, NO_SHARD plain DDP
    assert row_inputs({**FMS_13B, "zero_stage_or_fsdp": "HSDP (16-way shard)"})[3].dp_shard == 16
    assert row_inputs({**FMS_13B, "zero_stage_or_fsdp": "FSDP SHARD_GRAD_OP"})[3].zero_stage == 2
    assert row_inputs({**FMS_13B, "zero_stage_or_fsdp": "FSDP NO_SHARD"})[3].zero_stage == 0


#: Megatron-Turing NLG 530B (Smith et al. 2022 Sec. 2.4): Megatron-DeepSpeed, tp=8 pp=35, mbs 1, batch 1920, seq
#: 2048, full activation checkpointing, 280 DGX A100 nodes, 60.1 s per iteration
MT_NLG = published_row(id="mtnlg_530b_2240", source="Smith et al. 2022 (MT-NLG, DeepSpeed)", model="GPT-530B",
                       hardware="A100-80GB (Selene)", n_devices="2240", TP="8", PP="35", DP="8", CP="1",
                       microbatch_size="1", seq_len="2048", global_batch_sequences="1920", precision="bf16",
                       zero_stage_or_fsdp="ZeRO-1", recompute="full", step_time_s="60.1")


def test_deepspeed_overhead_is_per_layer_and_carries_to_mt_nlg():
    from shardplan.cost.step import estimate
    model, hw, tr, pc, n = row_inputs(MT_NLG)
    assert tr.framework.name == "deepspeed"
    e = estimate(model, hw, tr, pc, n)
    no_host = tr.model_copy(update={"framework": tr.framework.model_copy(update={"layer_overhead_s": 0.0})})
    e0 = estimate(model, hw, no_host, pc, n)
    # 105 layers / 35 stages = 3 per stage; 1920 / (8 x 1) = 240 microbatches + 34 bubble ticks (1F1B):
    # (240 + 34) x 3 x 0.0122 s = 10.0 s added to the step
    assert e.step_s - e0.step_s == pytest.approx(274 * 3 * tr.framework.layer_overhead_s, rel=0.02)
    # measured 1920 x 2048 / 60.1 s / 2240 = 29.21 tokens/s per GPU; held out (not fitted): within 15%
    res = reproduce_row(MT_NLG)
    assert res.covered and abs(res.error) < 0.15


def _qwen3_long_context(seq: int, cp: int, imbalance: float):
    from shardplan.calibration import hardware_of
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=seq, global_batch_size=256, framework=framework_profile("megatron"),
                      moe_imbalance=imbalance)
    pc = ParallelConfig(tp=4, sp=True, cp=cp, ep=8, etp=1, pp=8, schedule="interleaved", virtual_stages=4,
                        zero_stage=1, microbatch_size=1, moe_dispatcher="deepep", recompute="selective",
                        recompute_modules=("layernorm", "moe"))
    e = estimate(MODELS["qwen3-235b-a22b"], hardware_of("H100-SXM"), tr, pc, 256)
    return e.model_flops_per_step / e.step_s / 256  # model FLOP/s per GPU


def test_qwen3_long_context_forced_balance_and_dropless():
    # Megatron MoE model zoo, Qwen3 long-context table (256 H100, TP 4, PP 8 x VPP 4, EP 8, DeepEP): 295 TFLOP/s
    # per GPU at 16k with forced balance, 389 at 128k with CP 8; dropless 237 and 357. Forced balance: within 15%
    # (these rows are among the 33 the Megatron profile's two MoE costs are fitted on, which move the 16k
    # row from +0.5% to -11.6% and the 128k row from +6.0% to +0.4%). Dropless with the imbalance 1.55 fitted on the four ratios (with the
    # profile's fitted MoE costs; 1.5 without them): the ratio
    # forced / dropless 295 / 237 = 1.245 at 16k and 389 / 357 = 1.090 at 128k, the drop following the share of
    # the (balanced) attention, which grows with the sequence
    f16, f128 = _qwen3_long_context(16384, 1, 1.0), _qwen3_long_context(131072, 8, 1.0)
    assert f16 / 295e12 - 1 == pytest.approx(0, abs=0.15) and f128 / 389e12 - 1 == pytest.approx(0, abs=0.15)
    d16, d128 = _qwen3_long_context(16384, 1, 1.55), _qwen3_long_context(131072, 8, 1.55)
    assert f16 / d16 == pytest.approx(1.245, rel=0.03) and f128 / d128 == pytest.approx(1.090, rel=0.03)


def test_nemo_long_sequence_with_flash_attention_2():
    # NeMo 24.03 long-sequence table, Llama 2 7B fp8 on DGX-H100: 1M tokens over 1024 GPUs (TP 8, CP 32, DP 4) at
    # 536 TFLOP/s per GPU as NeMo counts FLOPs (attention not halved for the causal mask): 536e12 / the non-causal
    # FLOPs per token = 317 tokens/s per GPU. At this length attention is ~98% of the FLOPs, so the kernel decides:
    # priced with FlashAttention-2 (FrameworkProfile.attention_kernel) within 10%, with cuDNN's kernel far faster
    from shardplan.calibration import hardware_of
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec
    m, seq = MODELS["llama-2-7b"], 1024 * 1024
    reported = 536e12 / model_flops_per_token(m, seq, causal=False)
    assert reported == pytest.approx(317, abs=1)
    pc = ParallelConfig(tp=8, sp=True, tp_overlap=True, dp=4, cp=32, zero_stage=1)
    pred = {}
    for kernel in ("fa2", "cudnn"):
        fw = framework_profile("megatron").model_copy(update={"attention_kernel": kernel})
        tr = TrainingSpec(seq_len=seq, global_batch_size=4, framework=fw, precision=PRECISION_POLICIES["fp8-mixed"])
        pred[kernel] = estimate(m, hardware_of("H100-SXM"), tr, pc, 1024).tokens_per_s / 1024
    assert pred["fa2"] / reported - 1 == pytest.approx(0, abs=0.10)
    assert pred["cudnn"] / reported > 1.4  # the default (cuDNN) kernel would be ~60% fast here


def test_megatron_bridge_deepseek_v3_h100_recipe():
    # Megatron-Bridge 25.09 DGX-H100: DeepSeek-V3 on 1,024 H100, TP 2, EP 64, layout 'Et|(tt|)*30mL' on pp 8: 32
    # entries, vpp 4, rank r holding entries r, r + 8, r + 16, r + 24: rank 0 'Et' + 3 x 'tt' = 7 layers, ranks 1-6
    # 4 x 'tt' = 8, rank 7 3 x 'tt' + 'mL' = 6 (the MTP module and the loss); 1,297 tokens/s per GPU published.
    # With the recipe's MLA up-projection + MLP recompute and bf16 Adam moments it fits in 80 GB and is predicted
    # within 22% (the MTP module on the last rank is counted; -16% without the Megatron profile's fitted MoE terms,
    # -20.4% with the per-expert and per-layer costs: this row is one the terms make worse, docs/accuracy.md)
    from shardplan.calibration import hardware_of
    from shardplan.cost.step import estimate
    from shardplan.export.megatron import parse_pipeline_layout
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec
    split, v = parse_pipeline_layout("Et|(tt|)*30mL", 8)
    assert (split, v) == ((7, 8, 8, 8, 8, 8, 8, 6), 4)
    tr = TrainingSpec(seq_len=4096, global_batch_size=8192, framework=framework_profile("megatron"),
                      precision=PRECISION_POLICIES["fp8-mixed"], optimizer_dtype="bf16-moments")
    pc = ParallelConfig(tp=2, sp=True, pp=8, schedule="interleaved", virtual_stages=v, pp_layers=split, ep=64, etp=1,
                        moe_dispatcher="deepep", zero_stage=1, recompute="selective",
                        recompute_modules=("mla_up_proj", "mlp"))
    e = estimate(MODELS["deepseek-v3-mtp"], hardware_of("H100-SXM"), tr, pc, 1024)
    assert e.fits and e.tokens_per_s / 1024 / 1297 - 1 == pytest.approx(0, abs=0.22)


def test_fsdp_rows_that_pipeline_are_priced_as_the_pytorch_stack_that_pipelines():
    # the pytorch-fsdp and llm-foundry profiles have no pipeline or context parallelism: a PyTorch FSDP row with
    # PP or CP > 1 ran torch's native stack, which the torchtitan profile describes; without them it stays
    assert framework_of({"source": "some FSDP report", "PP": "4"}) == "torchtitan"
    assert framework_of({"source": "some FSDP report", "CP": "2"}) == "torchtitan"
    assert framework_of({"source": "llm-foundry", "PP": "1"}) == "llm-foundry"
    assert framework_of({"source": "llm-foundry", "PP": "2"}) == "torchtitan"
    assert framework_of({"source": "fms-fsdp", "PP": "1"}) == "pytorch-fsdp"
    # the same for the nanotron profile, which prices neither cp nor ep inside the data-parallel group
    assert framework_of({"source": "picotron", "CP": "2"}) == "torchtitan"
    assert framework_of({"source": "nanotron", "PP": "2"}) == "nanotron"


def test_moe_rows_take_their_ep_column_and_megatron_bridge_fp8_cs_keeps_fp8_weights():
    # Qwen3-30B-A3B on 8 B200, EP8 (Megatron-Bridge 25.09 table): the EP cell is the layout's ep; its FP8-CS
    # recipe gathers fp8 primary weights (mixed_precision.py: fp8_param_gather=True) -> 'fp8-params'; a dense
    # row's EP cell is ignored, and FP8 elsewhere stays 'fp8-mixed'
    row = published_row(id="mb_qwen3_30b", source="Megatron-Bridge 25.09 performance summary", model="Qwen3-30B-A3B",
                        hardware="B200", n_devices="8", EP="8", microbatch_size="1", seq_len="4096",
                        global_batch_sequences="512", precision="FP8-CS", zero_stage_or_fsdp="distributed optimizer",
                        recompute="none", step_time_s="10")
    model, _, tr, pc, _ = row_inputs(row)
    assert model is MODELS["qwen3-30b-a3b"] and pc.ep == 8 and tr.precision.name == "fp8-params"
    _, _, tr, pc, _ = row_inputs({**row, "model": "Llama 3 8B", "source": "NeMo 24.07", "precision": "fp8"})
    assert pc.ep == 1 and tr.precision.name == "fp8-mixed"


def test_fit_checks_of_configurations_that_ran():
    # benchmarks/public_runs.py FIT_CHECKS_2026_12: 26 MaxText configurations that ran; at least the 22 the
    # docs report are predicted to fit (the four called wrong are named in docs/accuracy.md)
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from public_runs import FIT_CHECKS_2026_12, check_inputs
    from shardplan.cost.step import estimate
    fits = []
    for cid, _src, model, hw, fw, prec, n, s, b, lay, expect in FIT_CHECKS_2026_12:
        m, h, tr, p, n = check_inputs((cid, model, hw, fw, prec, n, s, b, lay, None, None))
        fits.append(estimate(m, h, tr, p, n).fits == (expect == "ran"))
    assert len(fits) == 26 and sum(fits) >= 22
