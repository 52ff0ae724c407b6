"""Pallas ``BlockSpec``s of a tiling: ``pl.BlockSpec`` objects and a grid to pass to
``pl.pallas_call``, and the same as Python text a Pallas user reads or pastes.

A tiling's tiles are Pallas *blocks* when every tile of every fusion parameter and
output has stride 1 and offsets that are multiples of its sizes at every program id:
then ``pl.BlockSpec(block_shape, index_map)`` with ``block_shape`` the tile sizes and
``index_map`` the offsets divided by the sizes describes it. The grid has one axis per
output tiling parameter (the number of tiles along it), then one per contracting
parameter of a dot (the kernel accumulates over it); a spec whose tile does not move
along an axis ignores that index. An operand read by some programs only (a
concatenate's operand, a pad's operand at the tiles of its padding) still has a block
at every grid step: its index map must stay inside the array there too, else the tiles
are not blocks (Pallas refuses a block index past the array's blocks; its plain
interpreter clamps it silently). :func:`pallas_blockspecs` returns a
:class:`PallasBlockSpecs`: ``specs.grid``, ``specs.in_specs`` and ``specs.out_specs``
are the grid and ``pl.BlockSpec`` objects (``jax`` is imported when they are asked for),
``pl.pallas_call(kernel, out_shape=..., **specs.pallas_call_arguments())`` runs a kernel
on them, and ``str(specs)`` (``specs.text``) is the same as Python::

    grid = (4, 1)
    in_specs = [
        pl.BlockSpec((1, 6), lambda i, j: (i, 0)),  # parameter 0: tensor<4x6xf32>
    ]
    out_specs = pl.BlockSpec((1, 6), lambda i, j: (i, 0))  # output 0: tensor<4x6xf32>

:func:`block_index_maps` gives the same maps as :class:`IndexingMap` s (grid indices ->
block indices), for checking.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError, UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion

if TYPE_CHECKING:  # jax is optional: only the pl.BlockSpec objects need it
    import jax
    from jax.experimental.pallas import BlockSpec as PallasBlockSpec

    #: A grid or block index as Pallas passes it: a Python int, or a traced scalar.
    GridIndex = int | jax.Array

#: Names of the grid indices in the generated lambdas (``g6``, ``g7``, ... after these).
INDEX_NAMES = ("i", "j", "k", "l", "m", "n")


class NotABlockError(HloIndexingError):
    """A tile of the tiling is not a Pallas block (the message names it and why)."""


@dataclass(frozen=True)
class BlockSpec:
    """One operand's (``kind`` ``parameter``/``output``, number ``index``) block:
    ``block_shape`` and ``index_map`` (grid indices -> block indices)."""

    kind: str
    index: int
    type: str
    block_shape: tuple[int, ...]
    index_map: IndexingMap


@dataclass(frozen=True)
class PallasTiling:
    """The grid and the block specs of the parameters and outputs."""

    grid: tuple[int, ...]
    in_specs: tuple[BlockSpec, ...]
    out_specs: tuple[BlockSpec, ...]


def block_index_maps(fusion: TiledFusion, tile_sizes: Sequence[int], computation: TiledComputation | None = None) -> PallasTiling:
    """The grid and block specs of flat ``tile_sizes`` (see the module docstring), from
    their tiled ``computation`` when the caller has it.
    Raises :class:`NotABlockError` when a tile is not a block (or an operand read by
    some programs only has no block inside its array at the others), or a parameter is
    read through two different tiles (the message names the operand by its number only, so
    it holds for every computation of the same body); :class:`~hlo_indexing.errors.TilingError`
    for invalid sizes."""
    sizes = list(tile_sizes)
    if computation is None:
        computation = tiled_computation(fusion, sizes)
    parameters = fusion.parameters
    axes = [i for i, p in enumerate(parameters) if not p.contracting] + [i for i, p in enumerate(parameters) if p.contracting]
    counts = [-(-parameters[i].size // sizes[i]) for i in axes]
    n_outputs = sum(1 for p in parameters if not p.contracting)
    by_parameter: dict[int, list[TiledInstruction]] = {}
    for inst in computation.instructions:
        number = inst.node.parameter_number
        if number is not None:
            by_parameter.setdefault(number, []).append(inst)
    in_specs = []
    for number, insts in sorted(by_parameter.items()):
        distinct = {(i.tile_sizes, i.tile_strides, str(i.tile_offsets_indexing)) for i in insts}
        if len(distinct) > 1:
            raise NotABlockError(f"parameter {number} is read through {len(distinct)} different tiles: no single BlockSpec")
        in_specs.append(_spec("parameter", number, insts[0], axes, counts, n_outputs))
    out_specs = [_spec("output", k, root, axes, counts, n_outputs) for k, root in enumerate(computation.roots)]
    return PallasTiling(tuple(counts), tuple(in_specs), tuple(out_specs))


def _spec(kind: str, index: int, inst: TiledInstruction, axes: list[int], counts: list[int], n_outputs: int) -> BlockSpec:
    label = f"{kind} {index}"
    offsets_map = inst.tile_offsets_indexing
    if offsets_map.runtime_vars:
        raise NotABlockError(f"{label}: its offsets depend on runtime values")
    if any(stride != 1 and size > 1 for size, stride in zip(inst.tile_sizes, inst.tile_strides)):
        raise NotABlockError(f"{label}: strides {list(inst.tile_strides)} are not 1")
    points, offsets = offsets_map.enumerate()
    block = np.maximum(np.asarray(inst.tile_sizes, np.int64), 1)
    if offsets.size and np.any(offsets % block):
        raise NotABlockError(f"{label}: offsets are not multiples of the tile sizes {list(inst.tile_sizes)}")
    ctx = offsets_map.context
    # The node's program id runs over the output axes, then its own contracting axes
    # (minor-most), as tiled_computation numbers programs.
    order = list(range(n_outputs)) + [axes.index(p) for p in inst.node.hidden]
    pid = ax.constant(0, ctx)
    for position in order:
        pid = ax.add(ax.mul(pid, counts[position]), ax.dim(position, ctx))
    grid_vars = [Variable(Interval(0, n - 1), grid_index_name(k)) for k, n in enumerate(counts)]
    grid_to_offsets = compose(IndexingMap.from_exprs(grid_vars, [pid], context=ctx), offsets_map)
    results = [ax.floordiv(e, int(b)) for e, b in zip(grid_to_offsets.results, block)]
    index_map = IndexingMap.from_exprs(grid_vars, results, context=ctx).simplify()
    programs = int(np.prod([counts[position] for position in order], dtype=np.int64))
    if len(points) < programs:  # its tile's offsets say nothing of the other programs' blocks
        _check_blocks_inside(label, index_map, tuple(ir.RankedTensorType(inst.node.value.type).shape), block,
                             f"read by {len(points)} of the {programs} programs only")
    return BlockSpec(kind, index, str(inst.node.value.type), inst.tile_sizes, index_map)


def _check_blocks_inside(label: str, index_map: IndexingMap, shape: Sequence[int], block: np.ndarray, why: str) -> None:
    """Raise :class:`NotABlockError` when ``index_map`` may name a block outside an
    array of ``shape`` at some grid step: Pallas reads a block at every step, and refuses
    one outside the array (a concatenate's operand, or a pad's operand, at the steps of
    the other operands or of the padding)."""
    for dim, (expr, extent, size) in enumerate(zip(index_map.results, shape, block)):
        bounds = index_map.expr_bounds(expr)
        last = -(-extent // int(size)) - 1
        if bounds.lower < 0 or bounds.upper > last:
            raise NotABlockError(
                f"{label}: {why} (a concatenate's operand, a pad's padding), its block index along dimension {dim} "
                f"{bounds} leaves the array's blocks [0, {last}] at the others"
            )


def grid_index_name(k: int) -> str:
    """The name of grid index ``k`` in generated Python (``i``, ``j``, ... then ``g6``)."""
    return INDEX_NAMES[k] if k < len(INDEX_NAMES) else f"g{k}"


def python_expr(expr: ir.AffineExpr, names: Sequence[str]) -> str:
    """An affine expression of grid dims as Python (``floordiv`` -> ``//``, ``mod`` -> ``%``)."""
    text = str(expr).replace(" floordiv ", " // ").replace(" mod ", " % ")
    if "ceildiv" in text or re.search(r"\bs\d+\b", text):
        raise NotABlockError(f"cannot write {expr} in Python")
    return re.sub(r"\bd(\d+)\b", lambda m: names[int(m.group(1))], text)


@dataclass(frozen=True)
class BlockIndexMap:
    """One operand's Pallas ``index_map``: grid indices -> block indices, callable as
    Pallas calls it (with Python ints, or the traced scalars of a kernel's grid), each
    result computed with ``+``, ``*``, ``//`` and ``%`` (floor semantics, as MLIR's
    ``floordiv`` and ``mod``). ``text`` is the same as a Python lambda."""

    text: str
    results: tuple[Callable[[Sequence[GridIndex]], GridIndex], ...] = field(repr=False, compare=False)

    def __call__(self, *indices: GridIndex) -> tuple[GridIndex, ...]:
        return tuple(result(indices) for result in self.results)


def block_index_map(spec: BlockSpec, names: Sequence[str]) -> BlockIndexMap:
    """The callable ``index_map`` of ``spec`` (grid indices named ``names``). Raises
    :class:`NotABlockError` for a map Python's operators cannot compute (``ceildiv``,
    symbols)."""
    results = [python_expr(e, names) for e in spec.index_map.results]
    args = ", ".join(names) if names else "*_"
    text = f"lambda {args}: (" + ", ".join(results) + ("," if len(results) == 1 else "") + ")"
    return BlockIndexMap(text, tuple(ax.fold(e, _leaf_function, _combined_function) for e in spec.index_map.results))


def _leaf_function(node: ir.AffineExpr) -> Callable[[Sequence[GridIndex]], GridIndex]:
    """A constant, or grid index ``d_k`` (:func:`python_expr` refused symbols)."""
    if isinstance(node, ax.Const):
        value = int(node.value)
        return lambda indices: value
    position = cast(ir.AffineDimExpr, node).position
    return lambda indices: indices[position]


def _combined_function(
    node: ir.AffineExpr, lhs: Callable[[Sequence[GridIndex]], GridIndex], rhs: Callable[[Sequence[GridIndex]], GridIndex]
) -> Callable[[Sequence[GridIndex]], GridIndex]:
    """``lhs op rhs`` (:func:`python_expr` refused ``ceildiv``)."""
    operation = _OPERATIONS[type(node)]
    return lambda indices: operation(lhs(indices), rhs(indices))


_OPERATIONS: dict[type, Callable[[GridIndex, GridIndex], GridIndex]] = {
    ax.Add: operator.add,
    ax.Mul: operator.mul,
    ax.FloorDiv: operator.floordiv,
    ax.Mod: operator.mod,
}


@dataclass(frozen=True)
class PallasBlockSpecs:
    """The grid and block specs of a tiling (see the module docstring): ``grid``,
    ``in_specs`` (one ``pl.BlockSpec`` per fusion parameter read, in parameter order),
    ``out_specs`` (one spec, or a list for several outputs) and ``text``, the same as
    Python; ``str()`` is the text, which also decides equality. The ``pl.BlockSpec``
    objects need ``jax``; the text and the :class:`BlockIndexMap` s (``in_index_maps``,
    ``out_index_maps``) do not."""

    tiling: PallasTiling = field(repr=False, compare=False)
    in_index_maps: tuple[BlockIndexMap, ...] = field(repr=False, compare=False)
    out_index_maps: tuple[BlockIndexMap, ...] = field(repr=False, compare=False)
    text: str
    smem_scalars: bool = field(default=False, repr=False, compare=False)

    def __str__(self) -> str:
        return self.text

    @property
    def grid(self) -> tuple[int, ...]:
        """The number of programs along each grid axis."""
        return self.tiling.grid

    @property
    def in_specs(self) -> list[PallasBlockSpec]:
        """A ``pl.BlockSpec`` per fusion parameter read, in parameter order."""
        return [_pallas_block_spec(s, m, self.smem_scalars) for s, m in zip(self.tiling.in_specs, self.in_index_maps)]

    @property
    def out_specs(self) -> PallasBlockSpec | list[PallasBlockSpec]:
        """The output's ``pl.BlockSpec``, or a list of them for several outputs."""
        specs = [_pallas_block_spec(s, m, self.smem_scalars) for s, m in zip(self.tiling.out_specs, self.out_index_maps)]
        return specs[0] if len(specs) == 1 else specs

    def pallas_call_arguments(self) -> dict[str, object]:
        """``grid``, ``in_specs`` and ``out_specs``, the keyword arguments of
        ``pl.pallas_call`` they fill."""
        return {"grid": self.grid, "in_specs": self.in_specs, "out_specs": self.out_specs}


def _pallas_block_spec(spec: BlockSpec, index_map: BlockIndexMap, smem_scalars: bool) -> PallasBlockSpec:
    try:
        from jax.experimental.pallas import BlockSpec as PallasBlockSpec, tpu as pltpu  # optional: only the objects need jax
    except ImportError as exc:
        raise UnsupportedError(
            f"pl.BlockSpec objects need jax ({exc}); the specs' text (str()) and index maps do not"
        ) from None
    if smem_scalars and not spec.block_shape:
        return PallasBlockSpec(memory_space=pltpu.SMEM)
    return PallasBlockSpec(spec.block_shape, index_map)


def pallas_blockspecs(
    fusion: TiledFusion,
    tile_sizes: Sequence[int],
    computation: TiledComputation | None = None,
    *,
    smem_scalars: bool = False,
) -> PallasBlockSpecs:
    """The grid and block specs of flat ``tile_sizes`` (a :class:`PallasBlockSpecs`: the
    ``pl.BlockSpec`` objects, and as text ``grid = (...)``, ``in_specs = [...]``,
    ``out_specs = ...``); see :func:`block_index_maps` for ``computation`` and when it raises. With
    ``smem_scalars``, a rank-0 operand's text is ``pl.BlockSpec(memory_space=pltpu.SMEM)``
    (a TPU kernel reads scalars from SMEM: Mosaic has no rank-0 VMEM blocks)."""
    tiling = block_index_maps(fusion, tile_sizes, computation)
    names = [grid_index_name(k) for k in range(len(tiling.grid))]
    in_maps = tuple(block_index_map(s, names) for s in tiling.in_specs)
    out_maps = tuple(block_index_map(s, names) for s in tiling.out_specs)

    def spec(s: BlockSpec, index_map: BlockIndexMap) -> str:
        if smem_scalars and not s.block_shape:
            return f"pl.BlockSpec(memory_space=pltpu.SMEM),  # {s.kind} {s.index}: {s.type}"
        shape = "(" + ", ".join(map(str, s.block_shape)) + ("," if len(s.block_shape) == 1 else "") + ")"
        return f"pl.BlockSpec({shape}, {index_map.text}),  # {s.kind} {s.index}: {s.type}"

    grid = "(" + ", ".join(map(str, tiling.grid)) + ("," if len(tiling.grid) == 1 else "") + ")"
    lines = [f"grid = {grid}", "in_specs = ["] + ["    " + spec(s, m) for s, m in zip(tiling.in_specs, in_maps)] + ["]"]
    if len(tiling.out_specs) == 1:
        lines.append("out_specs = " + _drop_comma(spec(tiling.out_specs[0], out_maps[0])))
    else:
        lines += ["out_specs = ["] + ["    " + spec(s, m) for s, m in zip(tiling.out_specs, out_maps)] + ["]"]
    return PallasBlockSpecs(tiling, in_maps, out_maps, "\n".join(lines) + "\n", smem_scalars)


def _drop_comma(text: str) -> str:
    code, comment = text.split("  # ", 1)
    return f"{code.rstrip(',')}  # {comment}"
