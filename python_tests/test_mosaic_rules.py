"""Mosaic's TPU block rules (hlo_indexing.cost_model.mosaic) agree with JAX's own Pallas
TPU lowering: ``jax.export(..., platforms=['tpu'])`` on a CPU-only machine (under an
abstract TPU v5e mesh, which the rank-1 rule needs) accepts a block exactly when
:func:`block_rejections` finds nothing, over generated block shapes (squeezed dimensions
and element windows included), array shapes, element types and memory spaces (300 cases; 1000 with
``HLO_INDEXING_PALLAS_PROFILE=long``). Then the VMEM accounting and the native-tiling
note, on cases worked by hand."""

from __future__ import annotations

import os

import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("jax.experimental.pallas")

import jax.numpy as jnp  # noqa: E402
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from pallas_harness import abstract_tpu  # noqa: E402

from hlo_indexing.cost_model import mosaic  # noqa: E402
from hlo_indexing.devices import device  # noqa: E402

V5E = device("tpu-v5e")
CASES = 1000 if os.environ.get("HLO_INDEXING_PALLAS_PROFILE") == "long" else 300
DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16, "s8": jnp.int8, "u8": jnp.uint8, "s16": jnp.int16, "s32": jnp.int32, "pred": jnp.bool_}
SPACES = {"vmem": None, "smem": pltpu.SMEM, "any": pl.ANY}


def lowering_accepts(block, array, element_type, space, offset=0) -> bool:
    """Whether JAX's TPU lowering accepts a pallas_call reading and writing ``array``
    through ``block`` (None: squeezed) at block index ``(offset, 0, ...)``."""
    rank = len(array)

    def index_map(*_):
        return (offset,) + (0,) * (rank - 1)

    dims = tuple(pl.Element(int(b[1:])) if isinstance(b, str) else b for b in block)
    spec = pl.BlockSpec(dims, index_map, memory_space=SPACES[space]) if SPACES[space] is not None else pl.BlockSpec(dims, index_map)

    def kernel(x_ref, o_ref):
        pass

    def function(x):
        return pl.pallas_call(kernel, grid=(1,), in_specs=[spec], out_specs=spec, out_shape=jax.ShapeDtypeStruct(array, DTYPES[element_type]))(x)

    try:
        with abstract_tpu():
            jax.export.export(jax.jit(function), platforms=["tpu"])(jax.ShapeDtypeStruct(array, DTYPES[element_type]))
    except ValueError as error:
        if "Pallas TPU lowering currently" in str(error):
            return False
        raise
    except NotImplementedError as error:
        if "must be Elements" in str(error):
            return False
        raise
    return True


def rules_accept(block, array, element_type, space, offset=0) -> bool:
    sizes = tuple(1 if b is None else int(b[1:]) if isinstance(b, str) else b for b in block)
    kinds = tuple("squeezed" if b is None else "element" if isinstance(b, str) else "blocked" for b in block)
    trivial = sizes == tuple(array) and offset == 0
    found = mosaic.block_rejections(mosaic.TpuBlock("x", sizes, tuple(array), element_type, space, trivial, kinds=kinds), V5E)
    return not found


@st.composite
def _dimension(draw, last: bool, second: bool):
    extent = draw(st.sampled_from([1, 3, 7, 8, 16, 24, 100, 128, 200, 256, 384, 1024, 2048]))
    choice = draw(st.sampled_from(["equal", "lane", "sublane", "small", "power", "squeeze", "element"]))
    if choice == "element":
        return extent, f"e{draw(st.sampled_from([1, 8, 128, extent]))}"
    if choice == "equal":
        return extent, extent
    if choice == "lane":
        return extent, 128 * draw(st.integers(1, 3))
    if choice == "sublane":
        return extent, 8 * draw(st.integers(1, 4))
    if choice == "power":
        return extent, 2 ** draw(st.integers(0, 11))
    if choice == "squeeze" and not last:
        return extent, None
    return extent, draw(st.integers(1, 20))


@st.composite
def _case(draw):
    rank = draw(st.integers(1, 3))
    dims = [draw(_dimension(k == rank - 1, k == rank - 2)) for k in range(rank)]
    array = tuple(e for e, _ in dims)
    block = tuple(b for _, b in dims)
    element_type = draw(st.sampled_from(sorted(DTYPES)))
    space = draw(st.sampled_from(["vmem", "vmem", "vmem", "smem", "any"]))
    return block, array, element_type, space


@settings(max_examples=CASES, deadline=None, derandomize=True, database=None)
@given(_case())
def test_the_block_rules_agree_with_the_tpu_lowering(case):
    accepted = lowering_accepts(*case)
    event("the lowering accepts" if accepted else "the lowering rejects")
    assert rules_accept(*case) == accepted, case


@pytest.mark.parametrize(
    "block, array, element_type, expected",
    [
        ((8, 128), (16, 256), "f32", True),
        ((8, 64), (16, 256), "f32", False),
        ((8, 128), (16, 256), "bf16", True),  # accepted, though bf16's native tile is (16, 128)
        ((4, 128), (16, 256), "bf16", False),  # the lowering checks 8 sublanes for every type
        ((None, 128), (16, 256), "f32", False),  # a squeezed second-to-last dimension counts as 1
        ((3, 5), (3, 5), "f32", True),  # the whole array
        ((1024,), (4096,), "f32", True),  # a multiple of 8 * 128
        ((256,), (4096,), "f32", True),  # a power of two of at least 128 32-bit elements
        ((256,), (4096,), "s8", False),  # ... of at least 512 8-bit elements
        ((100,), (4096,), "f32", False),
    ],
)
def test_hand_worked_blocks(block, array, element_type, expected):
    assert rules_accept(block, array, element_type, "vmem") is expected
    assert lowering_accepts(block, array, element_type, "vmem") is expected


def test_a_block_in_memory_space_any_must_be_the_whole_array():
    assert rules_accept((8, 128), (8, 128), "f32", "any")
    assert not rules_accept((8, 128), (16, 128), "f32", "any")
    assert not lowering_accepts((8, 128), (16, 128), "f32", "any")


def test_padded_shapes_follow_the_native_tile_of_each_width():
    assert mosaic.padded_shape((8, 100), "f32", V5E) == (8, 128)
    assert mosaic.padded_shape((8, 128), "bf16", V5E) == (16, 128)
    assert mosaic.padded_shape((3, 8, 128), "s8", V5E) == (3, 32, 128)
    assert mosaic.padded_shape((200,), "f32", V5E) == (256,)
    # One buffer of an (8, 128) bf16 block takes a (16, 128) tile: 4 KiB.
    assert mosaic.buffer_bytes((8, 128), "bf16", V5E) == 16 * 128 * 2


def test_the_vmem_budget_counts_every_block_double_buffered():
    blocks = [mosaic.TpuBlock(f"operand {k}", (1024, 1024), (4096, 4096), "f32") for k in range(3)]
    # 3 operands x 2 buffers x 4 MiB = 24 MiB: over a v4's 16 MiB, under a v5e's 128 MiB.
    assert [r.rule for r in mosaic.vmem_rejections(blocks, 0, device("tpu-v4"))] == ["mosaic.vmem"]
    assert mosaic.vmem_rejections(blocks, 0, V5E) == []
    assert mosaic.vmem_rejections(blocks, 0, V5E, limit_bytes=20 << 20) != []
    (rejection,) = mosaic.vmem_rejections(blocks, 1 << 20, device("tpu-v4"))
    assert "25.0 MiB" in rejection.message and "16.0 MiB" in rejection.message and "scratch 1.0 MiB" in rejection.message


def test_the_native_tiling_note_is_for_accepted_blocks_mosaic_pads():
    note = mosaic.native_tiling_note(mosaic.TpuBlock("x", (8, 128), (64, 128), "bf16"), V5E)
    assert note is not None and "(16, 128)" in note
    assert mosaic.native_tiling_note(mosaic.TpuBlock("x", (16, 128), (64, 128), "bf16"), V5E) is None
    assert mosaic.native_tiling_note(mosaic.TpuBlock("x", (8, 128), (8, 128), "bf16"), V5E) is None  # the whole array
