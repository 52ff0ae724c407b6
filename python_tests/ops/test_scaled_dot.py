"""XLA's ``scaled-dot`` (issue 27, tiling parity): imported as a custom call (XLA's
translator has no scaled dot), its per-op maps equal the dependence of a numpy scaled
dot found by perturbing each input element, and its symbolic tiles (XLA's regions: the
operands' programs iterate over the contracting tiles) read exactly, per program, the
scale blocks of the operand tile, checked by enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from op_fixtures import perturbed_dependence, relation
from tiling_fixtures import box, hlo_analysis

from hlo_indexing import input_to_output_indexing, output_to_input_indexing, parse_module
from hlo_indexing.dialect_glue.hlo_text import SCALED_DOT_TARGET
from hlo_indexing.errors import InvalidAttributeError
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

# (batch, m, k, n, lhs block, rhs block): operands [batch..., m, k] and [batch..., k, n],
# scales [batch..., m, k / block] and [batch..., k / block, n].
CASES = [((), 2, 6, 3, 3, 2), ((), 3, 4, 2, 4, 1), ((2,), 2, 4, 2, 2, 4)]


def _shape(dims) -> str:
    return "f32[" + ",".join(map(str, dims)) + "]"


def _shapes(batch, m, k, n, lb, rb):
    return [(*batch, m, k), (*batch, k, n), (*batch, m, k // lb), (*batch, k // rb, n)], (*batch, m, n)


def _module_text(case) -> str:
    batch = case[0]
    operands, result = _shapes(*case)
    b = ",".join(map(str, range(len(batch))))
    dims = (f"lhs_batch_dims={{{b}}}, rhs_batch_dims={{{b}}}, " if batch else "") + (
        f"lhs_contracting_dims={{{len(batch) + 1}}}, rhs_contracting_dims={{{len(batch)}}}"
    )
    params = "\n".join(f"  p{i} = {_shape(s)} parameter({i})" for i, s in enumerate(operands))
    return f"HloModule m\nENTRY e {{\n{params}\n  ROOT d = {_shape(result)} scaled-dot(p0, p1, p2, p3), {dims}\n}}\n"


def _evaluate(case, lhs, rhs, lhs_scale, rhs_scale) -> np.ndarray:
    """The scaled dot by its definition: each operand times its scale repeated over the
    block, then a batched matrix product."""
    lb, rb = case[4], case[5]
    return np.matmul(lhs * np.repeat(lhs_scale, lb, axis=-1), rhs * np.repeat(rhs_scale, rb, axis=-2))


def _dependence(case) -> list[set]:
    """Pairs (output index, operand index), operand by operand."""
    return perturbed_dependence(_shapes(*case)[0], lambda *values: _evaluate(case, *values))


@pytest.mark.parametrize("case", CASES)
def test_scaled_dot_maps_are_its_dependence(case) -> None:
    module = parse_module(_module_text(case), filename="s.hlo")
    op = module.body.operations[0].regions[0].blocks[0].operations[0]
    assert op.name == "stablehlo.custom_call" and str(op.attributes["call_target_name"]) == f'"{SCALED_DOT_TARGET}"'
    expected = _dependence(case)
    forward = output_to_input_indexing(op, 0)
    for k, pairs in enumerate(expected):
        assert relation(forward.maps[k]) == pairs, f"operand {k}: {forward}"
        backward = input_to_output_indexing(op, k)
        assert relation(backward.maps[0]) == {(i, o) for o, i in pairs}, f"operand {k} -> output: {backward}"


def test_scaled_dot_dimension_numbers_are_checked() -> None:
    text = _module_text(((), 2, 6, 3, 3, 2)).replace("f32[2,2] parameter(2)", "f32[2,4] parameter(2)")
    module = parse_module(text, filename="s.hlo")
    op = module.body.operations[0].regions[0].blocks[0].operations[0]
    with pytest.raises(InvalidAttributeError, match="does not divide its operand"):
        output_to_input_indexing(op, 0)


FUSION = """HloModule m
fusion {
  lhs = f32[8,16] parameter(0)
  rhs = f32[16,4] parameter(1)
  lhs_scale = f32[8,4] parameter(2)
  rhs_scale = f32[2,4] parameter(3)
  ROOT dot = f32[8,4] scaled-dot(lhs, rhs, lhs_scale, rhs_scale), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  c = f32[8,4] parameter(2)
  d = f32[2,4] parameter(3)
  ROOT fusion = f32[8,4] fusion(a, b, c, d), kind=kCustom, calls=fusion
}
"""


@pytest.mark.parametrize("sizes", [[4, 2, 2], [8, 4, 4], [16, 8, 1], [2, 1, 4], [1, 3, 3]])
def test_scaled_dot_tiles_read_the_blocks_of_their_operand_tiles(sizes) -> None:
    module, analysis = hlo_analysis(FUSION, "fusion")  # the module keeps the ops alive
    assert isinstance(analysis, TiledFusion), analysis
    assert [p.contracting for p in analysis.parameters] == [True, False, False]
    computation = tiled_computation(analysis, analysis.flat_tile_sizes({"dot": sizes}), constraints_are_known_satisfied=True)
    root = computation.roots[0]
    lhs, rhs, lhs_scale, rhs_scale = root.operands
    shapes = [(8, 16), (16, 4), (8, 4), (2, 4)]
    blocks = [(1, 4), (8, 1)]  # operand size / scale size, per dimension

    def tile(inst, shape, pid):
        return box(inst.tile_offsets_indexing.evaluate([pid]), inst.tile_sizes, inst.tile_strides, shape)

    programs = lhs.tile_offsets_indexing.dim_ranges[0].upper + 1
    per_output = programs // (root.tile_offsets_indexing.dim_ranges[0].upper + 1)
    read: dict[int, list[set]] = {}
    for pid in range(programs):
        operand_tiles = [tile(inst, shape, pid) for inst, shape in zip((lhs, rhs), shapes)]
        for operand_tile, scale, shape, block in zip(operand_tiles, (lhs_scale, rhs_scale), shapes[2:], blocks):
            needed = {tuple(i // b for i, b in zip(element, block)) for element in operand_tile}
            assert tile(scale, shape, pid) == needed, (sizes, pid, scale.name)
        reads = read.setdefault(pid // per_output, [set(), set()])
        reads[0] |= operand_tiles[0]
        reads[1] |= operand_tiles[1]
    for out_pid, (lhs_read, rhs_read) in read.items():
        output = tile(root, (8, 4), out_pid)
        rows, cols = {i for i, _ in output}, {j for _, j in output}
        assert lhs_read == {(i, k) for i in rows for k in range(16)}, (sizes, out_pid)
        assert rhs_read == {(k, j) for k in range(16) for j in cols}, (sizes, out_pid)


@pytest.mark.parametrize(
    "config, problem",
    [("lhs_contracting_dims={1}, rhs_contracting_dims={0}, fast=true", "is not a list of dot dimension numbers"),
     ("lhs_contracting_dims={1}, rhs_contracting_dims={1}", "pairs lhs dimension 1")],
)
def test_a_malformed_scaled_dot_names_its_backend_config(config, problem) -> None:
    module = parse_module(
        "func.func @f(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<2x2xf32>, %d: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        f'  %0 = stablehlo.custom_call @{SCALED_DOT_TARGET}(%a, %b, %c, %d) {{backend_config = "{config}"}}'
        " : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
        "  return %0 : tensor<2x3xf32>\n}",
        filename="bad.mlir",
    )
    op = module.body.operations[0].regions[0].blocks[0].operations[0]
    with pytest.raises(InvalidAttributeError, match=problem) as info:
        output_to_input_indexing(op, 0)
    assert "backend_config" in str(info.value) and ":2:8:" in str(info.value)  # located at the op
