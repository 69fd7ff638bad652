"""Collective cost model (shardplan/cost/comm.py) against hand-derived alpha-beta numbers and
published nccl-tests measurements (AWS p5 with EFA; the Ultra-Scale Playbook cluster)."""

import math
from pathlib import Path

import pytest

from shardplan.cost.comm import (bus_factor, collective_cost, measured_bus_bw, raw_bus_bw, table_bandwidth,
                                 tree_correction)
from shardplan.errors import ConfigError
from shardplan.loaders import load_hardware
from shardplan.presets.hardware import HARDWARE

H100 = HARDWARE["h100-sxm"]
W1, W2, BASE = 450e9 * 0.82, 50e9 * 0.85, 8.4e-6  # NVLink ring 369 GB/s, one NIC 42.5 GB/s, NCCL baseLat
#: AWS p5.48xlarge without a measured table: EFA per-step latency 44 us, AMD host (2 us per network post)
P5 = H100.model_copy(update={"scale_out_latency": 44e-6, "net_message_overhead": 2e-6, "ring_latency": "slowest_hop"})
SLOW = H100.model_copy(update={"ring_latency": "slowest_hop"})  # every ring step at the network hop
USP = Path(__file__).resolve().parents[1] / "shardplan" / "data" / "clusters" / "usp-h100-efa.yaml"
MiB, GiB = 2**20, 2**30


def busbw(op, size, n, hw):
    """nccl-tests bus bandwidth of one call (bytes/s)."""
    return size * bus_factor(op, n) / collective_cost(op, size, n, 1, hw).time_s


def test_bus_factors_follow_nccl_tests():
    # nccl-tests doc/PERFORMANCE.md: AllReduce 2(n-1)/n, ReduceScatter / AllGather / AlltoAll (n-1)/n
    assert bus_factor("AllReduce", 8) == pytest.approx(1.75)
    assert bus_factor("AllGather", 16) == bus_factor("ReduceScatter", 16) == pytest.approx(15 / 16)
    assert bus_factor("AllToAll", 4) == pytest.approx(0.75) and bus_factor("SendRecv", 2) == 1.0
    assert collective_cost("AllReduce", 1e9, 8, 1, H100).bytes_per_device == pytest.approx(1.75e9)


def test_small_messages_do_not_reach_peak():
    # one-node AllGather: alpha = 8.4 + 7 x 5 = 43.4 us, B = 369 GB/s; busbw = B/2 at S_bus = alpha B = 16.0 MB
    alpha = BASE + 7 * 5e-6
    s_half = alpha * W1 / (7 / 8)
    assert busbw("AllGather", s_half, 8, H100) == pytest.approx(W1 / 2)
    assert busbw("AllGather", 1e6, 8, H100) < 0.1 * W1 < 0.95 * W1 < busbw("AllGather", 10 * GiB, 8, H100)


def test_ring_across_nodes_is_flat_and_waits_on_the_network_hop():
    # tp=16 over 2 nodes, 32 MiB AllGather: 15 steps x 20 us + 8.4 us; the 15/16 S crossing each node boundary
    # goes through the node's 8 NICs (8 x 42.5 = 340 GB/s < 369 NVLink)
    s = 32 * MiB
    c = collective_cost("AllGather", s, 16, 1, SLOW)
    assert c.algorithm == "ring" and c.level == "scale-out" and (c.n_local, c.n_domains) == (8, 2)
    assert c.time_s == pytest.approx(BASE + 15 * 2e-5 + s * 15 / 16 / (8 * W2))
    # a hierarchical (pipelined two-level) formula would move only S/2 through the NICs at 2 nodes: 1.875x less
    assert (c.time_s - c.latency_s) / (s * (1 / 2) / (8 * W2)) == pytest.approx(1.875)


def test_ring_latency_grows_with_ring_length():
    # 1 KB AllGather, full nodes: latency 8.4 us + (n-1) x 20 us for n = 16, 32, 64
    for n in (16, 32, 64):
        c = collective_cost("AllGather", 1e3, n, 1, SLOW)
        assert c.latency_s == pytest.approx(BASE + (n - 1) * 2e-5)
    # inside one node the steps are NVLink hops: 8.4 + 7 x 5 us
    assert collective_cost("AllGather", 1e3, 8, 1, SLOW).latency_s == pytest.approx(BASE + 7 * 5e-6)


def test_per_link_ring_latency_is_nccls_tuner():
    # default (InfiniBand presets): 64 ranks on 8 nodes, ReduceScatter: 8.4 us + 7 node-crossing steps x 20 us
    # + 56 NVLink steps x 5 us = 428.4 us (NVIDIA/nccl tuning.cc Ring); AllReduce twice the steps: 848.4 us
    assert H100.ring_latency == "per_link"
    rs = collective_cost("ReduceScatter", 1e3, 64, 1, H100)
    assert rs.latency_s == pytest.approx(BASE + 7 * 2e-5 + 56 * 5e-6)
    assert collective_cost("AllReduce", 1e3, 64, 1, H100, ).latency_s <= BASE + 2 * (7 * 2e-5 + 56 * 5e-6) + 1e-12
    # the slowest-hop model charges the network on all 63 steps: 8.4 + 63 x 20 = 1268.4 us
    assert collective_cost("ReduceScatter", 1e3, 64, 1, SLOW).latency_s == pytest.approx(BASE + 63 * 2e-5)


def test_tree_allreduce_has_log2_latency():
    # 256 ranks on 32 nodes, 1 MB: tree latency 8.4 + 2 (7 x 5 + log2(32) x 20) = 278.4 us against a ring's
    # 8.4 + 510 x 20 us = 10.2 ms
    c = collective_cost("AllReduce", 1e6, 256, 1, H100)
    assert c.algorithm == "tree" and c.latency_s == pytest.approx(278.4e-6)
    # bandwidth: max(2S/W1 = 5.42 us, 2S (31/32)/(8 W2) = 5.70 us) = 5.70 us, divided by NCCL's tree correction
    # at 1e6 B: floor(log2(1e6/64)) = 13 -> 0.5
    assert tree_correction(1e6) == 0.5 and tree_correction(8 * GiB) == 1.0
    assert c.time_s == pytest.approx(278.4e-6 + 2e6 * 31 / 32 / (8 * W2) / 0.5) and c.level == "scale-out"
    # tree depth grows as log2: 64 nodes add one level (2 x 20 us) over 32 nodes
    assert collective_cost("AllReduce", 1e6, 512, 1, H100).latency_s - c.latency_s == pytest.approx(40e-6)


def test_nic_share_of_groups_with_few_members_per_node():
    # dp group of stride 8 (tp=8): one member per node, one NIC: B = 42.5 GB/s; stride 4: two members, 85 GB/s
    s = 1e9
    c1 = collective_cost("ReduceScatter", s, 8, 8, H100)
    c2 = collective_cost("ReduceScatter", s, 16, 4, H100)
    assert (c1.n_local, c1.n_domains, c2.n_local, c2.n_domains) == (1, 8, 2, 8)
    assert c1.bus_bandwidth == pytest.approx(W2) and c2.bus_bandwidth == pytest.approx(2 * W2)
    assert c1.time_s == pytest.approx(BASE + 7 * 2e-5 + s * 7 / 8 / W2)
    # a concurrent axis taking half of the NICs halves it
    c3 = collective_cost("ReduceScatter", s, 8, 8, H100, link_share=0.5)
    assert c3.time_s == pytest.approx(BASE + 7 * 2e-5 + s * 7 / 8 / (0.5 * W2))


def test_calls_pay_the_latency_each():
    # 1 GB in 40 buckets of 25 MB over 64 ranks / 8 nodes: 40 x (8.4 + 63 x 20 us) + the same bandwidth term
    one = collective_cost("ReduceScatter", 1e9, 64, 1, SLOW)
    many = collective_cost("ReduceScatter", 1e9, 64, 1, SLOW, calls=40)
    assert many.time_s - one.time_s == pytest.approx(39 * (BASE + 63 * 2e-5))
    assert many.bytes_per_device == one.bytes_per_device


def test_alltoall_matches_efa_measurements():
    # nccl-tests alltoall_perf on p5.48xlarge, 2 GiB per rank (crazyguitar/aws-gpu-communication-benchmark
    # data/nccl_alltoall.csv, "out algbw"): 84.53, 55.82, 50.41, 44.58 GB/s on 2, 4, 8, 16 nodes.
    # Bandwidth term S (n-8)/(n W2): algbw -> W2 n/(n-8) = 85.0, 56.7, 48.6, 45.3 GB/s
    s = 2 * GiB
    for nodes, measured in ((2, 84.53e9), (4, 55.82e9), (8, 50.41e9), (16, 44.58e9)):
        algbw = s / collective_cost("AllToAll", s, 8 * nodes, 1, P5).time_s
        assert algbw == pytest.approx(measured, rel=0.05)


def test_allreduce_matches_efa_measurements_at_large_messages():
    # all_reduce_perf on p5.48xlarge, 8 GiB (crazyguitar/aws-gpu-communication-benchmark data/nccl_all_reduce.csv):
    # busbw 357.0, 355.4, 356.3 GB/s on 4, 8, 16 nodes. Tree: the NVLink chain 2S/W1 bounds it:
    # busbw = 2(n-1)/n S / (2S/W1) = W1 (n-1)/n = 358, 363, 366 GB/s (+ latency < 1 ms of 47 ms)
    s = 8 * GiB
    for nodes, measured in ((4, 357.0e9), (8, 355.4e9), (16, 356.3e9)):
        assert busbw("AllReduce", s, 8 * nodes, P5) == pytest.approx(measured, rel=0.03)
    # 2 nodes measure 478 GB/s: NVLink SHARP (NVLS) reduces in the switch, not modelled without a table
    assert busbw("AllReduce", s, 16, P5) < 478e9


def test_playbook_ring_table_needs_the_slowest_hop_latency():
    # Ultra-Scale Playbook cluster, AllGather busbw at 256 MiB (shared/calibration/README.md): 184.6 .. 11.0 GB/s.
    # Slowest-hop ring with a_out = 44 us and B = 340 GB/s: t = 8.4 us + (8k-1) 44 us + S (n-1)/n / 340e9,
    # e.g. 64 nodes: 22.49 ms + 0.79 ms -> 11.5 GB/s. NCCL's own tuner (a_out only on the k-1 inter-node steps,
    # 3.4 us on the others) gives 8.4 + 448 x 3.4 + 63 x 44 us = 4.3 ms -> 52 GB/s, 4.7x the measured busbw.
    s = 256 * MiB
    table = {2: 184.6e9, 4: 119.0e9, 8: 69.0e9, 16: 55.0e9, 32: 28.0e9, 64: 11.0e9}
    for k, measured in table.items():
        n = 8 * k
        assert busbw("AllGather", s, n, P5) == pytest.approx(measured, rel=0.25)
        nccl_lat = BASE + (n - k) * 3.4e-6 + (k - 1) * 44e-6
        nccl_busbw = s * (n - 1) / n / (nccl_lat + s * (n - 1) / n / (8 * W2))
        if k >= 8:
            assert nccl_busbw > 1.8 * measured
    assert busbw("AllGather", s, 512, P5) == pytest.approx(s * 511 / 512 / (BASE + 511 * 44e-6 + s * 511 / 512 / 340e9))


def test_without_a_table_time_still_grows_with_node_count():
    # 256 MiB over 2..64 full nodes: the NIC-bound bandwidth term is flat, the latency grows with ring length
    # (AllGather, ReduceScatter: 15 .. 511 steps) or tree depth (AllReduce: 1 .. 6 levels)
    s = 256 * MiB
    for op in ("AllGather", "ReduceScatter", "AllReduce"):
        times = [collective_cost(op, s, 8 * k, 1, H100).time_s for k in (2, 4, 8, 16, 32, 64)]
        assert all(a < b for a, b in zip(times, times[1:])), (op, times)
    assert busbw("AllGather", s, 512, H100) < 0.25 * busbw("AllGather", s, 16, H100)


def test_measured_table_bandwidth_terms():
    hw = load_hardware(str(USP))
    assert hw.measured_busbw_bytes == 2**28 and hw.scale_out_latency == 44e-6
    # AllReduce on 4 nodes: measured 160.1 GB/s at 256 MiB -> t = 2^28 x 2 x 31/32 / 160.1e9 = 3.248 ms; tree
    # latency 8.4 + 2 (7 x 5 + 2 x 44) = 254.4 us -> B = S_bus / (3.248 ms - 0.254 ms) = 173.7 GB/s
    s_bus = 2**28 * 2 * 31 / 32
    assert table_bandwidth(hw, "AllReduce", 4) == pytest.approx(s_bus / (s_bus / 160.1e9 - 254.4e-6))
    # AllGather on 16 nodes: the 127-step ring latency (5.6 ms) exceeds the measured 4.84 ms: B is capped at
    # the wire-speed bound min(450, 8 x 50) = 400 GB/s
    assert raw_bus_bw(hw, "AllGather", 8, 16) == 400e9 and table_bandwidth(hw, "AllGather", 16) == 400e9
    # between node counts: linear in log k; 3 nodes sit log(3/2)/log(2) = 0.585 of the way from 2 to 4
    b2, b4 = table_bandwidth(hw, "AllReduce", 2), table_bandwidth(hw, "AllReduce", 4)
    f = math.log(1.5) / math.log(2)
    assert measured_bus_bw(hw, "AllReduce", 8, 3) == pytest.approx(b2 + f * (b4 - b2))
    # fewer members per node: the group's NIC share n1/8; beyond 64 nodes held at the 64-node value
    assert measured_bus_bw(hw, "AllReduce", 2, 4) == pytest.approx(b4 * 2 / 8)
    assert measured_bus_bw(hw, "AllReduce", 8, 128) == pytest.approx(table_bandwidth(hw, "AllReduce", 64))
    # inside one node: the 1-node entry, not scaled by group size
    assert measured_bus_bw(hw, "AllGather", 4, 1) == pytest.approx(table_bandwidth(hw, "AllGather", 1))


def test_measured_table_prices_calls():
    hw = load_hardware(str(USP))
    # tp=16 over 2 nodes, 32 MiB AllGather: ring latency 8.4 + 15 x 44 us, bandwidth term of the 2-node entry
    s = 32 * MiB
    c = collective_cost("AllGather", s, 16, 1, hw)
    b = table_bandwidth(hw, "AllGather", 2)
    assert c.algorithm == "ring (measured busbw)" and c.bus_bandwidth == pytest.approx(b)
    assert c.time_s == pytest.approx(BASE + 15 * 44e-6 + s * 15 / 16 / b)
    # dp group with one member per node on 8 nodes: 1/8 of the 8-node bandwidth term, 7 ring steps
    c = collective_cost("ReduceScatter", 1e9, 8, 8, hw)
    assert c.time_s == pytest.approx(BASE + 7 * 44e-6 + 1e9 * 7 / 8 / (table_bandwidth(hw, "ReduceScatter", 8) / 8))
    # without the size of the measurement the table is the bandwidth term as printed
    raw = hw.model_copy(update={"measured_busbw_bytes": None})
    assert table_bandwidth(raw, "AllGather", 4) == 119.0e9


def test_send_recv_and_tpu_paths():
    # stage boundary across nodes: 8.4 + 20 us + S / W2
    c = collective_cost("SendRecv", 1e8, 2, 8, H100)
    assert c.level == "scale-out" and c.time_s == pytest.approx(BASE + 2e-5 + 1e8 / W2)
    # TPU v5p slices over DCN stay hierarchical: 2 slices of 64 chips (3 torus axes), 1 GB AllGather:
    # ICI stage 63/64 S / (3 x 162 GB/s) = 2.03 ms, DCN stage S (1/128) / 5.31 GB/s = 1.47 ms, pipelined -> max
    v5p = HARDWARE["tpu-v5p"]
    w1, w2 = 1.8e11 * 0.9 * 3, 6.25e9 * 0.85
    c = collective_cost("AllGather", 1e9, 128, 1, v5p.model_copy(update={"scale_up_size": 64}))
    assert c.algorithm == "hierarchical" and c.level == "ICI"
    assert c.time_s == pytest.approx(max(1e9 * 63 / 64 / w1, 1e9 / 128 / w2) + 63 * 1e-6 + 2e-5)


def test_measured_table_is_validated(tmp_path):
    f = tmp_path / "hw.yaml"
    f.write_text("base: h100-sxm\nmeasured_busbw:\n  Broadcast: {2: 1.0e11}\n")
    with pytest.raises(ConfigError, match="measured_busbw"):
        load_hardware(str(f))
    f.write_text("base: h100-sxm\nmeasured_busbw:\n  AllGather: {2: -1.0}\n")
    with pytest.raises(ConfigError, match="measured_busbw"):
        load_hardware(str(f))
