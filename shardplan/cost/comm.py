"""Time of one collective: an alpha-beta model per collective and algorithm on a two-level network.

Units: bytes, seconds, bytes/s. ``S`` is the *full* logical buffer of one call (the result of
AllGather, the input of ReduceScatter / AllReduce); for AllToAll the per-device payload; for
SendRecv the message. A group of ``n`` devices whose members are ``stride`` ranks apart has ``n_1``
members in each scale-up domain (NVLink node / TPU slice) and spans ``n_2 = n / n_1`` domains.
``W_1 = scale_up_bandwidth x scale_up_efficiency`` (x torus axes spanned on TPUs, x the group's share of the links
on a fully connected mesh: :func:`mesh_share`), ``W_2 =
scale_out_bandwidth x scale_out_efficiency`` (per GPU), ``a_up`` / ``a_out`` the per-hop latencies
``scale_up_latency`` / ``scale_out_latency``, ``alpha_0 = collective_latency``.

**Bus bandwidth and message size.** Every call is priced ``T = alpha + S_bus / B`` where ``S_bus``
is what each device moves in nccl-tests' bus-bandwidth accounting (NVIDIA/nccl-tests
doc/PERFORMANCE.md): ``2(n-1)/n S`` for AllReduce, ``(n-1)/n S`` for AllGather, ReduceScatter and
AllToAll, ``S`` for send/recv, so ``B`` compares directly with an nccl-tests ``busbw``. The latency
term makes the achieved bus bandwidth depend on the message size, ``busbw(S) = B S_bus / (S_bus +
alpha B)``: half of ``B`` at ``S_bus = alpha B`` (PERFORMANCE.md, "Time": overhead + size / bw).

**Algorithms** (NVIDIA/nccl src/graph/tuning.cc v2.19-2.21 for the structure of the latencies;
Patarasuk & Yuan 2009 for the ring; Sanders, Speck & Traeff 2009 and Jeaugey, "Massively Scale
Your Deep Learning Training with NCCL 2.4", NVIDIA blog 2019, for the double binary tree):

* *Ring* AllGather / ReduceScatter / AllReduce -- **flat, not hierarchical**. NCCL lays one ring
  over all ``n`` ranks per channel; each ring crosses every node boundary once and channels are
  spread over the node's NICs (rail-optimized). Bandwidth: the ``S (n-1)/n`` bytes that cross a
  node boundary leave through the NICs of the group's ``n_1`` members in that node (the node's
  other GPUs drive the concurrent groups of the same axis), so ``B = min(W_1, n_1 W_2)`` across
  nodes (``n_1 W_2`` alone if ``n_1 = 1``) and ``B = W_1`` inside one. The Scaling Book's
  pipelined two-level formula gives the scale-out level only ``S (n_2-1)/(n_2 n_1 W_2)``; that
  ``(n_2-1)/n_2`` discount belongs to hierarchical algorithms, not to a ring (at ``n_2 = 2`` the
  ring moves 1.9x more through the NICs). Latency: ``alpha = alpha_0 + steps x a_hop`` with
  ``steps = n-1`` (AllGather, ReduceScatter) or ``2(n-1)`` (AllReduce) (tuning.cc ``nsteps``), and
  ``a_hop = a_out`` for **every** step once the ring leaves the node: each step forwards the chunk
  received in the previous one, so the ring advances at the pace of its slowest hop. (NCCL's own
  tuner charges ``a_out`` only on the ``n_2 - 1`` inter-node steps and 3.4 us on the others; that
  puts the latency of the rings below 5-7x under what they measure.) Evidence, the playbook
  cluster (AWS p5, EFA): its nccl-tests AllGather / ReduceScatter busbw at 256 MiB falls from
  185 GB/s on 2 nodes to 11 GB/s on 64 (shared/calibration/README.md); with ``B`` at the NIC
  bound 8 x 42.5 GB/s every one of the 12 entries is reproduced with ``a_out`` = 32-49 us per step
  (``usp-h100-efa.yaml``: the median, 44 us; leave-one-node-count-out error 11% median, 26% max),
  and the
  same constant predicts the extra per-microbatch cost of the playbook grid's tp = 16 / 32 rings
  over 2 / 4 nodes (+103 / +219 ms for 1B, +203 / +431 ms for 8B against tp = 8 in one node;
  measured +60 / +216 and +159 / +254 ms) without being fitted to those runs.
* *Tree* AllReduce (NCCL double binary tree) -- **hierarchical**: a chain through the ``n_1``
  local GPUs, a binary tree over the ``n_2`` nodes. ``alpha = alpha_0 + 2((n_1-1) a_up +
  ceil(log2 n_2) a_out)`` (tuning.cc, Tree latency). Each node sends and receives ``2 S
  (n_2-1)/n_2`` over its ``n_1`` NICs (each tree carries ``S/2`` and a node is interior in at most
  one of the two trees) and each GPU ``2 S`` over NVLink in the chain:
  ``T_bw = max(2S / W_1, 2S (n_2-1) / (n_2 n_1 W_2)) / c(S)`` with ``c(S)`` NCCL's measured
  medium-size tree correction (tuning.cc ``treeCorrectionFactor``, Simple: 0.5-0.9 between 512 KiB
  and 256 MiB). Only across nodes: inside one node the tree is a chain and never beats the ring.
* AllReduce takes the faster of ring and tree, as NCCL's tuner picks the algorithm of least
  modelled time (tuning.cc ``ncclTopoGetAlgoTime``). NVLink SHARP (NVLS) is not modelled
  analytically; a measured table carries it (H100 one-node AllReduce 436 GB/s against a 369 GB/s
  ring).
* *Pairwise* AllToAll (NCCL grouped send/recv to every peer, all in flight at once): the
  ``S_r (n-n_1)/n`` bytes per GPU that leave the node go through its NIC share, the rest over
  NVLink: ``T = alpha_0 + a_hop + (n-n_1) o_net + max(S_r (n_1-1)/(n W_1), S_r (n-n_1)/(n W_2))``
  with ``o_net = net_message_overhead`` the proxy's cost of posting one network message (LogP's
  ``o``, Culler et al. 1993; tuning.cc ``getNetOverhead``). Checked on nccl-tests AllToAll, AWS p5
  with EFA, 2 GiB (crazyguitar/aws-gpu-communication-benchmark data/nccl_alltoall.csv): algbw
  84.5 / 55.8 / 50.4 / 44.6 GB/s on 2 / 4 / 8 / 16 nodes; the formula gives 84.8 / 56.5 / 48.4 /
  45.1 GB/s.
* *Send/recv*: ``alpha_0 + a_hop + S / W`` on the link between the two devices.
* TPU slices joined by DCN -- **hierarchical** (XLA reduces over ICI inside the slice and over
  DCN on the slice-local shard; Scaling Book gpus.md / training.md): ``T = k (max(S (n_1-1)/(n_1
  W_1), S (n_2-1)/(n W_2)) + a_up (n_1-1) + a_out (n_2-1))``, ``k = 2`` for AllReduce. Inside a
  slice, the ring above over ICI (Scaling Book sharding.md).

**Measured bus bandwidth.** ``hw.measured_busbw[op][k]`` is nccl-tests busbw of a communicator
with all ``G = scale_up_size`` GPUs of each of ``k`` nodes, measured at buffer size
``S_m = measured_busbw_bytes``. It replaces the analytic ``B`` (GPUs): the entry's time
``S_bus / busbw`` minus the model's latency for that communicator is the bandwidth term,
``B_k = S_bus / (S_bus / busbw - alpha)``, at most the wire-speed bound (``S_m`` unset: ``B_k =
busbw``). ``B_k`` is interpolated linearly in ``log k`` between measured node counts and held
at the ends (the latency term carries the growth with k), and a group with ``n_1 < G`` members
per node gets ``B_k n_1 / G``: the measured communicator pushes its inter-node bytes through all
``G`` NICs of a node, ``B_k / G`` per NIC, and the group owns ``n_1`` of them. A group inside one
node uses the 1-node entry (NVLink per GPU does not depend on how many GPUs the group has). The
latency is always the algorithm's above: the table gives the bandwidth, the algorithm the
per-call latency. An AllReduce across nodes takes the faster of the algorithm its own entries
measured (tree latency; on H100 NCCL runs NVLS-tree there, whose inter-node bandwidth tuning.cc
halves beyond 2 nodes, hence 362 -> 160 GB/s from 2 to 4 nodes in the playbook table) and a ring
(ring latency, bandwidth from the ReduceScatter / AllGather entries): for large buffers the ring
wins, as in NCCL. Without a table the model still degrades with node count through the latency
(ring length, tree depth).

``calls`` prices a buffer moved in equal calls (DDP buckets, per-layer gathers): each pays the
latency. ``link_share`` is the fraction of the group's NICs left by concurrent traffic of another
axis (e.g. dp reductions while a tp ring crosses nodes); the caller decides it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

from shardplan.specs.hardware import HardwareSpec

Op = Literal["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv"]

#: NCCL's measured tree-bandwidth correction for medium messages, Simple protocol, indexed by
#: floor(log2(S / 64 B)) (64 B .. 256 MiB); 1 above (NVIDIA/nccl src/graph/tuning.cc
#: ``treeCorrectionFactor``, v2.19-2.21: "Trees are not perfectly sticking to the model for medium sizes")
TREE_CORRECTION_SIMPLE = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9)


@dataclass(frozen=True)
class CollectiveCost:
    """One collective: seconds (all ``calls`` of it), bytes each device sends, the network level that
    bounds it, the group's split, the algorithm priced, and its per-call latency (s) and bandwidth
    term (bytes/s of bus bandwidth)."""

    time_s: float
    bytes_per_device: float
    level: str  # scale-up name | scale-out name | 'local'
    n_local: int
    n_domains: int
    algorithm: str = "ring"
    latency_s: float = 0.0
    bus_bandwidth: float = 0.0


class Priced(NamedTuple):
    """One call: seconds, algorithm, latency (s), bus bandwidth (bytes/s), bounded by the scale-out level."""

    time_s: float
    algorithm: str
    latency_s: float
    bus_bw: float
    scale_out_bound: bool


def group_split(n: int, stride: int, domain: int) -> tuple[int, int]:
    """(members per scale-up domain, domains) of a group of ``n`` ranks spaced ``stride`` apart."""
    if n <= 1:
        return 1, 1
    if stride >= domain:
        return 1, n
    n1 = max(1, min(n, domain // stride))
    while n % n1:
        n1 -= 1
    return n1, n // n1


#: the fastest per-GPU one-way rate a PCIe link gives (bytes/s): PCIe Gen5 x16, 64 GB/s (PCI-SIG PCIe 5.0: 32 GT/s
#: x 16 lanes); every NVLink generation is faster (NVLink 1 on P100: 80 GB/s one-way), so a GPU scale-up level at
#: or below it is named PCIe (:func:`level_names`)
PCIE_MAX_BANDWIDTH = 64e9

#: the fastest scale-out rate one accelerator's NIC gives (bytes/s, one way): 800 Gb/s = 100 GB/s (NVIDIA ConnectX-8
#: SuperNIC datasheet, the B300 / GB300 nodes' NIC; 400 Gb/s ConnectX-7 on H100 / H200 / B200): a hardware file above
#: it per device most likely gives a node's aggregate as the per-device figure (:func:`implausible_network`)
FASTEST_NIC_BANDWIDTH = 100e9


def implausible_network(hw: HardwareSpec) -> str | None:
    """Why ``hw``'s per-device scale-out bandwidth cannot be one device's NIC, or None: above
    :data:`FASTEST_NIC_BANDWIDTH`, or not below its scale-up bandwidth on a GPU (a NIC slower than NVLink / Infinity
    Fabric / PCIe in every shipping node). New-user pass 56: ``scale_out_bandwidth: 400.0e9``, a node's 8 x 400 Gb/s
    typed per GPU, priced ep 16 across nodes as fast as inside one, without a word."""
    out, up = hw.scale_out_bandwidth, hw.scale_up_bandwidth
    if out > FASTEST_NIC_BANDWIDTH:
        return (f"scale_out_bandwidth {out / 1e9:,.0f} GB/s per device is above the fastest NIC one accelerator has "
                f"({FASTEST_NIC_BANDWIDTH / 1e9:.0f} GB/s = 800 Gb/s): the field is bytes/s per device, one way "
                f"(e.g. a node's {out / 1e9:,.0f} GB/s over 8 GPUs is {out / 8e9:,.1f} GB/s each)")
    if hw.kind == "gpu" and out >= up:
        return (f"scale_out_bandwidth {out / 1e9:,.1f} GB/s per device is not below scale_up_bandwidth "
                f"{up / 1e9:,.1f} GB/s: collectives across nodes are priced as fast as inside one")
    return None


def level_names(hw: HardwareSpec) -> tuple[str, str]:
    """Human names of the two network levels: NVLink / scale-out for NVIDIA GPUs, Infinity Fabric / scale-out for AMD
    Instinct GPUs (``compute_arch`` cdna*), PCIe / scale-out for GPUs whose scale-up bandwidth is a PCIe link's
    (:data:`PCIE_MAX_BANDWIDTH` or less: a PCIe-only node described with ``scale_up_bandwidth``), ICI / DCN for
    TPUs."""
    if hw.kind == "tpu":
        return "ICI", "DCN"
    if hw.scale_up_bandwidth <= PCIE_MAX_BANDWIDTH:
        return "PCIe", "scale-out"
    return ("Infinity Fabric" if (hw.compute_arch or "").startswith("cdna") else "NVLink"), "scale-out"


def bus_factor(op: str, n: int) -> float:
    """Bytes each device moves per byte of ``S``, nccl-tests doc/PERFORMANCE.md: AllReduce 2(n-1)/n;
    AllGather, ReduceScatter, AllToAll (n-1)/n; send/recv 1."""
    if op == "SendRecv":
        return 1.0
    return (2.0 if op == "AllReduce" else 1.0) * (n - 1) / n


def scale_up_bw(hw: HardwareSpec, n: int, stride: int) -> float:
    """Per-device scale-up ring bandwidth ``W_1`` (bytes/s): NVLink one-way x efficiency, or on TPUs the
    bidirectional ICI link x efficiency x torus axes the group spans (Scaling Book sharding.md); on a fully connected
    mesh (``scale_up_topology`` 'mesh': AMD Instinct MI300X / MI325X / MI355X platforms, one Infinity Fabric link to
    each of the 7 peers, AMD CDNA 3 white paper, "AMD Instinct MI300X platform") the ``k - 1`` links to the group's
    other members in the domain (:func:`mesh_share`)."""
    axes = hw.ici_axes_spanned(min(n * stride, hw.scale_up_size)) if hw.kind == "tpu" else 1
    return hw.scale_up_bandwidth * hw.scale_up_efficiency * axes * mesh_share(hw, n, stride)


def mesh_share(hw: HardwareSpec, n: int, stride: int) -> float:
    """The share of ``scale_up_bandwidth`` a group of ``n`` devices ``stride`` ranks apart gets in one scale-up
    domain: 1 behind a switch; on a full mesh ``(k - 1) / (G - 1)`` with ``k`` the group's members in the domain and
    ``G = scale_up_size`` (each device reaches each peer over its own link and a collective among ``k`` members can
    use only the links between them: RCCL builds its rings and direct AllToAll over those; a pair gets one link, 64 of
    448 GB/s on an MI300X). E.g. tp 2 on MI300X: 1/7; tp 4: 3/7; tp 8: 1."""
    if hw.scale_up_topology != "mesh" or hw.scale_up_size <= 2:
        return 1.0
    k = max(2, min(n, max(1, hw.scale_up_size // max(1, stride))))
    return (k - 1) / (hw.scale_up_size - 1)


def scale_out_bw(hw: HardwareSpec) -> float:
    """Per-device scale-out bandwidth ``W_2`` (bytes/s): the NIC share per GPU x efficiency."""
    return hw.scale_out_bandwidth * hw.scale_out_efficiency


def ring_bus_bw(hw: HardwareSpec, n: int, stride: int, n1: int, n2: int, share: float = 1.0) -> float:
    """Analytic ring bus bandwidth (bytes/s): ``W_1`` inside a domain; across domains the ``n_1`` NICs
    the group owns in each node, ``min(W_1, n_1 W_2)`` (module docstring). ``share`` is the fraction
    of those NICs left to this group by concurrent traffic of other axes."""
    w1 = scale_up_bw(hw, n, stride)
    if n2 == 1:
        return w1
    w_out = n1 * scale_out_bw(hw) * share
    return min(w1, w_out) if n1 > 1 else w_out


def ring_latency(hw: HardwareSpec, op: str, n: int, n2: int) -> float:
    """Ring latency (s): base + steps x hop latency (module docstring; tuning.cc ``nsteps``). Across
    nodes, ``hw.ring_latency`` decides the hop: 'slowest_hop' pays ``a_out`` on every step; 'per_link'
    (NCCL's tuner) pays ``a_out`` on the ``n_2 - 1`` node-crossing steps of each pass and ``a_up``
    on the other ``n - n_2`` (passes: 1, AllReduce 2)."""
    passes = 2 if op == "AllReduce" else 1
    if n2 > 1 and hw.ring_latency == "per_link":
        return hw.collective_latency + passes * ((n2 - 1) * hw.scale_out_latency + (n - n2) * hw.scale_up_latency)
    hop = hw.scale_out_latency if n2 > 1 else hw.scale_up_latency
    return hw.collective_latency + passes * (n - 1) * hop


def tree_latency(hw: HardwareSpec, n1: int, n2: int) -> float:
    """Tree AllReduce latency (s): base + 2 ((n1-1) a_up + ceil(log2 n2) a_out) (tuning.cc, Tree)."""
    depth = math.ceil(math.log2(n2)) if n2 > 1 else 0
    return hw.collective_latency + 2 * ((n1 - 1) * hw.scale_up_latency + depth * hw.scale_out_latency)


def a2a_latency(hw: HardwareSpec, n: int, n1: int, n2: int) -> float:
    """Pairwise AllToAll latency (s): base + the slowest hop + one network post per remote peer."""
    hop = hw.scale_out_latency if n2 > 1 else hw.scale_up_latency
    return hw.collective_latency + hop + (n - n1) * hw.net_message_overhead


def model_latency(hw: HardwareSpec, op: str, n: int, n1: int, n2: int) -> float:
    """Per-call latency (s) of the algorithm the model prices with a measured table: ring; for
    AllReduce across nodes the smaller of ring and tree; pairwise for AllToAll."""
    if op == "AllToAll":
        return a2a_latency(hw, n, n1, n2)
    lat = ring_latency(hw, op, n, n2)
    if op == "AllReduce" and n2 > 1:
        lat = min(lat, tree_latency(hw, n1, n2))
    return lat


def measured_bus_bw(hw: HardwareSpec, op: str, n1: int, n2: int, share: float = 1.0) -> float | None:
    """Bandwidth term ``B`` (bytes/s) from ``hw.measured_busbw[op]`` for a group of ``n1`` members on
    each of ``n2`` nodes, or None without a usable entry (a group inside one node uses the 1-node
    entry, one across nodes the entries for >= 2 nodes). Entries become bandwidth terms
    (:func:`table_bandwidth`), interpolated linearly in ``log k`` between measured node counts and
    held at the nearest end outside them (the latency term carries the further growth with k), then
    multiplied by the group's NIC share ``n1 / scale_up_size`` (and ``share``) across nodes."""
    ks = sorted(k for k in hw.measured_busbw.get(op, {}) if (k > 1) == (n2 > 1))
    if not ks:
        return None
    k = min(max(n2, ks[0]), ks[-1])
    lo = max(x for x in ks if x <= k)
    hi = min(x for x in ks if x >= k)
    b = table_bandwidth(hw, op, lo)
    if hi != lo:
        f = (math.log(k) - math.log(lo)) / (math.log(hi) - math.log(lo))
        b += f * (table_bandwidth(hw, op, hi) - b)
    if n2 == 1:  # on a full mesh a smaller group owns fewer links than the full-node communicator measured
        return b * (mesh_share(hw, n1, 1) if n1 < hw.scale_up_size else 1.0)
    return b * min(1.0, n1 / hw.scale_up_size) * share


def table_bandwidth(hw: HardwareSpec, op: str, k: int) -> float:
    """Bandwidth term (bytes/s) of the full-node communicator (``G = scale_up_size`` GPUs on each of
    ``k`` nodes) implied by its measured busbw ``b`` at buffer size ``S_m = measured_busbw_bytes``:
    the measured time ``S_bus / b`` minus the model's latency for that communicator,
    ``B = S_bus / (S_bus / b - alpha)``, at most the wire-speed bound :func:`raw_bus_bw`. Without
    ``S_m`` the table is the large-message bandwidth itself, at most the wire-speed bound."""
    b = hw.measured_busbw[op][k]
    if hw.measured_busbw_bytes is None:
        return min(b, raw_bus_bw(hw, op, hw.scale_up_size, k))
    g = hw.scale_up_size
    n = g * k
    s_bus = hw.measured_busbw_bytes * bus_factor(op, n)
    lat = model_latency(hw, op, n, g, k)
    return s_bus / max(s_bus / b - lat, s_bus / raw_bus_bw(hw, op, g, k))


def raw_bus_bw(hw: HardwareSpec, op: str, g: int, k: int) -> float:
    """Wire-speed bus bandwidth (bytes/s, efficiencies 1) of ``g`` GPUs on each of ``k`` nodes: NVLink
    one-way inside a node; across nodes the ring bound ``min(W_up, g W_out)``, the tree AllReduce
    bound ``(n-1)/n min(W_up, k g W_out / (k-1))``, AllToAll ``(n-1)/n W_out n / (n-g)``."""
    up, out = hw.scale_up_bandwidth, hw.scale_out_bandwidth
    n = g * k
    if k == 1:
        return up
    if op == "AllReduce":
        return (n - 1) / n * min(up, k * g * out / (k - 1))
    if op == "AllToAll":
        return (n - 1) / n * out * n / (n - g)
    return min(up, g * out)


def tree_correction(size: float) -> float:
    """NCCL's tree bandwidth factor for a buffer of ``size`` bytes (:data:`TREE_CORRECTION_SIMPLE`)."""
    i = int(math.log2(max(size, 64.0) / 64))
    return TREE_CORRECTION_SIMPLE[i] if i < len(TREE_CORRECTION_SIMPLE) else 1.0


def _tree_bw_time(hw: HardwareSpec, size: float, n: int, stride: int, n1: int, n2: int, share: float) -> float:
    """Bandwidth term of the tree AllReduce (s): max(2S/W_1, 2S (n2-1)/(n2 n1 W_2)) / NCCL's
    medium-size correction (module docstring)."""
    t_up = 2 * size / scale_up_bw(hw, n, stride) if n1 > 1 else 0.0
    t_out = 2 * size * (n2 - 1) / (n2 * n1 * scale_out_bw(hw) * share)
    return max(t_up, t_out) / tree_correction(size)


def _analytic(op: str, size: float, n: int, stride: int, hw: HardwareSpec, n1: int, n2: int,
              share: float) -> Priced:
    """One call priced without a measured table (module docstring)."""
    s_bus = size * bus_factor(op, n)
    if op == "AllToAll":
        t1 = size * (n1 - 1) / (n * scale_up_bw(hw, n, stride))
        t2 = size * (n - n1) / (n * scale_out_bw(hw) * share)
        lat, t_bw = a2a_latency(hw, n, n1, n2), max(t1, t2)
        return Priced(lat + t_bw, "pairwise", lat, s_bus / t_bw if t_bw > 0 else 0.0, n2 > 1 and t2 >= t1)
    if hw.kind == "tpu" and n2 > 1:
        return _tpu_hierarchical(op, size, n, stride, hw, n1, n2)
    b = ring_bus_bw(hw, n, stride, n1, n2, share)
    lat = ring_latency(hw, op, n, n2)
    best = Priced(lat + s_bus / b, "ring", lat, b, n2 > 1 and b < scale_up_bw(hw, n, stride))
    if op == "AllReduce" and n2 > 1 and hw.kind == "gpu":
        t_bw = _tree_bw_time(hw, size, n, stride, n1, n2, share)
        lat_t = tree_latency(hw, n1, n2)
        if lat_t + t_bw < best.time_s:
            t_up = 2 * size / scale_up_bw(hw, n, stride) if n1 > 1 else 0.0
            best = Priced(lat_t + t_bw, "tree", lat_t, s_bus / t_bw, t_bw * tree_correction(size) > t_up)
    return best


def _tpu_hierarchical(op: str, size: float, n: int, stride: int, hw: HardwareSpec, n1: int,
                      n2: int) -> Priced:
    """TPU slices over DCN: ICI stage and DCN stage pipelined (module docstring), x2 for AllReduce."""
    t1 = size * (n1 - 1) / (n1 * scale_up_bw(hw, n, stride)) if n1 > 1 else 0.0
    t2 = size * (n2 - 1) / (n * scale_out_bw(hw))
    k = 2.0 if op == "AllReduce" else 1.0
    lat = k * (hw.scale_up_latency * (n1 - 1) + hw.scale_out_latency * (n2 - 1))
    t_bw = k * max(t1, t2)
    return Priced(lat + t_bw, "hierarchical", lat, size * bus_factor(op, n) / t_bw, t2 >= t1)


def _with_table(op: str, size: float, n: int, stride: int, hw: HardwareSpec, n1: int, n2: int,
                share: float) -> Priced | None:
    """One call priced with the measured bus-bandwidth table (GPUs), or None without one. AllReduce
    across nodes: the faster of the tree-like algorithm the AllReduce entries measured (bandwidth
    from them, tree latency) and a ring (ring latency; bandwidth from the ReduceScatter / AllGather
    entries, else the analytic ring), as NCCL's tuner picks ring for large buffers."""
    if hw.kind != "gpu":
        return None
    b = measured_bus_bw(hw, op, n1, n2, share)
    if b is None:
        return None
    lat = model_latency(hw, op, n, n1, n2)
    s_bus = size * bus_factor(op, n)
    if op == "AllToAll":
        return Priced(lat + s_bus / b, "pairwise (measured busbw)", lat, b, n2 > 1)
    if op != "AllReduce" or n2 == 1:
        return Priced(lat + s_bus / b, "ring (measured busbw)", lat, b, n2 > 1)
    b_ring = (measured_bus_bw(hw, "ReduceScatter", n1, n2, share) or measured_bus_bw(hw, "AllGather", n1, n2, share)
              or ring_bus_bw(hw, n, stride, n1, n2, share))
    lat_ring, lat_tree = ring_latency(hw, op, n, n2), tree_latency(hw, n1, n2)
    if lat_ring + s_bus / b_ring < lat_tree + s_bus / b:
        return Priced(lat_ring + s_bus / b_ring, "ring (measured busbw)", lat_ring, b_ring, True)
    return Priced(lat_tree + s_bus / b, "tree (measured busbw)", lat_tree, b, True)


#: collective_cost results per hardware object (HardwareSpec is frozen, so a result depends only on
#: the arguments); the entry keeps the object so that a recycled id() never matches another spec
_MEMO: dict[int, tuple[HardwareSpec, dict[tuple, CollectiveCost]]] = {}
_MEMO_MAX = 200_000


def collective_cost(op: Op, size_bytes: float, n: int, stride: int, hw: HardwareSpec, *,
                    calls: int = 1, link_share: float = 1.0) -> CollectiveCost:
    """Time of a collective (:func:`price_collective`, memoized per hardware spec: the search
    prices the same collective for many layouts)."""
    entry = _MEMO.get(id(hw))
    if entry is None or entry[0] is not hw:
        if len(_MEMO) > 64:
            _MEMO.clear()
        entry = _MEMO[id(hw)] = (hw, {})
    key = (op, size_bytes, n, stride, calls, link_share)
    hit = entry[1].get(key)
    if hit is None:
        if len(entry[1]) > _MEMO_MAX:
            entry[1].clear()
        hit = entry[1][key] = price_collective(op, size_bytes, n, stride, hw, calls=calls, link_share=link_share)
    return hit


def price_collective(op: Op, size_bytes: float, n: int, stride: int, hw: HardwareSpec, *,
                     calls: int = 1, link_share: float = 1.0) -> CollectiveCost:
    """Time of a collective (module docstring for the formulas and their sources).

    Args:
        op: AllReduce, AllGather, ReduceScatter, AllToAll or SendRecv.
        size_bytes: full buffer S (bytes), summed over ``calls``; for AllToAll the per-device
            payload; for SendRecv the message.
        n: devices in the group (for SendRecv: 2 if the peers are in different domains, else 1).
        stride: rank distance between consecutive group members (product of the inner axes).
        hw: the hardware.
        calls: the buffer moves in this many equal calls (DDP buckets, per-layer gathers): each
            pays the latency and moves ``size_bytes / calls``.
        link_share: fraction (0, 1] of the group's scale-out NICs left to it by concurrent traffic
            of other axes (1 = none).

    Returns:
        :class:`CollectiveCost` (seconds for all calls, bytes per device, bounding level).
    """
    if n <= 1 and op != "SendRecv":
        return CollectiveCost(0.0, 0.0, "local", 1, 1, "none")
    calls = max(1, int(calls))
    per_call = size_bytes / calls
    names = level_names(hw)
    share = min(1.0, max(link_share, 1e-6))
    if op == "SendRecv":
        cross = stride >= hw.scale_up_size
        w = scale_out_bw(hw) * share if cross else scale_up_bw(hw, 2, stride)
        lat = hw.collective_latency + (hw.scale_out_latency if cross else hw.scale_up_latency)
        return CollectiveCost(calls * (lat + per_call / w), size_bytes, names[1] if cross else names[0], 1, 1,
                              "p2p", lat, w)
    n1, n2 = group_split(n, stride, hw.scale_up_size)
    priced = (_with_table(op, per_call, n, stride, hw, n1, n2, share)
              or _analytic(op, per_call, n, stride, hw, n1, n2, share))
    # the bounding level: the bandwidth-bound level, or the scale-out one for a call of a group that crosses
    # domains whose time is mostly latency (the crossing's hops set it; breaker 58: a tp 16 group's small
    # AllReduces read "NVLink" although the group spans two nodes)
    out = priced.scale_out_bound or (n2 > 1 and 2 * priced.latency_s >= priced.time_s)
    return CollectiveCost(calls * priced.time_s, size_bytes * bus_factor(op, n), names[int(out)],
                          n1, n2, priced.algorithm, priced.latency_s, priced.bus_bw)
