"""Pallas BlockSpecs of tilings: the ``pl.BlockSpec`` objects and grid (and, the same,
the generated text) run under ``jax.experimental.pallas`` (interpret mode) and give the
fused computation's result (numpy), so each block reads what its output block needs;
tiles that are not blocks are refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from tiling_fixtures import analysis_of, functions_of, softmax_text

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.pallas import NotABlockError, PallasBlockSpecs, block_index_maps, pallas_blockspecs

FUNCTIONS = softmax_text() + """
func.func @add_row(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.add %x, %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func @every_other(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.slice %x [0:4, 0:8:2] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func @stacked(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.concatenate %x, %y, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func @padded(%x: tensor<6x8xf32>) -> tensor<6x16xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.pad %x, %c, low = [0, 0], high = [0, 8], interior = [0, 0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<6x16xf32>
  return %0 : tensor<6x16xf32>
}
"""


@pytest.fixture(scope="module")
def functions():
    with functions_of(FUNCTIONS) as found:
        yield found


def specs_from_text(text: str):
    pallas = pytest.importorskip("jax.experimental.pallas", reason="jax.experimental.pallas is not installed")
    namespace: dict = {"pl": pallas}
    exec(text, namespace)  # the generated text is what a Pallas user pastes
    return pallas, namespace["grid"], namespace["in_specs"], namespace["out_specs"]


def run(specs: PallasBlockSpecs, kernel, inputs, out_shape):
    """The kernel's result on the specs' objects; the same as on the specs' text run by
    ``exec``."""
    import jax  # test dependency, imported with pallas

    pallas, grid, in_specs, out_specs = specs_from_text(str(specs))
    results = []
    for arguments in ({"grid": grid, "in_specs": in_specs, "out_specs": out_specs}, specs.pallas_call_arguments()):
        call = pallas.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(out_shape, np.float32), interpret=True, **arguments)
        results.append(np.asarray(call(*inputs)))
    np.testing.assert_array_equal(results[0], results[1])
    return results[1]


@pytest.mark.parametrize("sizes", [[1, 6], [2, 6], [4, 6]])
def test_a_row_softmax_kernel_on_the_blocks_gives_the_fused_result(functions, sizes) -> None:
    specs = pallas_blockspecs(analysis_of(functions["softmax"]), sizes)

    def kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = _jnp().exp(x - x.max(axis=1, keepdims=True))

    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    expected = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(run(specs, kernel, [x], (4, 6)), expected, rtol=1e-6)


@pytest.mark.parametrize("sizes", [[2, 4], [1, 2], [4, 8], [1, 8]])
def test_an_add_of_a_broadcast_row_reads_the_right_slice_of_the_row(functions, sizes) -> None:
    specs = pallas_blockspecs(analysis_of(functions["add_row"]), sizes)

    def kernel(x_ref, b_ref, o_ref):
        o_ref[...] = x_ref[...] + b_ref[...][None, :]

    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    np.testing.assert_allclose(run(specs, kernel, [x, b], (4, 8)), x + b[None, :], rtol=1e-6)


def test_a_matmul_kernel_accumulates_over_the_contracting_axis(functions) -> None:
    fusion = analysis_of(functions["matmul"])
    specs = pallas_blockspecs(fusion, [4, 4, 8])  # {K, M, N}
    # Output tiles of 4x8 (grid i over 2 row tiles, j over 1 column tile), K steps of 4 (k).
    assert str(specs) == specs.text == (
        "grid = (2, 1, 4)\n"
        "in_specs = [\n"
        "    pl.BlockSpec((4, 4), lambda i, j, k: (i, k)),  # parameter 0: tensor<8x16xf32>\n"
        "    pl.BlockSpec((4, 8), lambda i, j, k: (k, 0)),  # parameter 1: tensor<16x8xf32>\n"
        "]\n"
        "out_specs = pl.BlockSpec((4, 8), lambda i, j, k: (i, 0))  # output 0: tensor<8x8xf32>\n"
    )
    pallas, *_ = specs_from_text(str(specs))

    def kernel(a_ref, b_ref, o_ref):
        @pallas.when(pallas.program_id(2) == 0)
        def _():
            o_ref[...] = _jnp().zeros_like(o_ref)

        o_ref[...] += a_ref[...] @ b_ref[...]

    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(run(specs, kernel, [a, b], (8, 8)), a @ b, rtol=1e-5, atol=1e-5)
    assert specs.grid == (2, 1, 4) and isinstance(specs.out_specs, pallas.BlockSpec)
    assert [s.block_shape for s in specs.in_specs] == [(4, 4), (4, 8)] and specs.out_specs.block_shape == (4, 8)


def test_block_indices_times_sizes_are_the_tile_offsets_for_every_valid_tiling(functions) -> None:
    # Without jax: each spec's block index map at every grid point, times the block
    # shape, covers the output exactly once. A softmax tiling that splits rows reads
    # its parameter through two tiles (the row for the maximum, the element): refused.
    checked, refused = 0, 0
    for name in ("softmax", "add_row", "matmul"):
        fusion = analysis_of(functions[name])
        for sizes in fusion.valid_tilings():
            try:
                tiling = block_index_maps(fusion, sizes)
            except NotABlockError as exc:
                assert name == "softmax" and sizes[1] < 6 and "2 different tiles" in str(exc)
                refused += 1
                continue
            checked += 1
            grid_points = np.indices(tiling.grid).reshape(len(tiling.grid), -1).T
            (out,) = tiling.out_specs
            covered: dict[tuple[int, ...], int] = {}
            shape = tuple(ir.RankedTensorType(ir.Type.parse(out.type, functions[name].context)).shape)
            seen_blocks = set()
            for point in grid_points.tolist():
                block = out.index_map.evaluate(point)
                if tuple(block) in seen_blocks:
                    continue  # revisited along a contracting axis
                seen_blocks.add(tuple(block))
                ranges = [range(b * n, min((b + 1) * n, d)) for b, n, d in zip(block, out.block_shape, shape)]
                for element in np.ndindex(*[len(r) for r in ranges]):
                    key = tuple(r[e] for r, e in zip(ranges, element))
                    covered[key] = covered.get(key, 0) + 1
            assert len(covered) == int(np.prod(shape)) and set(covered.values()) == {1}, (name, sizes)
    assert checked > 40 and refused == 9


def test_the_callable_index_maps_are_the_block_index_maps_at_every_grid_point(functions) -> None:
    # Without jax: what Pallas calls (index_map(*grid point)) is the IndexingMap's value
    for name in ("softmax", "add_row", "matmul"):
        fusion = analysis_of(functions[name])
        for sizes in fusion.valid_tilings():
            try:
                specs = pallas_blockspecs(fusion, sizes)
            except NotABlockError:
                continue
            tiling = block_index_maps(fusion, sizes)
            for point in np.ndindex(*tiling.grid):
                for spec, index_map in zip(tiling.in_specs + tiling.out_specs, specs.in_index_maps + specs.out_index_maps):
                    assert index_map(*point) == spec.index_map.evaluate(list(point)), (name, sizes, point)


def test_an_operand_read_by_some_programs_only_has_its_blocks_inside_the_array_or_no_spec(functions) -> None:
    # A concatenate's operand, a pad's operand at the tiles of the padding: Pallas reads
    # a block at every grid step, so the index map must stay inside the array's blocks
    # at the steps that do not read it too (Pallas refuses a block past them).
    inside, refused = 0, 0
    for name in ("stacked", "padded"):
        fusion = analysis_of(functions[name], allow_pad=True)
        for sizes in fusion.valid_tilings():
            try:
                tiling = block_index_maps(fusion, sizes)
            except NotABlockError as exc:
                assert "programs only" in str(exc) and "leaves the array's blocks" in str(exc), exc
                refused += 1
                continue
            except TilingError as exc:  # a tile across both operands of the concatenate
                assert exc.status == "UNIMPLEMENTED", exc
                continue
            for spec in tiling.in_specs:
                shape = ir.RankedTensorType(ir.Type.parse(spec.type, functions[name].context)).shape
                last = [-(-n // b) - 1 for n, b in zip(shape, spec.block_shape)]
                for point in np.ndindex(*tiling.grid):
                    block = spec.index_map.evaluate(list(point))
                    assert all(0 <= k <= m for k, m in zip(block, last)), (name, sizes, point, block)
            inside += 1
    assert inside > 0 and refused > 0, (inside, refused)


def test_a_kernel_picks_the_concatenated_operand_of_its_step(functions) -> None:
    # Tiles of 4 rows: each operand's block 0 at both steps, the kernel picks the one
    # its step reads.
    specs = pallas_blockspecs(analysis_of(functions["stacked"]), [4, 8])
    pallas, *_ = specs_from_text(str(specs))

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = _jnp().where(pallas.program_id(0) == 0, x_ref[...], y_ref[...])

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 4, 8)).astype(np.float32)
    np.testing.assert_array_equal(run(specs, kernel, [x, y], (8, 8)), np.concatenate([x, y]))


def test_a_strided_tile_is_not_a_block(functions) -> None:
    with pytest.raises(NotABlockError, match="strides"):
        pallas_blockspecs(analysis_of(functions["every_other"]), [2, 2])


def _jnp():
    import jax.numpy as jnp  # test dependency, imported with pallas

    return jnp
