"""Pallas/Mosaic's TPU block rules: which blocks the TPU backend accepts, and what they
occupy in VMEM. One implementation for the Pallas checker (``illegal-block-shape``,
``vmem-overflow``, ``unaligned-block``) and the TPU ranking of tilings (:mod:`.tpu`).

**Hard rules** (each a :class:`~.estimate.Rejection`), as JAX's Pallas TPU lowering
checks them (jax 0.10.2, ``_check_block_mappings`` of ``jax/_src/pallas/mosaic/lowering.py``;
``jax.export(..., platforms=['tpu'])`` raises on them on a CPU-only machine, which the
tests use as the reference):

* ``mosaic.block-rank``: a block has at least one dimension;
* ``mosaic.any-window``: a block in memory space ANY/HBM is the whole array, at block
  index 0 (the kernel moves data itself);
* ``mosaic.block-shape``: for rank >= 2, the last block dimension is a multiple of the
  lanes (128) or equals the array's, and the second-to-last a multiple of the 32-bit
  sublanes (8) or equals the array's, **whatever the element type** (a squeezed
  dimension counts as size 1);
* ``mosaic.block-shape-1d``: a rank-1 block equals the array, or is a multiple of
  ``sublanes * lanes`` (1024), or is a power of two of at least ``lanes * 32 / bits``
  elements (booleans are stored as 32-bit words);
* ``mosaic.element-window``: a block whose dimensions include element windows
  (``pl.Element``) has no blocked dimension (each is an element window or squeezed);
* ``mosaic.vmem``: the blocks of all VMEM operands, each times its buffer count (2:
  double-buffered), plus the VMEM scratch buffers, fit in the call's ``vmem_limit_bytes``
  when it sets one, else in the TensorCore's VMEM (``TpuDevice.vmem_bytes``). Sizes are
  counted padded to the native tiling (below), as Mosaic lays blocks out. The lowering does
  not check this one (the TPU compiler does); the device's whole VMEM is the bound no
  compiler flag lifts.

Blocks in SMEM that are the whole array, and semaphores, are exempt from all but
``mosaic.element-window``, as in the lowering.

**Performance rule** (a note, never a rejection): the *native* tiling of the last two
dimensions depends on the element width (``TpuDevice.native_tiling``: 32-bit (8, 128),
16-bit (16, 128), 8-bit (32, 128), 4-bit (64, 128)): a 16-bit block whose second-to-last
dimension is a multiple of 8 but not of 16 is accepted, yet Mosaic pads it to 16 rows
in VMEM and works on half-empty registers. :func:`native_tiling_note` says so;
:func:`padded_shape` is the layout both VMEM budgets and the cost model count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.cost_model.element_types import bit_width
from hlo_indexing.cost_model.estimate import Rejection
from hlo_indexing.devices.types import TpuDevice

RULE_RANK = "mosaic.block-rank"
RULE_ANY_WINDOW = "mosaic.any-window"
RULE_SHAPE = "mosaic.block-shape"
RULE_SHAPE_1D = "mosaic.block-shape-1d"
RULE_VMEM = "mosaic.vmem"
RULE_ELEMENT_WINDOW = "mosaic.element-window"

#: Memory spaces whose blocks the pipeline copies into VMEM.
VMEM_SPACES = ("vmem",)


@dataclass(frozen=True)
class TpuBlock:
    """One operand's block as Mosaic sees it: ``block_shape`` (sizes, 1 for a squeezed
    dimension), the ``array_shape``, the XLA ``element_type`` (``f32``, ``bf16``,
    ``pred``), the ``memory_space`` (``vmem``, ``smem``, ``any``, ``hbm``,
    ``semaphore``), whether the block is the whole array at block index 0
    (``trivial_window``), the pipeline's ``buffers`` and, when not all blocked, the kind
    of each dimension (``kinds``: ``blocked``, ``squeezed``, ``element``). ``subject``
    names it in rejections (``"input 0 (x_ref)"``, ``"parameter 1"``)."""

    subject: str
    block_shape: tuple[int, ...]
    array_shape: tuple[int, ...]
    element_type: str
    memory_space: str = "vmem"
    trivial_window: bool = False
    buffers: int = 2
    kinds: tuple[str, ...] = ()


def block_rejections(block: TpuBlock, device: TpuDevice) -> list[Rejection]:
    """The hard block rules ``block`` breaks on ``device`` (empty: accepted)."""
    space = block.memory_space
    shape, array = block.block_shape, block.array_shape
    where = f"block {_shape(shape)} of {_shape(array)} {block.element_type}"
    if "element" in block.kinds and "blocked" in block.kinds:
        return [
            Rejection(
                RULE_ELEMENT_WINDOW,
                f"{block.subject}: {where}: element windows (pl.Element) and blocked dimensions {block.kinds} "
                "cannot be mixed: every dimension is an element window or squeezed, or none is an element window",
                block.subject,
            )
        ]
    if space == "semaphore" or (space == "smem" and block.trivial_window):
        return []
    if len(shape) < 1:
        return [Rejection(RULE_RANK, f"{block.subject}: {where}: Mosaic needs blocks of rank >= 1", block.subject)]
    if space in ("any", "hbm") and not block.trivial_window:
        return [
            Rejection(
                RULE_ANY_WINDOW,
                f"{block.subject}: {where} in memory space {space.upper()} must be the whole array at block index 0",
                block.subject,
            )
        ]
    sizes = np.asarray([shape], np.int64)
    if len(shape) >= 2:
        last_ok, second_ok = last_two_ok(sizes, array, device)
        problems = []
        if not last_ok[0]:
            problems.append(f"the last dimension {shape[-1]} is neither a multiple of {device.lanes} nor the array's {array[-1]}")
        if not second_ok[0]:
            problems.append(
                f"the second-to-last dimension {shape[-2]} is neither a multiple of {device.sublanes} nor the array's {array[-2]}"
            )
        if problems:
            return [Rejection(RULE_SHAPE, f"{block.subject}: {where}: {'; '.join(problems)}", block.subject)]
        return []
    if rank_one_ok(sizes, array, block.element_type, device)[0]:
        return []
    minimum, chunk = _rank_one_limits(block.element_type, device)
    return [
        Rejection(
            RULE_SHAPE_1D,
            f"{block.subject}: {where}: a rank-1 block is the whole array, a multiple of {chunk}, "
            f"or a power of two of at least {minimum} elements",
            block.subject,
        )
    ]


def last_two_ok(sizes: np.ndarray, array_shape: Sequence[int], device: TpuDevice) -> tuple[np.ndarray, np.ndarray]:
    """``mosaic.block-shape`` for blocks of rank >= 2, one row of ``sizes`` per block
    (``[blocks, rank]``): per block, whether its last dimension is a multiple of the
    lanes or the array's, and whether its second-to-last is a multiple of the 32-bit
    sublanes or the array's (the lowering checks the 32-bit sublanes for every type)."""
    last, second = sizes[:, -1], sizes[:, -2]
    last_ok = (last == array_shape[-1]) | (last % device.lanes == 0)
    second_ok = (second == array_shape[-2]) | (second % device.sublanes == 0)
    return last_ok, second_ok


def rank_one_ok(sizes: np.ndarray, array_shape: Sequence[int], element_type: str, device: TpuDevice) -> np.ndarray:
    """``mosaic.block-shape-1d`` for rank-1 blocks (``sizes``: ``[blocks, 1]``)."""
    size = sizes[:, 0]
    minimum, chunk = _rank_one_limits(element_type, device)
    power_of_two = (size & (size - 1)) == 0
    return (size == array_shape[0]) | (size % chunk == 0) | ((size >= minimum) & power_of_two)


def shape_ok(sizes: np.ndarray, array_shape: Sequence[int], element_type: str, device: TpuDevice) -> np.ndarray:
    """Per block (rows of ``sizes``), whether Mosaic's shape rules accept a VMEM block
    of that shape (:func:`last_two_ok` or :func:`rank_one_ok`; rank 0 never)."""
    if sizes.shape[1] == 0:
        return np.zeros(len(sizes), bool)
    if sizes.shape[1] == 1:
        return rank_one_ok(sizes, array_shape, element_type, device)
    last_ok, second_ok = last_two_ok(sizes, array_shape, device)
    return last_ok & second_ok


def _rank_one_limits(element_type: str, device: TpuDevice) -> tuple[int, int]:
    """(smallest power-of-two rank-1 block, the chunk every rank-1 block may be a
    multiple of): ``lanes * 32 / bits`` and ``sublanes * lanes`` (booleans as 32-bit)."""
    bits = 32 if element_type == "pred" else bit_width(element_type)
    return device.lanes * (32 // bits), device.sublanes * device.lanes


def native_tile(element_type: str, device: TpuDevice) -> tuple[int, int]:
    """The native (sublanes, lanes) tile of the last two dimensions for an element type
    (booleans as 32-bit words; a width the device does not list gets the 32-bit tile
    scaled by its packing)."""
    bits = 32 if element_type == "pred" else bit_width(element_type)
    tile = device.tiling_for_bits(bits)
    if tile is not None:
        return tile
    return (device.sublanes * max(1, 32 // bits), device.lanes)


def padded_shape(block_shape: Sequence[int], element_type: str, device: TpuDevice) -> tuple[int, ...]:
    """``block_shape`` as Mosaic lays it out in VMEM: the last dimension rounded up to
    the lanes, the second-to-last to the native sublane tile (a rank-1 block: to the
    lanes)."""
    return tuple(int(size) for size in padded_sizes(np.asarray([block_shape], np.int64).reshape(1, -1), element_type, device)[0])


def padded_sizes(sizes: np.ndarray, element_type: str, device: TpuDevice) -> np.ndarray:
    """:func:`padded_shape` of every row of ``sizes`` (``[blocks, rank]``)."""
    if sizes.shape[1] == 0:
        return sizes
    sublane_tile, lane_tile = native_tile(element_type, device)
    padded = sizes.copy()
    padded[:, -1] = -(-sizes[:, -1] // lane_tile) * lane_tile
    if sizes.shape[1] >= 2:
        padded[:, -2] = -(-sizes[:, -2] // sublane_tile) * sublane_tile
    return padded


def vmem_bytes(block: TpuBlock, device: TpuDevice) -> int:
    """The VMEM one operand's blocks take: the padded block times its buffers (0 outside
    VMEM)."""
    if block.memory_space not in VMEM_SPACES:
        return 0
    return block.buffers * buffer_bytes(block.block_shape, block.element_type, device)


def buffer_bytes(shape: Sequence[int], element_type: str, device: TpuDevice) -> int:
    """Bytes of one buffer of ``shape`` in VMEM (padded to the native tiling; sub-byte
    types packed)."""
    return int(buffer_bytes_of(np.asarray([shape], np.int64).reshape(1, -1), element_type, device)[0])


def buffer_bytes_of(sizes: np.ndarray, element_type: str, device: TpuDevice) -> np.ndarray:
    """:func:`buffer_bytes` of every row of ``sizes`` (``[blocks, rank]``)."""
    bits = 32 if element_type == "pred" else bit_width(element_type)
    elements = padded_sizes(sizes, element_type, device).prod(axis=1, dtype=np.int64)
    return -(-elements * bits // 8)


def vmem_rejections(
    blocks: Sequence[TpuBlock], scratch_bytes: int, device: TpuDevice, limit_bytes: int | None = None
) -> list[Rejection]:
    """``mosaic.vmem`` when the blocks (times their buffers) and ``scratch_bytes`` exceed
    ``limit_bytes`` (the call's ``vmem_limit_bytes``) or, without one, the device's VMEM."""
    budget = limit_bytes if limit_bytes is not None else device.vmem_bytes
    parts = [(block.subject, vmem_bytes(block, device)) for block in blocks]
    total = sum(size for _, size in parts) + scratch_bytes
    if total <= budget:
        return []
    largest = sorted((p for p in parts if p[1]), key=lambda p: -p[1])[:3]
    detail = ", ".join(f"{subject} {_mib(size)}" for subject, size in largest)
    scratch = f", scratch {_mib(scratch_bytes)}" if scratch_bytes else ""
    source = "the call's vmem_limit_bytes" if limit_bytes is not None else f"{device.name}'s VMEM"
    return [
        Rejection(
            RULE_VMEM,
            f"the blocks take {_mib(total)} of VMEM (double-buffered: {detail}{scratch}), "
            f"more than the {_mib(budget)} of {source}",
        )
    ]


def native_tiling_note(block: TpuBlock, device: TpuDevice) -> str | None:
    """Why an accepted VMEM block is slow on ``device``, when its last two dimensions
    are not multiples of the element type's native tile (and not the array's): Mosaic
    pads it in VMEM. None otherwise."""
    if block.memory_space not in VMEM_SPACES or len(block.block_shape) < 2:
        return None
    shape, array = block.block_shape, block.array_shape
    sublane_tile, lane_tile = native_tile(block.element_type, device)
    loose = []
    if shape[-2] % sublane_tile and shape[-2] != array[-2]:
        loose.append(f"the second-to-last dimension {shape[-2]} is not a multiple of {sublane_tile}")
    if shape[-1] % lane_tile and shape[-1] != array[-1]:
        loose.append(f"the last dimension {shape[-1]} is not a multiple of {lane_tile}")
    if not loose:
        return None
    return (
        f"{block.subject}: block {_shape(shape)} {block.element_type}: {' and '.join(loose)} "
        f"(the native {block.element_type} tile is ({sublane_tile}, {lane_tile})): Mosaic pads it to "
        f"{_shape(padded_shape(shape, block.element_type, device))} in VMEM"
    )


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _mib(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    return f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size} B"
