"""Cost model against hand-derived numbers: bug cases F, G, H, I and published formulas."""

import pytest

from shardplan.errors import ConfigError

from shardplan.cost.comm import collective_cost
from shardplan.cost.flops import hardware_flops_per_token, model_flops_per_token
from shardplan.cost.memory import activation_bytes_per_token, memory_estimate
from shardplan.cost.step import estimate
from shardplan.inputs import build_inputs
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.model import ModelSpec
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.training import PRECISION_POLICIES, PrecisionPolicy, TrainingSpec

GiB = 2**30
P7 = 6_738_415_616  # Llama-2-7B


def _mem(model, parallel, devices, precision="bf16-mixed", seq=4096, batch=None, **training):
    pol = PRECISION_POLICIES[precision] if isinstance(precision, str) else precision
    tr = TrainingSpec(seq_len=seq, global_batch_size=batch or devices, precision=pol, **training)
    lay = validate(parallel, model, tr, devices)
    return memory_estimate(model, tr, lay)


def test_case_f_deepspeed_zero3_model_states():
    # DeepSpeed's estimate_zero3_model_states_mem_needs counts 18 B/param sharded (2 bf16 params, 4 fp32
    # grads, 4 fp32 master, 8 Adam) + 4 B x the largest layer (2 bf16 gather buffers of the vocab*h embedding).
    m = MODELS["codellama-7b"]
    assert m.n_params == 6_738_546_688 and m.largest_tensor_params() == 32016 * 4096 == 131_137_536
    ds = PrecisionPolicy(name="deepspeed", param_bytes=2, grad_bytes=4, master_bytes=4, optimizer_bytes=8)
    # a Hugging Face model under DeepSpeed: no vocabulary padding (Megatron's would add 32,128 - 32,016 rows)
    hf = {"framework": FrameworkProfile(name="deepspeed-hf", vocab_divisible_by=1)}
    mem = _mem(m, ParallelConfig(zero_stage=3, fsdp_unit="tensor"), 4, ds, **hf)
    states = mem.params + mem.grads + mem.optimizer + mem.zero3_buffers
    assert states == 4 * 131_137_536 + 18 * 6_738_546_688 / 4 == 30_848_010_240  # 28.73 GiB
    off = _mem(m, ParallelConfig(zero_stage=3, fsdp_unit="tensor", offload_optimizer=True), 4, ds, **hf)
    gpu = off.params + off.grads + off.optimizer + off.zero3_buffers
    assert gpu == 4 * 131_137_536 + 2 * 6_738_546_688 / 4  # 3.63 GiB
    assert gpu / GiB == pytest.approx(3.63, abs=0.005)


def test_case_g_megatron_distributed_optimizer():
    m = MODELS["llama-2-7b"]
    fp32g = _mem(m, ParallelConfig(zero_stage=1), 8, "bf16-mixed-fp32-grads")
    assert fp32g.model_state == pytest.approx((2 + 4 + 12 / 8) * P7)  # 7.5 B/param
    assert fp32g.model_state / GiB == pytest.approx(47.07, abs=0.005)
    bf16g = _mem(m, ParallelConfig(zero_stage=1), 8, "bf16-mixed")
    assert bf16g.model_state / GiB == pytest.approx(34.52, abs=0.005)  # 5.5 B/param
    ddp = _mem(m, ParallelConfig(zero_stage=0), 8, "bf16-mixed-fp32-grads")
    assert ddp.model_state / GiB == pytest.approx(112.96, abs=0.005)  # 18 B/param


def test_case_h_adam_needs_16_bytes():
    m = MODELS["llama-2-7b"]
    mixed = _mem(m, ParallelConfig(), 1, "bf16-mixed", batch=1)
    assert mixed.model_state == 16 * P7 and mixed.model_state / GiB == pytest.approx(100.41, abs=0.005)
    fp32 = _mem(m, ParallelConfig(zero_stage=3), 4, "fp32-params")
    # 12 B/param persistent (fp32 weights + Adam m, v); grads are transient
    assert PRECISION_POLICIES["fp32-params"].model_state_bytes_per_param == 12
    assert (fp32.params + fp32.optimizer) * 4 / GiB == pytest.approx(75.31, abs=0.005)
    assert (fp32.params + fp32.optimizer) / GiB < 32


def test_case_i_zero1_communication_volume():
    # GPT-2 with the vocab padded to 50304: 124,475,904 params, bf16 grads, 8 ranks.
    gpt2 = MODELS["gpt2"].model_copy(update={"vocab_size": 50304})
    assert gpt2.n_params == 124_475_904
    tr = TrainingSpec(seq_len=1024, global_batch_size=8)
    z1 = estimate(gpt2, HARDWARE["h100-sxm"], tr, ParallelConfig(zero_stage=1), 8)
    sent = sum(c.bytes_per_device for c in z1.collectives if c.axis == "dp")
    assert sent == pytest.approx(2 * 7 / 8 * 248_951_808) and round(sent) == 435_665_664
    ddp = estimate(gpt2, HARDWARE["h100-sxm"], tr, ParallelConfig(zero_stage=0), 8)
    assert sum(c.bytes_per_device for c in ddp.collectives if c.axis == "dp") == pytest.approx(sent)
    assert sent < 3 * 7 / 8 * 248_951_808  # not AllReduce + AllGather (653,498,496)


def test_korthikanti_activation_table():
    # GPT shape (MHA, GeLU, F = 4h), 16-bit activations, naive attention with dropout:
    # Korthikanti et al. 2022 Table 2: no parallelism 34h + 5as per token; TP: 10h + 24h/t + 5as/t; TP+SP: /t.
    m = ModelSpec(n_layers=1, d_model=1024, n_heads=16, ffn_dim=4096, vocab_size=100, mlp="gelu", norm="layernorm")
    tr = TrainingSpec(seq_len=2048, global_batch_size=8, attention="naive", dropout=True)
    h, a, s = 1024, 16, 2048
    for tp, sp, expect in [(1, False, 34 * h + 5 * a * s), (4, False, 10 * h + 24 * h / 4 + 5 * a * s / 4),
                           (4, True, (34 * h + 5 * a * s) / 4)]:
        lay = validate(ParallelConfig(tp=tp, sp=sp), m, tr, tp)
        assert activation_bytes_per_token(m, tr, lay, False) == pytest.approx(expect)


def test_flops_match_published_formulas():
    # Korthikanti et al. 2022: model FLOPs per token 72 L h^2 (1 + s/6h + V/12hL) (bidirectional count)
    m = MODELS["gpt-175b"]
    L, h, V, s = 96, 12288, 51200, 2048
    assert model_flops_per_token(m, s, causal=False) == pytest.approx(72 * L * h * h * (1 + s / (6 * h) + V / (12 * h * L)))
    # full recompute adds one forward of the layers: Narayanan Eq. 3 96 L h^2 (1 + s/6h + V/16Lh)
    assert hardware_flops_per_token(m, s, "full", causal=False, attention="naive") == pytest.approx(
        96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h)))
    # causal halves the attention core: 6*q*s*L less than the bidirectional count
    assert model_flops_per_token(m, s) == pytest.approx(model_flops_per_token(m, s, causal=False) - 6 * h * s * L)


def test_collective_formulas():
    h100 = HARDWARE["h100-sxm"]
    W1, W2, base = 450e9 * 0.82, 50e9 * 0.85, 8.4e-6
    # 8 GPUs in one node, 1 GB AllGather ring: base 8.4 us + 7 NVLink steps of 5 us + (7/8) * 1e9 / W1
    c = collective_cost("AllGather", 1e9, 8, 1, h100)
    assert c.time_s == pytest.approx(base + 7 * 5e-6 + 7 / 8 * 1e9 / W1) and c.level == "NVLink"
    # AllReduce ring: 2(n-1) = 14 steps, twice the bytes
    c = collective_cost("AllReduce", 1e9, 8, 1, h100)
    assert c.time_s == pytest.approx(base + 14 * 5e-6 + 2 * 7 / 8 * 1e9 / W1)
    # 64 GPUs over 8 nodes, flat ring: 7 node-crossing steps at the 20 us network hop and 56 NVLink steps at
    # 5 us (NCCL's per-link ring latency, the preset's default); the bytes S (n-1)/n cross each node boundary
    # through the node's 8 NICs: 8 W2 = 340 GB/s < W1
    c = collective_cost("ReduceScatter", 1e9, 64, 1, h100)
    assert c.level == "scale-out" and c.algorithm == "ring"
    assert c.time_s == pytest.approx(base + 7 * 2e-5 + 56 * 5e-6 + 1e9 * 63 / 64 / (8 * W2))
    # exactly two nodes, AllReduce of 1e8 B: tree (hierarchical) beats ring. Tree: base + 2 (7 x 5 us + 1 x 20 us)
    # + max(2S/W1, 2S (1/2)/(8 W2)) / 0.8 (NCCL tree correction at floor(log2(1e8/64)) = 20) = 118.4 us + 0.678 ms;
    # ring: base + 30 x 20 us + 2S (15/16)/(8 W2) = 1.16 ms. The NVLink chain bounds the tree (Scaling Book
    # gpus.md: "two nodes ... the node level is the bottleneck")
    # (with every ring step at the network hop, ring_latency='slowest_hop')
    c = collective_cost("AllReduce", 1e8, 16, 1, h100.model_copy(update={"ring_latency": "slowest_hop"}))
    assert c.algorithm == "tree" and c.level == "NVLink"
    assert c.time_s == pytest.approx(base + 2 * (7 * 5e-6 + 2e-5) + 2e8 / W1 / 0.8)
    # with NCCL's per-link ring latency (default) the ring wins: base + 2 (1 x 20 + 14 x 5 us) = 188.4 us
    # + 2S (15/16) / (8 W2) = 551.5 us -> 0.740 ms < 0.796 ms
    c = collective_cost("AllReduce", 1e8, 16, 1, h100)
    assert c.algorithm == "ring"
    assert c.time_s == pytest.approx(base + 2 * (2e-5 + 14 * 5e-6) + 2e8 * 15 / 16 / (8 * W2))
    slow = h100.model_copy(update={"scale_out_bandwidth": 12.5e9})
    assert collective_cost("AllReduce", 1e8, 16, 1, slow).level == "scale-out"


def test_step_time_composition_and_mfu():
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], TrainingSpec(seq_len=8192, global_batch_size=64),
                 ParallelConfig(zero_stage=3), 8)
    d = e.to_dict()
    t = d["time_s"]
    assert t["step"] == pytest.approx(t["compute"] + t["exposed_comm"] + t["bubble"] + t["optimizer"]
                                      + t["framework_overhead"] + t["overlap_slowdown"], rel=1e-9)
    # the default overlap slowdown is the H100's SM share of the communication kernels, 16 / 132, of every
    # overlapped collective second (megatron profile: overlap_slowdown unset)
    hidden = sum(c["time_s"] - c["exposed_s"] for c in d["collectives"])
    assert t["overlap_slowdown"] == pytest.approx(16 / 132 * hidden, rel=1e-9) and hidden > 0
    # MFU = model FLOPs / (step * devices * peak), PaLM Appendix B
    assert d["mfu"] == pytest.approx(e.model_flops_per_step / (e.step_s * 8 * 989.4e12))
    assert 0 < d["mfu"] < 1 and d["fits"]


def test_pipeline_bubble_per_schedule():
    m, hw = MODELS["llama-3-70b"], HARDWARE["h100-sxm"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    res = {}
    for sched, v in [("1f1b", 1), ("interleaved", 2), ("zero-bubble", 1), ("gpipe", 1)]:
        e = estimate(m, hw, tr, ParallelConfig(tp=8, pp=4, schedule=sched, virtual_stages=v, zero_stage=1), 64)
        res[sched] = e
    mb = res["1f1b"].step_s - res["1f1b"].bubble_s
    # 1F1B bubble = (p-1) x microbatch time = 3/m of the busy time (Narayanan et al. 2021 Sec. 2.2)
    m_mb = res["1f1b"].layout.microbatches
    assert res["1f1b"].bubble_s == pytest.approx(3 * (res["1f1b"].compute_s + sum(
        c.exposed_s for c in res["1f1b"].collectives if c.axis != "dp")) / m_mb, rel=1e-6)
    assert res["interleaved"].bubble_s < res["1f1b"].bubble_s and res["zero-bubble"].bubble_s < res["1f1b"].bubble_s
    assert res["gpipe"].memory.activations > res["1f1b"].memory.activations  # GPipe holds all m microbatches
    assert mb > 0


def test_exposed_never_exceeds_collective_time():
    # communication-bound corner: a tiny model on 64 B200s with ZeRO-3 (found by adversarial testing)
    import itertools
    tiny = MODELS["tiny-llama"]
    for hw_name, z, tp in itertools.product(["b200", "a100-80gb"], [0, 1, 3], [1, 2]):
        e = estimate(tiny, HARDWARE[hw_name], TrainingSpec(seq_len=128, global_batch_size=64),
                     ParallelConfig(zero_stage=z, tp=tp), 64)
        for c in e.collectives:
            assert c.exposed_s <= c.time_s * (1 + 1e-9), (hw_name, z, tp, c)
        assert e.step_s == pytest.approx(e.compute_s + e.exposed_comm_s + e.bubble_s + e.optimizer_s
                                         + e.overhead_s + e.overlap_slowdown_s, rel=1e-9)


def test_zero3_gather_once_per_step():
    # Llama-3-70B on 64 H100s, 256 sequences: dp=64, 4 microbatches per rank.
    # (priced with the megatron profile's numbers but a gather it can keep: Megatron-FSDP itself re-gathers per
    # microbatch, zero3_per_step 'never')
    from shardplan.presets.frameworks import framework_profile
    m = MODELS["llama-3-70b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=256,
                      framework=framework_profile("megatron").model_copy(update={"zero3_per_step": "any"}))
    fsdp = estimate(m, HARDWARE["h100-sxm"], tr, ParallelConfig(zero_stage=3, recompute="full"), 64)
    once = estimate(m, HARDWARE["h100-sxm"], tr,
                    ParallelConfig(zero_stage=3, recompute="full", zero3_gather="per_step"), 64)
    ag = lambda e: [c for c in e.collectives if c.op == "AllGather"]  # noqa: E731
    # PyTorch FSDP: forward + backward gather per microbatch = 2 x 4 calls; per step: 1 call
    assert sum(c.count for c in ag(fsdp)) == 8 and sum(c.count for c in ag(once)) == 1
    assert sum(c.bytes_per_device for c in ag(once)) == pytest.approx(sum(c.bytes_per_device for c in ag(fsdp)) / 8)
    # the gathered copy of all 70,553,706,496 bf16 parameters stays resident: 141.1 GB
    assert once.memory.zero3_buffers == pytest.approx(2 * 70_553_706_496)
    assert not once.fits and "gather/step" in once.parallel.short()
    with pytest.raises(ConfigError, match="needs zero_stage=3"):
        validate(ParallelConfig(zero_stage=2, zero3_gather="per_step"), m, tr, 64)


def test_tp_overlap_slowdown_adds_back_only_the_hidden_tp_time():
    # with tp_overlap_slowdown = 1 and overlap_slowdown = 0 the slowdown per step is exactly the hidden time
    # of the tp collectives (sum of time - exposed over the step); None falls back to overlap_slowdown
    from shardplan.presets.frameworks import framework_profile
    base = framework_profile("megatron")
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=16, seq_len=8192, global_batch=32,
                                 global_batch_tokens=None, tp=8, sp=True, tp_overlap=True, zero_stage=1)
    only_tp = estimate(m, hw, tr.model_copy(update={"framework": base.model_copy(
        update={"overlap_slowdown": 0.0, "tp_overlap_slowdown": 1.0})}), pc, 16)
    hidden_tp = sum(c.time_s - c.exposed_s for c in only_tp.collectives if c.axis == "tp")
    assert hidden_tp > 0 and only_tp.overlap_slowdown_s == pytest.approx(hidden_tp, rel=1e-9)
    same = estimate(m, hw, tr.model_copy(update={"framework": base.model_copy(update={"overlap_slowdown": 0.3})}), pc, 16)
    both = estimate(m, hw, tr.model_copy(update={"framework": base.model_copy(
        update={"overlap_slowdown": 0.3, "tp_overlap_slowdown": 0.3})}), pc, 16)
    assert same.overlap_slowdown_s == pytest.approx(both.overlap_slowdown_s, rel=1e-12)
