"""XLA's GPU cost model (hlo_indexing.cost_model.gpu*) against hand computations.

Every expected value below is worked out in the test from the rules of
``/work/shared/notes/xla-gpu-cost-model.md`` (the sections are named) and the device's
published figures, not taken from the code: the softmax of the notes' worked example
on XLA's A6000 test device, the warp thresholds, the register rule, the flop table, the
coalescing rates, the compute rates and XLA's A6000 gemm tests (through the audit of
their own block-level configs). The corpus itself is checked by
``test_gpu_model_conformance.py``.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from hlo_indexing.cost_model.audit import audit_tilings
from hlo_indexing.cost_model.gpu import (
    SpaceFactory,
    assess_symbolic,
    best_symbolic,
    estimate_experimental,
    estimate_symbolic,
    experimental_computation,
)
from hlo_indexing.cost_model.gpu_op_costs import mlir_flops_per_element
from hlo_indexing.cost_model.gpu_rates import effective_flops_per_ns, peak_matrix_ops_per_ns
from hlo_indexing.devices import GpuDevice, device
from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import parse_hlo_graph
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion
from tiling_fixtures import hlo_fusion

A6000 = device("a6000-test")
H100 = device("h100-test")
_KEEP: list[object] = []  # modules outlive the analyses that point into them


def _float32(value: float) -> float:
    """``value`` rounded to a C++ float, as XLA stores the clock."""
    return struct.unpack("f", struct.pack("f", value))[0]


def unary(shape: str, opcode: str = "negate") -> TiledFusion:
    return hlo_fusion(f"""HloModule m
f {{
  p0 = {shape} parameter(0)
  ROOT r = {shape} {opcode}(p0)
}}
ENTRY e {{
  p0 = {shape} parameter(0)
  ROOT fusion = {shape} fusion(p0), kind=kCustom, calls=f
}}""", "f")


SOFTMAX = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
softmax {
  p0 = f32[ROWS,COLS] parameter(0)
  p1 = f32[COLS] parameter(1)
  b0 = f32[ROWS,COLS] broadcast(p1), dimensions={1}
  m0 = f32[ROWS,COLS] multiply(p0, b0)
  c0 = f32[] constant(0)
  r = f32[ROWS] reduce(m0, c0), dimensions={1}, to_apply=add
  b4 = f32[ROWS,COLS] broadcast(r), dimensions={0}
  ROOT m = f32[ROWS,COLS] multiply(m0, b4)
}
ENTRY e {
  x = f32[ROWS,COLS] parameter(0)
  y = f32[COLS] parameter(1)
  ROOT fusion = f32[ROWS,COLS] fusion(x, y), kind=kCustom, calls=softmax
}"""


def softmax(rows: int, cols: int) -> TiledFusion:
    return hlo_fusion(SOFTMAX.replace("ROWS", str(rows)).replace("COLS", str(cols)), "softmax")


# ------------------------------------------------------------ §9 the worked example


def test_the_softmax_on_the_a6000_is_the_worked_example():
    """§9: f32[512,911], tile [1,911], 2 warps on XLA's A6000 test device."""
    got = estimate_symbolic(softmax(512, 911), [1, 911], A6000, num_warps=2)
    bandwidth = 768_096_000_000  # bytes/s (devices.json)
    assert A6000.memory_bandwidth_bytes_per_second == bandwidth
    blocks = 512
    row = 911 * 4  # bytes of one tile row, 3644
    rate = row / (64 * math.ceil(row / 64))  # §7: 3644 / 3648
    # §5: two multiplies (3 flops each, f32 multiply is not in sm_86's table) on padded
    # [1,1024] tiles, the reduce (1024 - 1) * 3 per output element.
    flops = blocks * (3 * 1024 + 3 * 1024 + (1024 - 1) * 3)
    assert flops == 4_717_056
    # §6: p0 once from DRAM; p1 (3644 bytes) read by every block: its first 3644 bytes from
    # DRAM, the rest from cache at 2.5 x 8 the bandwidth (it fits in 2 KiB x 84 SMs).
    p0_ns = blocks * row / (bandwidth * rate) * 1e9
    p1_ns = (row / (bandwidth * rate) + (blocks * row - row) / (bandwidth * 2.5 * 8)) * 1e9
    # §8: the write at the root tile's rate (the bandwidth truncated to an integer).
    write_ns = 512 * 911 * 4 / int(rate * bandwidth) * 1e9
    lanes_x_cores = 2 * 32 * 84
    flops_per_ns = int(lanes_x_cores * _float32(_float32(1.41) * 2))
    assert flops_per_ns == 15_160
    compute_ns = flops / flops_per_ns
    memory_ns = p0_ns + p1_ns + write_ns
    exec_ns = compute_ns + memory_ns - 0.95 * min(compute_ns, memory_ns)

    assert (got.bytes_read, got.bytes_written, got.flops, got.num_blocks, got.num_warps) == (
        3_731_456, 1_865_728, flops, blocks, 2)
    assert got.read_time_ns == pytest.approx(p0_ns + p1_ns, rel=1e-6)
    assert got.write_time_ns == pytest.approx(write_ns, rel=1e-6)
    assert got.compute_time_ns == pytest.approx(compute_ns, rel=1e-6)
    assert got.exec_time_ns == pytest.approx(exec_ns, rel=1e-6)
    assert 4_000 <= got.exec_time_ns <= 6_000  # XLA's test: 5 us +- 1 us
    labels = [item.label for item in got.breakdown]
    assert any("p0" in label for label in labels) and any("p1" in label for label in labels)


def test_the_best_softmax_tiling_takes_four_rows():
    """§11: the symbolic search's best softmax tiling is [4, 911] (128 blocks of 4 rows,
    4 warps by §10 since the padded tile is 4 x 1024)."""
    best = best_symbolic(softmax(512, 911), A6000)[0]
    assert best.tile_sizes == (4, 911)
    assert best.block_level_parameters.output_tile_sizes == ((4, 911),)
    assert best.block_level_parameters.num_warps == 4


# ------------------------------------------------------------ §10 number of warps


@pytest.mark.parametrize(("size", "warps"), [
    (256, 1), (257, 2), (1024, 2), (1025, 4), (4096, 4), (4097, 8), (16384, 8)])
def test_warps_follow_the_largest_padded_tile(size, warps):
    got = estimate_symbolic(unary(f"f32[{size}]"), [size], A6000)
    assert got.num_warps == warps


def test_warps_count_operand_tiles_of_a_reduce():
    """§10: a reduce of f32[1,4096] with output tile [1] reads a [1,4096] tile: 4 warps;
    f32[9,9,9] tiled whole pads to 4096 elements: 4 warps."""
    reduce = hlo_fusion("""HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[1,4096] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[1] reduce(p0, c), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32[1,4096] parameter(0)
  ROOT fusion = f32[1] fusion(p0), kind=kCustom, calls=f
}""", "f")
    assert estimate_symbolic(reduce, [1], A6000).num_warps == 4
    assert estimate_symbolic(unary("f32[9,9,9]", "exponential"), [9, 9, 9], A6000).num_warps == 4


# ------------------------------------------------------------ §8 the register rule


def test_the_register_rule_is_forty_percent_of_the_block_registers():
    """§8: a tile above 0.4 x 65536 = 26214.4 padded elements makes the estimate
    infinite, reported as gpu.register-spill; [1,16000] (16384 padded) fits, [2,16000]
    (32768) does not."""
    assert A6000.registers_per_block_limit == 65_536
    fusion = softmax(4, 16000)
    fits = assess_symbolic(fusion, [1, 16000], A6000)
    assert fits.legal and not fits.estimate.is_infinite
    spills = assess_symbolic(fusion, [2, 16000], A6000)
    assert spills.estimate.is_infinite
    assert [r.rule for r in spills.rejections] == ["gpu.register-spill"]
    assert "32768" in spills.rejections[0].message and "65536" in spills.rejections[0].message
    # the bound itself: 16384 elements fit, 16385 (padded 32768) do not
    assert not estimate_symbolic(unary("f32[16384]"), [16384], A6000).is_infinite
    assert estimate_symbolic(unary("f32[16385]"), [16385], A6000).is_infinite


# ------------------------------------------------------------ §5 flops per element


def _root_flops(hlo_root: str, operands: str, device_: GpuDevice = A6000) -> int:
    module = hlo_source.import_hlo(f"""HloModule m
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
{operands}
  ROOT r = {hlo_root}
}}""", "flops.hlo")
    _KEEP.append(module)
    return mlir_flops_per_element(hlo_source.root_op(hlo_source.entry(module)), device_)


@pytest.mark.parametrize(("root", "operands", "flops"), [
    # the sm_86 profile (the A6000 test device is 8.9, which has no profile of its own)
    ("f32[8] exponential(p)", "  p = f32[8] parameter(0)", 86),
    ("f32[8] cosine(p)", "  p = f32[8] parameter(0)", 662),
    ("f32[8] log(p)", "  p = f32[8] parameter(0)", 244),
    ("f32[8] power(p, p)", "  p = f32[8] parameter(0)", 925),
    ("s32[8] divide(p, p)", "  p = s32[8] parameter(0)", 306),
    # not in the table: 3
    ("f32[8] add(p, p)", "  p = f32[8] parameter(0)", 3),
    ("f32[8] maximum(p, p)", "  p = f32[8] parameter(0)", 3),
    # free
    ("f32[8,2] broadcast(p), dimensions={0}", "  p = f32[8] parameter(0)", 0),
    ("f32[4] slice(p), slice={[0:4]}", "  p = f32[8] parameter(0)", 0),
    # reduce: (product of padded reduced sizes - 1) x the reducer's flops: (16*16-1)*3
    ("f32[10] reduce(p, c), dimensions={1,2}, to_apply=add",
     "  p = f32[10,15,9] parameter(0)\n  c = f32[] constant(0)", 765),
    # dot: 2 x contracted size
    ("f32[128,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "  a = f32[128,257] parameter(0)\n  b = f32[257,64] parameter(1)", 514),
    # concatenate: 400 when the first operand's size along a non-0 dimension is not a
    # multiple of 32, else 6
    ("f32[4,40] concatenate(a, b), dimensions={1}", "  a = f32[4,20] parameter(0)\n  b = f32[4,20] parameter(1)", 400),
    ("f32[4,64] concatenate(a, b), dimensions={1}", "  a = f32[4,32] parameter(0)\n  b = f32[4,32] parameter(1)", 6),
    ("f32[40,4] concatenate(a, b), dimensions={0}", "  a = f32[20,4] parameter(0)\n  b = f32[20,4] parameter(1)", 6),
])
def test_flops_per_element(root, operands, flops):
    assert _root_flops(root, operands) == flops


CONCATENATED_ROWS = """HloModule m
f {
  p0 = f32[8,64] parameter(0)
  p1 = f32[24,64] parameter(1)
  l = f32[8,64] log(p0)
  ROOT c = f32[32,64] concatenate(l, p1), dimensions={0}
}
ENTRY e {
  p0 = f32[8,64] parameter(0)
  p1 = f32[24,64] parameter(1)
  ROOT fusion = f32[32,64] fusion(p0, p1), kind=kCustom, calls=f
}"""


def test_a_concatenate_in_single_rows_costs_the_same_on_both_tiling_paths():
    """§4-§6: f32[32,64] = concatenate(log(f32[8,64]), f32[24,64]) in [1,64] tiles is 32
    blocks; the operands' regions count 32*8/32 = 8 and 32*24/32 = 24 blocks. Flops: the
    concatenate 6 x 64 x 32 plus the log 244 x 64 x 8; bytes read: 8 + 24 rows of 256
    bytes. The experimental path tiles the concatenate too: a row tile (size 1 along
    the concatenated dimension) starts at a multiple of 1 wherever it is."""
    expected_flops = 6 * 64 * 32 + 244 * 64 * 8
    expected_bytes = (8 + 24) * 64 * 4
    symbolic = estimate_symbolic(hlo_fusion(CONCATENATED_ROWS, "f"), [1, 64], A6000, num_warps=1)
    graph = parse_hlo_graph(CONCATENATED_ROWS)
    experimental = estimate_experimental(
        experimental_computation(graph, SpaceFactory(graph)(), [1, 64]), graph, A6000, num_warps=1)
    for got in (symbolic, experimental):
        assert (got.flops, got.bytes_read, got.bytes_written) == (expected_flops, expected_bytes, 32 * 64 * 4)


# ------------------------------------------------------------ §7 coalescing


def test_uncoalesced_reads_are_eight_times_slower():
    """§7: f32[2048,512] read as [2,128] tiles moves 512 contiguous bytes (rate 1), as
    [128,2] tiles 8 bytes of a 64-byte transaction (rate 1/8): the same bytes, all from
    DRAM, 8x the read time."""
    fusion = unary("f32[2048,512]")
    wide = estimate_symbolic(fusion, [2, 128], A6000, num_warps=4)
    tall = estimate_symbolic(fusion, [128, 2], A6000, num_warps=4)
    assert wide.bytes_read == tall.bytes_read == 2048 * 512 * 4
    assert tall.read_time_ns / wide.read_time_ns == pytest.approx(8.0, rel=1e-6)
    assert wide.read_time_ns == pytest.approx(2048 * 512 * 4 / 768_096_000_000 * 1e9, rel=1e-6)


def test_uncoalesced_writes_are_four_times_slower():
    """§7: s8[2048,512] written as [16,128] tiles (128 bytes: rate 1) or [128,16] tiles
    (16 of 64 bytes: rate 1/4)."""
    fusion = unary("s8[2048,512]")
    wide = estimate_symbolic(fusion, [16, 128], A6000, num_warps=4)
    tall = estimate_symbolic(fusion, [128, 16], A6000, num_warps=4)
    assert tall.write_time_ns / wide.write_time_ns == pytest.approx(4.0, rel=1e-9)
    assert wide.write_time_ns == pytest.approx(2048 * 512 / 768_096_000_000 * 1e9, rel=1e-9)


def test_a_whole_dimension_tile_reads_the_dimension_not_its_padding():
    """§6: a [65,65] tile of f32[65,65] reads 65 x 65 elements, not 128 x 128."""
    got = estimate_symbolic(unary("f32[65,65]"), [65, 65], A6000)
    assert got.bytes_read == 65 * 65 * 4


# ------------------------------------------------------------ §8 compute rates


def test_effective_flops_per_ns():
    """§8: lanes (threads, at most fpus_per_core) x SMs (blocks, at most core_count) x
    clock x 2."""
    def hand(device_: GpuDevice, blocks: int, threads: int) -> int:
        clock2 = _float32(_float32(device_.clock_rate_ghz) * 2)
        return int(min(threads, device_.fpus_per_core) * min(blocks, device_.core_count) * clock2)

    def rate(device_: GpuDevice, blocks: int, threads: int) -> int:
        return int(effective_flops_per_ns(device_, np.asarray([blocks]), np.asarray([threads]))[0])

    assert rate(A6000, 512, 64) == hand(A6000, 512, 64) == 15_160
    assert rate(A6000, 512, 128) == hand(A6000, 512, 128) == 30_320
    assert rate(A6000, 1, 32) == hand(A6000, 1, 32)
    assert rate(H100, 1000, 1024) == hand(H100, 1000, 1024) == 66_908


def test_peak_matrix_rate_of_the_h100_tensor_cores():
    """§8: clock (0.924 of 1.98 GHz, as a float) x 512 ops per clock x 2 x 132 SMs x 4
    units for BF16; the A6000 test device has no tables: its scalar full-occupancy rate."""
    rate = H100.matrix_rate("bf16")
    assert rate is not None and (rate.ops_per_clock, rate.units_per_core) == (512, 4)
    hand = int(_float32(rate.clock_rate_ghz) * 512 * 2 * (132 * 4))
    assert peak_matrix_ops_per_ns(H100, "bf16") == hand
    assert abs(hand - 989_166) < 100  # the notes' value
    assert peak_matrix_ops_per_ns(A6000, "bf16") == 30_320


# ------------------------------------------------------------ §12 dots: XLA's A6000 gemm tests

GEMM = """HloModule m
triton_dot {{
  p0 = bf16[{m},{k}] parameter(0)
  p1 = bf16[{k},{n}] parameter(1)
  ROOT dot = bf16[{m},{n}] dot(p0, p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}},
    backend_config={{"sizes":["{block_k}"]}}
}}
ENTRY e {{
  p0 = bf16[{m},{k}] parameter(0)
  p1 = bf16[{k},{n}] parameter(1)
  ROOT gemm = bf16[{m},{n}] fusion(p0, p1), kind=kCustom, calls=triton_dot,
    backend_config={{"fusion_backend_config": {{"kind": "__triton_nested_gemm_fusion", "block_level_fusion_config":{{"output_tiles":[{{"sizes":["{tm}", "{tn}"]}}],"num_warps":"4","num_stages":"{stages}","num_ctas":"1"}}}}}}
}}"""


def _gemm_audit(m: int, k: int, n: int, block_k: int, tm: int, tn: int, stages: int):
    text = GEMM.format(m=m, k=k, n=n, block_k=block_k, tm=tm, tn=tn, stages=stages)
    module = hlo_source.import_hlo(text, "gemm.hlo")
    _KEEP.append(module)
    (audit,) = audit_tilings(module, A6000)
    return audit


def test_the_compute_bound_gemm():
    """§12: 8192^3 bf16, 128 x 128 tiles, K step 32, 3 stages: 4096 threadblocks in 49
    waves of 84, 2 x 128 x 128 x 8192 x 49 x 84 quantised flops at the scalar rate
    30320 flops/ns; XLA's test bounds the time in [1, 1.1] x that; the notes' figure
    is 37.57 ms."""
    audit = _gemm_audit(8192, 8192, 8192, 32, 128, 128, 3)
    assert sorted(audit.tile_sizes) == [32, 128, 128]  # the output tile and the K step
    assert audit.legal and audit.covers_once
    waves = math.ceil(64 * 64 / 84)
    quantised_ns = 2 * 128 * 128 * 8192 * waves * 84 / 30_320
    assert quantised_ns == pytest.approx(36.44e6, rel=1e-3)
    assert quantised_ns <= audit.estimate.exec_time_ns <= 1.1 * quantised_ns
    assert audit.estimate.exec_time_ns == pytest.approx(37.57e6, rel=1e-3)


def test_the_memory_bound_gemm():
    """§12: [4,4096] x [4096,4096] bf16 moves 33,619,968 bytes; XLA's test bounds the time
    by [1, 1.1] x the HBM time at 0.601 of 768 GB/s plus one loop latency (1.3 us) —
    the notes give 72.8 us + 1.3 us and a model value of 76.9 us."""
    audit = _gemm_audit(4, 4096, 4096, 128, 4, 128, 3)
    moved = (4 * 4096 + 4096 * 4096 + 4 * 4096) * 2
    assert moved == 33_619_968
    hbm_ns = moved / (0.601 * 768.096)
    assert hbm_ns == pytest.approx(72.8e3, rel=1e-3)
    assert hbm_ns + 1300 <= audit.estimate.exec_time_ns * 1.01
    assert audit.estimate.exec_time_ns <= 1.1 * (hbm_ns + 1300)
    assert audit.estimate.exec_time_ns == pytest.approx(76.9e3, rel=1e-3)


def test_a_256_by_512_gemm_tile_spills():
    """§12/§8: the 256 x 512 output tile pads to 131072 elements, above 26214.4: the
    estimate is infinite, and the [32, 512] rhs tile is wider than Triton's 256."""
    audit = _gemm_audit(8192, 8192, 8192, 32, 256, 512, 1)
    assert audit.estimate.is_infinite
    assert {r.rule for r in audit.rejections} == {"gpu.register-spill", "triton.dot-operand-tile"}
    assert not audit.legal


def test_the_overflow_fusion():
    """§9, last paragraph: f16[131076,16384] tiled [1,1] with 1 warp: about 2.1e9 blocks,
    7.04e13 bytes at 1/32 of 768 GB/s (the operand does not fit in L2): ~2932 s."""
    fusion = hlo_fusion("""HloModule m
add {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
f {
  p0 = f16[131076,16384] parameter(0)
  c = f16[] constant(0)
  r = f16[131076] reduce(p0, c), dimensions={1}, to_apply=add
  b = f16[131076,16384] broadcast(r), dimensions={0}
  ROOT s = f16[131076,16384] subtract(p0, b)
}
ENTRY e {
  p0 = f16[131076,16384] parameter(0)
  ROOT fusion = f16[131076,16384] fusion(p0), kind=kCustom, calls=f
}""", "f")
    got = estimate_symbolic(fusion, [1, 1], A6000, num_warps=1)
    blocks = 131076 * 16384
    assert got.num_blocks == blocks
    read = blocks * (1 + 16384) * 2  # a [1,1] and a [1,16384] tile of p0 per block
    assert got.bytes_read == read
    assert got.read_time_ns == pytest.approx(read / (768_096_000_000 / 32) * 1e9, rel=1e-3)
    assert got.read_time_ns == pytest.approx(2932e9, rel=1e-3)
