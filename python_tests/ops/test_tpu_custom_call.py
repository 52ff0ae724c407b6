"""Pallas TPU kernels as exported (``jax.export(..., platforms=['tpu'])``, which lowers
on this CPU-only machine): the ``tpu_custom_call``'s maps must equal, for sampled output
elements, the elements of the input blocks that the grid steps writing that element read,
found here by evaluating the ``BlockSpec`` index maps (Python lambdas) over the grid,
piecewise ones (``//``, ``%``, ``min``, ``max``, ``where``, ``abs``) included. An output
whose block index depends on a prefetched scalar is unknown with the reason; windows
without an index map, scalar-prefetch operands and input index maps the analysis cannot
follow (a prefetched scalar, a product of grid indices) are read whole, with a note; an
aliased output also keeps its input's element."""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("jax.experimental.pallas", reason="Pallas (jax) is not installed")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from pallas_harness import abstract_tpu  # noqa: E402

from hlo_indexing import output_to_input_indexing, parse_module  # noqa: E402
from hlo_indexing.maps.indexing_map import Variable  # noqa: E402
from hlo_indexing.maps.interval import Interval  # noqa: E402

S = jax.ShapeDtypeStruct


def _kernel(n_inputs: int, n_outputs: int = 1):
    """A body reading every input block whole (its maps do not depend on it)."""
    def kernel(*refs):
        total = sum(jnp.sum(ref[...]) for ref in refs[:n_inputs])
        for out in refs[n_inputs:n_inputs + n_outputs]:
            out[...] = jnp.zeros(out.shape, out.dtype) + total
    return kernel


def _call_op(function, *shapes):
    """The exported module (kept alive) and its ``tpu_custom_call``."""
    with abstract_tpu():
        text = jax.export.export(jax.jit(function), platforms=["tpu"])(*shapes).mlir_module()
    module = parse_module(text, filename="pallas.mlir")
    found = []
    module.operation.walk(lambda op: (found.append(op.operation) if op.operation.name == "stablehlo.custom_call" else None) or 0)
    (call,) = found
    return module, call


def _reads(m, element) -> set:
    """The elements ``m`` reads at the output element ``element`` (its relation there;
    none when the map's domain leaves the element out)."""
    points = [v.bounds.intersect(Interval(e, e)) for v, e in zip(m.dim_vars, element)]
    if any(p.is_empty for p in points):
        return set()
    pinned = m.replace(dims=[Variable(p) for p in points])
    return {tuple(x) for _, x in pinned.relation()}


def _block(index, block, shape) -> set:
    """The elements of block ``index`` (squeezed dims: block size None, element index),
    clipped to ``shape``."""
    ranges = []
    for i, b, n in zip(index, block, shape):
        size = 1 if b is None else b
        ranges.append(range(i * size, min((i + 1) * size, n)))
    return set(itertools.product(*ranges))


def _expected(element, grid, out_spec, in_spec) -> set:
    out_shape, out_block, out_map = out_spec
    in_shape, in_block, in_map = in_spec
    found = set()
    for g in itertools.product(*map(range, grid)):
        if tuple(element) in _block(out_map(*g), out_block, out_shape):
            found |= _block(in_map(*g), in_block, in_shape)
    return found


def _samples(shape, block) -> list[tuple[int, ...]]:
    """Corners of the blocks of an output and a few points inside."""
    per_dim = []
    for n, b in zip(shape, block):
        size = 1 if b is None else b
        per_dim.append(sorted({0, n - 1, min(size, n - 1), max(0, min(n - 1, size - 1)), n // 2}))
    return list(itertools.product(*per_dim))


# name, grid, inputs [(shape, block, index map)], output (shape, block, index map)
CASES = [
    ("shifted blocks", (2, 2),
     [((16, 256), (8, 128), lambda i, j: (i, 1 - j)), ((8, 256), (8, 256), lambda i, j: (0, 0))],
     ((16, 256), (8, 128), lambda i, j: (1 - i, j))),
    ("matmul over k", (2, 2),
     [((16, 256), (8, 128), lambda i, k: (i, k)), ((256, 128), (128, 128), lambda i, k: (k, 0))],
     ((16, 128), (8, 128), lambda i, k: (i, 0))),
    ("squeezed, reversed", (4,),
     [((4, 8, 128), (None, 8, 128), lambda i: (i, 0, 0))],
     ((4, 8, 128), (None, 8, 128), lambda i: (3 - i, 0, 0))),
    ("partial last block", (3,),
     [((20, 128), (8, 128), lambda i: (i, 0))],
     ((24, 128), (8, 128), lambda i: (i, 0))),
    # Piecewise-affine index maps: one map per region of the grid.
    ("causal, skipped blocks re-read block 0", (3, 3),
     [((24, 128), (8, 128), lambda i, j: (jnp.where(j <= i, j, 0), 0))],
     ((24, 128), (8, 128), lambda i, j: (i, 0))),
    ("grouped heads, floor division", (4, 2),
     [((2, 16, 128), (None, 8, 128), lambda h, q: (h // 2, q, 0))],
     ((4, 16, 128), (None, 8, 128), lambda h, q: (h, q, 0))),
    ("output by floor division and remainder", (4,),
     [((16, 128), (8, 128), lambda i: (i % 2, 0))],
     ((32, 128), (8, 128), lambda i: (i // 2 * 2 + i % 2, 0))),
    ("clamped, mirrored and either-or", (5,),
     [((24, 128), (8, 128), lambda i: (jnp.minimum(i, 2), 0)),
      ((24, 128), (8, 128), lambda i: (jnp.abs(i - 2), 0)),
      ((24, 128), (8, 128), lambda i: (jnp.where((i == 0) | (i > 3), 2, jnp.maximum(i - 2, 0)), 0))],
     ((40, 128), (8, 128), lambda i: (4 - i, 0))),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_an_output_element_reads_the_input_blocks_of_the_steps_that_write_it(case) -> None:
    _, grid, inputs, output = case

    def function(*args):
        return pl.pallas_call(
            _kernel(len(inputs)), out_shape=S(output[0], jnp.float32), grid=grid,
            in_specs=[pl.BlockSpec(block, index) for _, block, index in inputs],
            out_specs=pl.BlockSpec(output[1], output[2]),
        )(*args)

    module, call = _call_op(function, *(S(shape, jnp.float32) for shape, _, _ in inputs))
    indexing = output_to_input_indexing(call, 0)
    assert all("its body is not read" in note for note in indexing.notes)
    for k, spec in enumerate(inputs):
        maps = indexing.maps[k]
        for element in _samples(output[0], output[1]):
            got = set().union(*(_reads(m, element) for m in maps))
            assert got == _expected(element, grid, output, spec), (k, element, [str(m) for m in maps])


def test_a_where_gives_one_map_per_region_of_the_grid() -> None:
    def function(x):
        return pl.pallas_call(
            _kernel(1), out_shape=S((24, 128), jnp.float32), grid=(3, 3),
            in_specs=[pl.BlockSpec((8, 128), lambda i, j: (jnp.where(j <= i, j, 0), 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, 0)),
        )(x)

    module, call = _call_op(function, S((24, 128), jnp.float32))
    maps = output_to_input_indexing(call, 0).maps[0]
    assert len(maps) == 2 and not any(m.is_undefined for m in maps), [str(m) for m in maps]


def test_an_output_whose_block_index_reads_a_prefetched_scalar_is_unknown_with_the_reason() -> None:
    def function(s, x):
        spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, s: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i, s: (s[i], 0)))

        def kernel(s_ref, x_ref, o_ref):
            o_ref[...] = x_ref[...]

        return pl.pallas_call(kernel, out_shape=S((16, 128), jnp.float32), grid_spec=spec)(s, x)

    module, call = _call_op(function, S((2,), jnp.int32), S((16, 128), jnp.float32))
    (m,) = output_to_input_indexing(call, 0).maps[1]
    assert m.is_undefined and "block index of output 0" in m.reason and "scalar-prefetch operand 0" in m.reason


def test_an_input_whose_block_index_is_a_product_of_grid_indices_is_read_whole_with_a_note() -> None:
    def function(x):
        return pl.pallas_call(
            _kernel(1), out_shape=S((16, 128), jnp.float32), grid=(2, 2),
            in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i * j, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, 0)),
        )(x)

    module, call = _call_op(function, S((16, 128), jnp.float32))
    indexing = output_to_input_indexing(call, 0)
    (m,) = indexing.maps[0]
    assert _reads(m, (0, 0)) == set(itertools.product(range(16), range(128)))
    assert any("input 0 has a block index that depends on arith.muli" in note and "read whole" in note for note in indexing.notes)


def test_scalar_prefetch_and_copied_operands_are_read_whole_with_a_note() -> None:
    def kernel(s_ref, x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] * 2  # y (memory_space=ANY) would be copied by hand

    def function(s, x, y):
        spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, s: (s[i], 0)), pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((8, 128), lambda i, s: (i, 0)))
        return pl.pallas_call(kernel, out_shape=S((16, 128), jnp.float32), grid_spec=spec)(s, x, y)

    module, call = _call_op(function, S((2,), jnp.int32), S((16, 128), jnp.float32), S((24, 128), jnp.float32))
    indexing = output_to_input_indexing(call, 0)
    shapes = [(2,), (16, 128), (24, 128)]
    for k, shape in enumerate(shapes):
        (m,) = indexing.maps[k]
        assert _reads(m, (3, 5)) == set(itertools.product(*map(range, shape)))
    assert any("operand 0 is a scalar-prefetch operand" in note for note in indexing.notes)
    assert any("input 1 has memory_space=ANY" in note for note in indexing.notes)


def test_an_aliased_output_also_keeps_its_inputs_element() -> None:
    def function(x):
        return pl.pallas_call(
            _kernel(1, 2), out_shape=(S((16, 128), jnp.float32), S((16, 128), jnp.float32)), grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)), pl.BlockSpec((8, 128), lambda i: (1 - i, 0))],
            input_output_aliases={0: 1},
        )(x)

    module, call = _call_op(function, S((16, 128), jnp.float32))
    spec = ((16, 128), (8, 128), lambda i: (i, 0))
    for result, written in ((0, ((16, 128), (8, 128), lambda i: (i, 0))), (1, ((16, 128), (8, 128), lambda i: (1 - i, 0)))):
        maps = output_to_input_indexing(call, result).maps[0]
        for element in ((0, 0), (9, 127)):
            got = set().union(*(_reads(m, element) for m in maps))
            kept = {element} if result == 1 else set()
            assert got == _expected(element, (2,), written, spec) | kept, (result, element)


@pytest.mark.parametrize("config, problem", [
    ("{}", "holds no Mosaic kernel"),
    ('{\\22custom_call_config\\22: {\\22body\\22: \\22not base64!\\22}}', "not base64"),
    ('{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUg==\\22}}', "not a Mosaic module"),
])
def test_a_call_without_a_readable_kernel_is_a_located_error(config: str, problem: str) -> None:
    from hlo_indexing.errors import InvalidAttributeError

    text = (
        "func.func @f(%a: tensor<8x128xf32>) -> tensor<8x128xf32> {\n"
        f'  %0 = stablehlo.custom_call @tpu_custom_call(%a) {{backend_config = "{config}"}} : (tensor<8x128xf32>) -> tensor<8x128xf32>\n'
        "  return %0 : tensor<8x128xf32>\n}\n"
    )
    module = parse_module(text, filename="kernel.mlir")
    call = module.body.operations[0].regions[0].blocks[0].operations[0]
    with pytest.raises(InvalidAttributeError, match=problem) as raised:
        output_to_input_indexing(call, 0)
    assert ":2:8: error" in str(raised.value)  # located at the call
