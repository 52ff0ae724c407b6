"""The TPU backend: a tiling of a fusion as a Pallas kernel on a TPU TensorCore, its
legality (Mosaic's block rules, :mod:`.mosaic`) and a documented cost model. XLA has no
TPU model; this one has the shape of its GPU model (:mod:`.gpu_model`): memory time,
compute time, their overlap, per-step overhead.

**The kernel.** A tiling is a Pallas grid (:func:`~hlo_indexing.symbolic_tiling.pallas.block_index_maps`):
one axis per output tiling parameter (``parallel``), then one per contracting parameter of
a dot (``arbitrary``, the kernel accumulates); every fusion parameter and output is read or
written through a ``BlockSpec``. A tile that is not a block is rejected
(``mosaic.not-a-block``), as are blocks Mosaic refuses and blocks over the VMEM budget
(every block double-buffered, plus a 32-bit accumulator of the output block when the grid
has contracting axes). Rankings of many candidates (``rank_tilings(fusion,
device="tpu-v5e")``) go through :mod:`.tpu_ranking`.

**The model** (per tiling, all figures of :class:`~hlo_indexing.devices.types.TpuDevice`):

* *HBM traffic*: Pallas's pipeline fetches an input block when its block index differs
  from the previous grid step's, and writes an output block back when its index changes
  (and at the end). The number of such steps is counted on the block index maps: for a
  map whose block indices each follow one grid axis (*separable*), the product of the grid
  extents up to the innermost axis it follows; otherwise the steps are enumerated (at most
  :data:`~hlo_indexing.limits.MAX_PALLAS_GRID_POINTS`). Each transfer moves the block's
  elements inside the array (a block hanging over the edge moves its in-bounds part,
  counted as ``min(block, array)`` per dimension). Read and write times are bytes over
  ``hbm_bandwidth_bytes_per_second``, the roofline's memory side.
* *MXU*: each dot computes, per grid step, ``2 * M * N * K`` operations on its blocks, each
  of ``M``, ``N``, ``K`` rounded up to the MXU's granularity (``M`` to the sublanes,
  ``K``, ``N`` to ``mxu_shape``), at the chip's ``peak_ops_per_second`` for its element
  type (a type without a rate of its own, such as f32, at bf16's: jax's DEFAULT precision
  multiplies in bf16 passes), divided among the TensorCores the grid's parallel axes can
  occupy (megacore chips: 2 when a parallel axis has at least 2 steps).
* The kernel body (the whole fused computation on its blocks) runs at every grid step,
  so every instruction's work below is per step, times the steps.
* *VPU*: every other instruction that computes (not a parameter, constant, reshape,
  bitcast, broadcast, slice or transpose) costs one vector operation per vreg of its tile
  padded to the native tiling (``sublane tile x lanes`` elements, :func:`.mosaic.padded_shape`),
  one vreg per cycle at ``clock_rate_ghz``: an assumption, the VPU's issue width and the
  cost of transcendental functions on the EUP are not published.
* *Overhead*: :data:`.tpu_figures.STEP_OVERHEAD_NS` per grid step (the pipeline's bookkeeping: DMA
  issue and semaphore waits), an assumption of the order JAX's Pallas TPU guides quote,
  not a measurement.
* *Overlap*: the pipeline overlaps each step's transfers with the previous step's compute:
  ``exec = max(memory, compute) + overhead + prologue``, the prologue being the first
  step's input blocks and the last step's output blocks, which nothing overlaps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.cost_model import mosaic
from hlo_indexing.cost_model.element_types import byte_size, xla_name
from hlo_indexing.cost_model.estimate import RULE_UNIMPLEMENTED, Assessment, Estimate, Rejection
from hlo_indexing.cost_model.tpu_figures import DotWork, OperandTraffic, dot_operations, mxu_rate, tpu_figures, vector_registers
from hlo_indexing.devices.types import TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import LimitExceededError, TilingError
from hlo_indexing.limits import MAX_PALLAS_GRID_POINTS
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.linear_form import single_dimension_forms
from hlo_indexing.symbolic_tiling.pallas import BlockSpec, NotABlockError, PallasTiling, block_index_maps, pallas_blockspecs
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

#: Opcodes that move or reinterpret data without vector arithmetic.
NO_VECTOR_WORK = frozenset(
    {"parameter", "constant", "iota", "reshape", "bitcast", "broadcast", "slice", "transpose", "copy", "tuple", "get-tuple-element", "dot"}
)

RULE_NOT_A_BLOCK = "mosaic.not-a-block"
#: A tiling that was not judged (a limit of :mod:`hlo_indexing.limits` stopped it).
RULE_NOT_EVALUATED = "tpu.not-evaluated"


@dataclass(frozen=True)
class TpuBlockSpec:
    """One operand of the kernel: its :class:`~hlo_indexing.symbolic_tiling.pallas.BlockSpec`,
    array shape and XLA element type."""

    spec: BlockSpec
    shape: tuple[int, ...]
    element_type: str

    @property
    def subject(self) -> str:
        """``parameter 0`` / ``output 0``."""
        return f"{self.spec.kind} {self.spec.index}"

    def block(self) -> mosaic.TpuBlock:
        """The block as Mosaic's rules see it (a scalar is read from SMEM, whole)."""
        trivial = tuple(self.spec.block_shape) == self.shape and all(ax.constant_value(e) == 0 for e in self.spec.index_map.results)
        return mosaic.TpuBlock(self.subject, tuple(self.spec.block_shape), self.shape, self.element_type, memory_space(self.shape), trivial)


def memory_space(shape: Sequence[int]) -> str:
    """Where the kernel keeps an operand's blocks: ``smem`` for a scalar (Mosaic has no
    rank-0 VMEM blocks; ``pl.BlockSpec(memory_space=pltpu.SMEM)``), else ``vmem``."""
    return "vmem" if len(shape) else "smem"


@dataclass(frozen=True)
class TpuKernel:
    """A tiling as a Pallas TPU kernel: the grid (output axes, then contracting axes),
    the operands and the tiled computation."""

    tile_sizes: tuple[int, ...]
    tiling: PallasTiling
    operands: tuple[TpuBlockSpec, ...]
    computation: TiledComputation
    num_parallel_axes: int


def tpu_kernel(fusion: TiledFusion, tile_sizes: Sequence[int], computation: TiledComputation | None = None) -> TpuKernel:
    """The kernel of one tiling (from its tiled ``computation`` when the caller has it).
    Raises :class:`NotABlockError` (a tile is not a block), :class:`TilingError` (invalid
    sizes) or :class:`~hlo_indexing.errors.LimitExceededError` (too many programs to
    check that the tiles are blocks)."""
    sizes = tuple(tile_sizes)
    if computation is None:
        computation = tiled_computation(fusion, list(sizes))
    tiling = block_index_maps(fusion, sizes, computation)
    types = _operand_types(computation)
    operands = []
    for spec in tiling.in_specs + tiling.out_specs:
        tensor = ir.RankedTensorType(types[(spec.kind, spec.index)])
        operands.append(TpuBlockSpec(spec, tuple(tensor.shape), xla_name(tensor.element_type)))
    parallel = sum(1 for p in fusion.parameters if not p.contracting)
    return TpuKernel(sizes, tiling, tuple(operands), computation, parallel)


def _operand_types(computation: TiledComputation) -> dict[tuple[str, int], ir.Type]:
    """The type of every fusion parameter (``("parameter", n)``) and output."""
    types: dict[tuple[str, int], ir.Type] = {}
    for number, insts in computation.by_parameter().items():
        types[("parameter", number)] = insts[0].node.value.type
    for number, root in enumerate(computation.roots):
        types[("output", number)] = root.node.value.type
    return types


def _tile_rejections(computation: TiledComputation, device: TpuDevice) -> list[Rejection]:
    """Mosaic's shape rules on the tiles of every parameter and output (their blocks,
    if they are blocks), before anything is built."""
    found: list[Rejection] = []
    tiles = [(f"parameter {n}", inst) for n, insts in computation.by_parameter().items() for inst in insts]
    tiles += [(f"output {n}", root) for n, root in enumerate(computation.roots)]
    seen = set()
    for subject, inst in tiles:
        tensor = ir.RankedTensorType(inst.node.value.type)
        shape = tuple(tensor.shape)
        block = mosaic.TpuBlock(subject, tuple(inst.tile_sizes), shape, xla_name(tensor.element_type), memory_space(shape), not shape)
        if (subject, block.block_shape) not in seen:
            seen.add((subject, block.block_shape))
            found += mosaic.block_rejections(block, device)
    return found


def pallas_tpu_text(fusion: TiledFusion, tile_sizes: Sequence[int]) -> str:
    """Python text of the tiling as a TPU Pallas kernel's grid and specs:
    :func:`~hlo_indexing.symbolic_tiling.pallas.pallas_blockspecs` (scalars in SMEM) plus
    the compiler parameters (``parallel`` output axes, ``arbitrary`` contracting axes)."""
    text = pallas_blockspecs(fusion, tile_sizes, smem_scalars=True).text
    contracting = sum(1 for p in fusion.parameters if p.contracting)
    semantics = ["parallel"] * (len(fusion.parameters) - contracting) + ["arbitrary"] * contracting
    quoted = ", ".join(f'"{s}"' for s in semantics) + ("," if len(semantics) == 1 else "")
    return text + f"compiler_params = pltpu.CompilerParams(dimension_semantics=({quoted}))\n"


def kernel_rejections(kernel: TpuKernel, device: TpuDevice) -> list[Rejection]:
    """Mosaic's block rules on every operand, then the VMEM budget (blocks
    double-buffered, plus an f32 accumulator of each output block when the grid has
    contracting axes)."""
    found: list[Rejection] = []
    blocks = [operand.block() for operand in kernel.operands]
    for block in blocks:
        found += mosaic.block_rejections(block, device)
    scratch = 0
    if len(kernel.tiling.grid) > kernel.num_parallel_axes:
        for operand in kernel.operands:
            if operand.spec.kind == "output":
                scratch += mosaic.buffer_bytes(operand.spec.block_shape, "f32", device)
    found += mosaic.vmem_rejections(blocks, scratch, device)
    return found


def assess_tpu(fusion: TiledFusion, tile_sizes: Sequence[int], device: TpuDevice) -> Assessment:
    """The tiling judged on ``device``: its rejections (Mosaic's shape rules on every
    tile first; then, if it passes them, whether the tiles are blocks and the VMEM
    budget) and, when it is a kernel, its :class:`~.estimate.Estimate` (also when the
    VMEM budget is broken, to compare). A tiling the tiled computation refuses to build
    (``UNIMPLEMENTED``: a negative stride, a concatenate tile across two operands) breaks
    ``tiling.unimplemented``, as on a GPU. Raises :class:`TilingError` for sizes that are
    not a tiling."""
    sizes = tuple(tile_sizes)
    try:
        computation = tiled_computation(fusion, list(sizes))
    except TilingError as error:
        if error.status != "UNIMPLEMENTED":
            raise
        return Assessment(sizes, (Rejection(RULE_UNIMPLEMENTED, error.message),))
    shapes = _tile_rejections(computation, device)
    if shapes:
        return Assessment(sizes, tuple(shapes))
    try:
        kernel = tpu_kernel(fusion, sizes, computation)
    except NotABlockError as error:
        return Assessment(sizes, (Rejection(RULE_NOT_A_BLOCK, str(error)),))
    except LimitExceededError as error:
        return Assessment(sizes, (Rejection(RULE_NOT_EVALUATED, f"whether the tiles are blocks was not decided: {error}"),))
    return Assessment(sizes, tuple(kernel_rejections(kernel, device)), estimate_kernel(kernel, fusion, device))


def estimate_kernel(kernel: TpuKernel, fusion: TiledFusion, device: TpuDevice) -> Estimate:
    """The model's estimate of one kernel (see the module docstring; the arithmetic is
    :func:`.tpu_figures.tpu_figures`'s)."""
    grid = kernel.tiling.grid
    steps = np.asarray([math.prod(grid)], np.int64)
    cores = np.asarray([device.tensor_cores_per_chip if any(n >= 2 for n in grid[: kernel.num_parallel_axes]) else 1],
                       np.int64)
    operands = []
    for operand in kernel.operands:
        block_bytes = math.prod(min(b, n) for b, n in zip(operand.spec.block_shape, operand.shape)) * byte_size(operand.element_type)
        operands.append(OperandTraffic(operand.subject, operand.spec.kind == "output", np.asarray([block_bytes], np.int64),
                                       np.asarray([block_changes(operand.spec.index_map, grid)], np.int64)))
    dots, vregs = _compute_work(kernel, fusion, device)
    return tpu_figures(operands, dots, vregs, steps, cores, device).estimate(0)


def block_changes(index_map: IndexingMap, grid: Sequence[int]) -> int:
    """How many grid steps see a block index different from the previous step's (the
    first step counts): the pipeline's transfers of that operand."""
    if not grid:
        return 1
    axes = _followed_axes(index_map, grid)
    if axes is not None:
        innermost = max(axes, default=-1)
        return math.prod(grid[: innermost + 1]) if innermost >= 0 else 1
    size = math.prod(grid)
    if size > MAX_PALLAS_GRID_POINTS:
        return size  # not enumerated: every step counted (an upper bound)
    _, images = index_map.enumerate(MAX_PALLAS_GRID_POINTS)
    if len(images) <= 1:
        return len(images)
    return 1 + int(np.any(images[1:] != images[:-1], axis=1).sum())


def _followed_axes(index_map: IndexingMap, grid: Sequence[int]) -> list[int] | None:
    """The grid axes (of more than one step) a separable map's block indices follow
    (:func:`~hlo_indexing.maps.linear_form.single_dimension_forms`); None when it is not
    separable."""
    if index_map.constraints or index_map.num_symbols:
        return None
    forms = single_dimension_forms(index_map.results)
    if forms is None:
        return None
    return [axis for axis, coefficient, _ in forms if axis is not None and coefficient != 0 and grid[axis] > 1]


def _compute_work(kernel: TpuKernel, fusion: TiledFusion, device: TpuDevice) -> tuple[list[DotWork], np.ndarray]:
    """The dots' work and the vector registers of the other computing instructions, per
    grid step."""
    sizes = kernel.tile_sizes
    dots, vregs = [], np.zeros(1, np.int64)
    for inst in kernel.computation.instructions:
        opcode = inst.node.opcode
        tile = np.asarray([[max(1, s) for s in inst.tile_sizes]], np.int64).reshape(1, -1)
        if opcode == "dot":
            k_step = math.prod(sizes[p] for p, param in enumerate(fusion.parameters) if param.contracting and param.owner == inst.node.name)
            element_type = xla_name(ir.ShapedType(inst.operands[0].node.value.type).element_type) if inst.operands else "bf16"
            dots.append(DotWork(dot_operations(tile, np.asarray([k_step], np.int64), device), mxu_rate(element_type, device)))
        elif opcode not in NO_VECTOR_WORK:
            vregs = vregs + vector_registers(tile, xla_name(ir.ShapedType(inst.node.value.type).element_type), device)
    return dots, vregs
