"""The data of a tile picture (:mod:`hlo_indexing.tools.tile_view` draws it): for a
computation tiled at flat tile sizes, one output tile (``tile_id``, numbered major to
minor as the program ids of
:func:`~hlo_indexing.symbolic_tiling.tiled_computation.tiled_computation`), the elements
it writes, and per fusion parameter the elements it needs and the parameter's tile boxes.

The needed elements are the image of the fused output -> parameter maps
(:func:`~hlo_indexing.analysis.fusion.fusion_indexing`) with the output dimensions
narrowed to the output tile. The image is enumerated per group of variables that the
results and constraints tie together (a matmul operand's row comes from the output row,
its column from the contracting variable: two small enumerations, not their product);
the image is the product of the groups' images. A group of more than :data:`MAX_POINTS`
points, or an image of more than :data:`MAX_POINTS` elements, is refused
(:class:`~hlo_indexing.errors.EnumerationTooLargeError`).

:func:`tile_reads` gives the same tile's fused maps and operand boxes keyed by runtime
value, without enumerating the needed elements: for checking a tile read at more
runtime values than a picture shows (:data:`MAX_BOXES`) one value at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from hlo_indexing.analysis.fusion import fusion_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.errors import (
    EnumerationTooLargeError,
    HloIndexingError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    SourceLocation,
    UnsupportedError,
)
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.points import distinct_rows
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, analyze_fusion

#: Largest number of points enumerated for one group of variables of a map, and of
#: elements one operand's needed set may hold; largest number of boxes of one operand.
MAX_POINTS = 1 << 22
MAX_BOXES = 256


@dataclass(frozen=True)
class Box:
    """One tile box: ``offset + stride * iota(size)`` per dimension (it may hang over
    the array's edge); ``label`` says which step or runtime value it is."""

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    label: str = ""

    def indices(self, dim: int) -> range:
        """The indices of the box along ``dim`` (in or out of the array; a stride of 0,
        as a one-element dimension may have, repeats its offset)."""
        offset, size, stride = self.offsets[dim], self.sizes[dim], self.strides[dim]
        if size <= 0:
            return range(offset, offset)
        return range(offset, offset + stride * (size - 1) + 1, stride) if stride > 0 else range(offset, offset + 1)

    def contains(self, index: Sequence[int]) -> bool:
        """Whether element ``index`` is one of the box's."""
        return all(i in self.indices(d) for d, i in enumerate(index))


@dataclass(frozen=True)
class TensorPanel:
    """What the picture shows of one tensor: ``kind`` (``output``/``operand``) and
    ``index`` (output or parameter number), its HLO ``name`` and ``type``, the elements
    the tile writes (output) or needs (operand), and its tile boxes."""

    kind: str
    index: int
    name: str
    type: str
    shape: tuple[int, ...]
    needed: frozenset[tuple[int, ...]]
    boxes: tuple[Box, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The panel's heading."""
        what = f"output {self.index}" if self.kind == "output" else f"parameter {self.index}"
        verb = "writes" if self.kind == "output" else "needs"
        count = len(self.needed)
        return f"{what} ({self.name}): {self.type}: the tile {verb} {count} element{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class TilePicture:
    """One output tile of a tiling and what it needs (see the module docstring)."""

    label: str
    tile_sizes: tuple[int, ...]
    parameters: tuple[str, ...]
    tile_id: int
    num_tiles: int
    output: TensorPanel
    operands: tuple[TensorPanel, ...] = field(default=())

    @property
    def heading(self) -> str:
        """The first line of the picture."""
        return (
            f"{self.label}: tile sizes {list(self.tile_sizes)} ({', '.join(self.parameters)}), "
            f"tile {self.tile_id} of {self.num_tiles} (0-based)"
        )


def tile_picture(
    computation: ir.Operation, tile_sizes: Sequence[int], tile_id: int = 0, *, output: int = 0, label: str = "",
    allow_pad: bool = False,
) -> TilePicture:
    """The :class:`TilePicture` of tile ``tile_id`` of output ``output`` of
    ``computation`` (a ``func.func`` or ``mhlo.fusion``) tiled at flat ``tile_sizes``
    (an extra output of a multi-output fusion is written by the same programs;
    ``allow_pad``: a pad outside a gemm fusion is tiled too, as
    :func:`~hlo_indexing.symbolic_tiling.tiled_fusion.analyze_fusion`'s).

    Raises :class:`~hlo_indexing.errors.HloIndexingError` located at the computation:
    :class:`UnsupportedError` when it cannot be tiled or an operand's fused map is
    unknown, :class:`InvalidArgumentError` when the sizes are not a valid tiling,
    :class:`IndexOutOfRangeError` for a tile id outside ``[0, tiles)`` or an output the
    computation does not have,
    :class:`EnumerationTooLargeError` when the needed elements are too many to enumerate."""
    label = label or _label(computation)
    at = location_of(computation.location, "<string>")
    fusion, tiled, names = _tiled(computation, tile_sizes, tile_id, output, label, allow_pad)
    root = tiled.roots[output]
    root_boxes = _boxes(root, tile_id, tiled.num_programs)
    shape = _shape(root.node.value)
    output_elements = frozenset(
        index
        for box in root_boxes
        for index in itertools.product(*(inside(box.indices(d), n) for d, n in enumerate(shape)))
    )
    written = TensorPanel("output", output, root.name, str(root.node.value.type), shape, output_elements, root_boxes)
    operands = []
    for number, argument, maps, insts in _parameters(computation, fusion, tiled, output):
        name = insts[0].name if insts and insts[0].name != label else f"parameter({number})"
        boxes = tuple(b for inst in insts for b in _boxes(inst, tile_id, tiled.num_programs))
        needed = needed_elements(maps, root_boxes, f"{label}: parameter {number}", at)
        notes = () if insts or not needed else ("not in the tiled computation",)
        operands.append(
            TensorPanel("operand", number, name, str(argument.type), _shape(argument), needed, boxes, notes)
        )
    return TilePicture(label, tuple(tile_sizes), names, tile_id, tiled.num_programs, written, tuple(operands))


@dataclass(frozen=True, eq=False)
class ValueBoxes:
    """The boxes one tiled instruction reads a parameter through for one output tile,
    one per program and runtime value: box ``k`` is at ``offsets[k]`` (the
    instruction's ``sizes`` and ``strides``), read at the runtime values ``values[k]``
    (one column per runtime variable of the instruction, ``variables``: their origins,
    ``operand k of node n``, and ranges; no column: a box read at every runtime value)."""

    name: str
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    values: np.ndarray
    offsets: np.ndarray
    variables: tuple[Variable, ...] = ()


@dataclass(frozen=True, eq=False)
class ParameterReads:
    """What one output tile reads of fusion parameter ``index``: the fused output ->
    parameter ``maps`` and the boxes of each tiled instruction reading it."""

    index: int
    maps: frozenset[IndexingMap]
    boxes: tuple[ValueBoxes, ...]


@dataclass(frozen=True, eq=False)
class TileReads:
    """One output tile (``tile_id`` of ``num_tiles``, its ``output`` boxes) and what it
    reads of each ranked-tensor parameter (:func:`tile_reads`)."""

    label: str
    tile_sizes: tuple[int, ...]
    tile_id: int
    num_tiles: int
    output: tuple[Box, ...]
    operands: tuple[ParameterReads, ...]


def tile_reads(
    computation: ir.Operation, tile_sizes: Sequence[int], tile_id: int = 0, *, output: int = 0, label: str = "",
    allow_pad: bool = False,
) -> TileReads:
    """The :class:`TileReads` of tile ``tile_id`` of output ``output`` of ``computation``
    tiled at ``tile_sizes``: the data of :func:`tile_picture` without enumerating the
    needed elements, and with the operand boxes as arrays keyed by their runtime values,
    so that a tile read at many runtime values (a gather from a large table) can be
    checked one value at a time. Raises as :func:`tile_picture`; more than
    :data:`MAX_POINTS` boxes of one instruction, or more than :data:`MAX_BOXES` of the
    output tile: :class:`EnumerationTooLargeError`."""
    label = label or _label(computation)
    fusion, tiled, _ = _tiled(computation, tile_sizes, tile_id, output, label, allow_pad)
    operands = []
    for number, _, maps, insts in _parameters(computation, fusion, tiled, output):
        boxes = []
        for inst in insts:
            points, offsets, _ = _box_points(inst, tile_id, tiled.num_programs, MAX_POINTS)
            variables = tuple(inst.tile_offsets_indexing.runtime_vars)
            values = points[:, points.shape[1] - len(variables) :]
            boxes.append(ValueBoxes(inst.name, inst.tile_sizes, inst.tile_strides, values, offsets, variables))
        operands.append(ParameterReads(number, maps, tuple(boxes)))
    root_boxes = _boxes(tiled.roots[output], tile_id, tiled.num_programs)
    return TileReads(label, tuple(tile_sizes), tile_id, tiled.num_programs, root_boxes, tuple(operands))


def _parameters(
    computation: ir.Operation, fusion: TiledFusion, tiled: TiledComputation, output: int
) -> Iterator[tuple[int, "ir.Value", frozenset[IndexingMap], list[TiledInstruction]]]:
    """Per ranked-tensor parameter of ``computation``: its number, value, fused maps from
    output ``output`` and the tiled instructions reading it."""
    region = computation.regions[0]
    maps = fusion_indexing(region, fusion.result_number(output))
    by_parameter: dict[int, list[TiledInstruction]] = {}
    for inst in tiled.instructions:
        number = inst.node.parameter_number
        if number is not None:
            by_parameter.setdefault(number, []).append(inst)
    for number, argument in enumerate(region.blocks[0].arguments):
        if isinstance(argument.type, ir.RankedTensorType):
            yield number, argument, maps.maps[number], by_parameter.get(number, [])


def _tiled(
    computation: ir.Operation, tile_sizes: Sequence[int], tile_id: int, output: int, label: str, allow_pad: bool
) -> tuple[TiledFusion, TiledComputation, tuple[str, ...]]:
    """The analysis and tiled computation of ``computation`` at ``tile_sizes`` and the
    tiling parameters' names, raising as :func:`tile_picture` says."""
    at = location_of(computation.location, "<string>")
    try:
        fusion = analyze_fusion(computation, allow_pad=allow_pad)
    except HloIndexingError as exc:  # e.g. a zero-sized output
        raise UnsupportedError(f"{label}: cannot tile: {exc.message}", at) from None
    if isinstance(fusion, AnalysisFailure):
        raise UnsupportedError(f"{label}: {fusion}", at)
    names = tuple(f"{'K' if p.contracting else 'dim'} {p.dim} of {p.owner}" for p in fusion.parameters)
    if len(tile_sizes) != len(fusion.parameters):
        raise InvalidArgumentError(
            f"{label}: {len(tile_sizes)} tile sizes given, the tiling has {len(fusion.parameters)} parameters: "
            f"{', '.join(names)}",
            at,
        )
    try:
        tiled = tiled_computation(fusion, list(tile_sizes))
    except HloIndexingError as exc:
        raise InvalidArgumentError(
            f"{label}: tile sizes {list(tile_sizes)} are not a valid tiling: {exc.message}", at
        ) from None
    if not 0 <= tile_id < tiled.num_programs:
        raise IndexOutOfRangeError(f"{label}: tile id {tile_id} is outside [0, {tiled.num_programs - 1}]", at)
    if not 0 <= output < len(tiled.roots):
        raise IndexOutOfRangeError(f"{label}: output {output} is outside [0, {len(tiled.roots) - 1}]", at)
    return fusion, tiled, names


def _label(computation: ir.Operation) -> str:
    for label, op in computations(computation.parent.operation if computation.parent is not None else computation):
        if op == computation:
            return label
    return computation.name


def _shape(value: "ir.Value") -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def inside(indices: range, extent: int) -> list[int]:
    """The ``indices`` inside ``[0, extent)``."""
    return [i for i in indices if 0 <= i < extent]


def _box_points(inst: TiledInstruction, tile_id: int, num_tiles: int, limit: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The programs of ``inst`` for output tile ``tile_id`` (``tile_id * steps + k``,
    ``steps`` contracting steps per output tile, minor-most) at every runtime value:
    the enumerated points (program id, then runtime values) and their box offsets, and
    ``steps``. More than ``limit`` points: :class:`EnumerationTooLargeError`."""
    offsets_map = inst.tile_offsets_indexing
    programs = offsets_map.dim_vars[0].bounds.upper + 1 if offsets_map.num_dims else 1
    steps = max(1, programs // max(num_tiles, 1))
    pids = range(tile_id * steps, (tile_id + 1) * steps)
    pinned = offsets_map
    if offsets_map.num_dims:
        pinned = offsets_map.replace(dims=[Variable(Interval(pids.start, pids.stop - 1), "pid_0")])
    if pinned.domain_size() > limit:
        raise EnumerationTooLargeError(
            f"{inst.name}: {pinned.domain_size()} tile boxes for one output tile, more than {limit}",
            limit="MAX_BOXES" if limit == MAX_BOXES else "MAX_POINTS",
            value=pinned.domain_size(),
        )
    points, images = pinned.enumerate(max_points=limit)
    return points, images, steps


def _boxes(inst: TiledInstruction, tile_id: int, num_tiles: int) -> tuple[Box, ...]:
    """The boxes of ``inst`` for output tile ``tile_id``: its programs ``tile_id * steps
    + k`` (``steps`` contracting steps per output tile, minor-most), every runtime value."""
    offsets_map = inst.tile_offsets_indexing
    points, images, steps = _box_points(inst, tile_id, num_tiles, MAX_BOXES)
    first = tile_id * steps
    boxes = []
    for point, image in zip(points.tolist(), images.tolist()):
        parts = [f"step {point[0] - first} of {steps}"] if steps > 1 else []
        values = point[offsets_map.num_dims :]
        parts += [f"{v.origin or 'runtime'} = {value}" for v, value in zip(offsets_map.runtime_vars, values)]
        boxes.append(Box(tuple(image), inst.tile_sizes, inst.tile_strides, ", ".join(parts)))
    return tuple(dict.fromkeys(boxes))


def needed_elements(
    maps: frozenset[IndexingMap], output_boxes: Sequence[Box], what: str, at: SourceLocation | None
) -> frozenset[tuple[int, ...]]:
    """The elements the fused ``maps`` read for the output elements of ``output_boxes``:
    the image of each map with its output dimensions restricted to a box (its range, and
    a stride constraint). Raises, naming ``what`` at ``at``: :class:`UnsupportedError`
    for an unknown map, :class:`EnumerationTooLargeError` past :data:`MAX_POINTS`."""
    return frozenset(map(tuple, needed_array(maps, output_boxes, what, at).tolist()))


def needed_array(
    maps: frozenset[IndexingMap], output_boxes: Sequence[Box], what: str, at: SourceLocation | None
) -> np.ndarray:
    """:func:`needed_elements` as the distinct rows of an int64 array (shape ``(0, 0)``
    when none), for checks that compare many elements."""
    found: list[np.ndarray] = []
    for m in maps:
        if m.is_undefined:
            raise UnsupportedError(f"{what}: its fused map is unknown ({m.reason})", at)
        if m.is_known_empty():
            continue
        for box in output_boxes:
            restricted = _restrict(m, box)
            if restricted is not None:
                found.append(image_array(restricted, what, at))
    found = [rows for rows in found if len(rows)]
    if not found:
        return np.zeros((0, 0), dtype=np.int64)
    if not found[0].shape[1]:  # a scalar parameter: its one element
        return found[0][:1]
    return found[0] if len(found) == 1 else distinct_rows(np.concatenate(found))[0]


def image(m: IndexingMap, what: str = "map", at: SourceLocation | None = None) -> set[tuple[int, ...]]:
    """The distinct results of ``m`` over its domain, enumerated per group of variables
    the results and constraints tie together (see the module docstring)."""
    return set(map(tuple, image_array(m, what, at).tolist()))


def image_array(m: IndexingMap, what: str = "map", at: SourceLocation | None = None) -> np.ndarray:
    """:func:`image` as the rows of an int64 array (``num_results`` columns; not
    deduplicated across groups, which are independent, so its rows are distinct)."""
    variables = list(m.dim_vars) + list(m.symbol_vars)
    if m.is_known_empty() or any(v.bounds.upper < v.bounds.lower for v in variables):
        return np.zeros((0, m.num_results), dtype=np.int64)
    parent = list(range(len(variables)))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def used(expr: ir.AffineExpr) -> list[int]:
        dims: set[int] = set()
        symbols: set[int] = set()
        ax.used_variables(expr, dims, symbols)
        return sorted(dims) + [m.num_dims + s for s in sorted(symbols)]

    tied = [used(e) for e in m.results] + [used(e) for e in m.constraints]
    for group in tied:
        for v in group[1:]:
            parent[find(v)] = find(group[0])
    members: dict[int, list[int]] = {}
    for v in range(len(variables)):
        members.setdefault(find(v), []).append(v)
    key = [find(vs[0]) if vs else -1 for vs in tied]  # -1: a constant result or constraint
    factors: list[tuple[list[int], np.ndarray]] = []
    for root in sorted({k for k in key}):
        results = [r for r in range(m.num_results) if key[r] == root]
        constraints = [c for c, k in zip(m.constraints.items(), key[m.num_results :]) if k == root]
        values = _group_image(m, members.get(root, []), results, constraints, what, at)
        if not len(values):
            return np.zeros((0, m.num_results), dtype=np.int64)
        if results:
            factors.append((results, values))
    total = 1
    for _, values in factors:
        total *= len(values)
    if total > MAX_POINTS:
        raise EnumerationTooLargeError(
            f"{what}: {total} elements needed, more than {MAX_POINTS}", at, limit="MAX_POINTS", value=total
        )
    out = np.zeros((total, m.num_results), dtype=np.int64)
    repeat = total  # the cartesian product of the factors, the first varying slowest
    for results, values in factors:
        repeat //= len(values)
        out[:, results] = np.tile(np.repeat(values, repeat, axis=0), (total // (repeat * len(values)), 1))
    return out


def _group_image(
    m: IndexingMap,
    group: list[int],
    results: list[int],
    constraints: list[tuple[ir.AffineExpr, Interval]],
    what: str,
    at: SourceLocation | None,
) -> np.ndarray:
    """The distinct values of ``results`` over the points of the ``group`` variables that
    satisfy ``constraints`` (other variables do not occur in them), one row each: one
    empty row when some point satisfies them and there are no results, none when no
    point does."""
    variables = list(m.dim_vars) + list(m.symbol_vars)
    count = 1
    for v in group:
        count *= variables[v].bounds.upper - variables[v].bounds.lower + 1
    if count > MAX_POINTS:
        raise EnumerationTooLargeError(
            f"{what}: {count} points to enumerate, more than {MAX_POINTS}", at, limit="MAX_POINTS", value=count
        )
    axes = [np.arange(variables[v].bounds.lower, variables[v].bounds.upper + 1, dtype=np.int64) for v in group]
    grids = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")] if group else []
    arrays = [np.full(count, v.bounds.lower, np.int64) for v in variables]
    for v, grid in zip(group, grids):
        arrays[v] = grid
    dims, symbols = arrays[: m.num_dims], arrays[m.num_dims :]
    keep = np.ones(count, dtype=bool)
    for expr, interval in constraints:
        value = np.broadcast_to(ax.evaluate_array(expr, dims, symbols, keep), (count,))
        keep &= (value >= interval.lower) & (value <= interval.upper)
    values = [np.broadcast_to(ax.evaluate_array(m.results[r], dims, symbols, keep), (count,)) for r in results]
    if not keep.any():
        return np.zeros((0, len(results)), dtype=np.int64)
    if not results:
        return np.zeros((1, 0), dtype=np.int64)
    return distinct_rows(np.stack(values, axis=1)[keep])[0]


def _restrict(m: IndexingMap, box: Box) -> IndexingMap | None:
    """``m`` with each dimension narrowed to the box's indices (None when empty)."""
    dims = []
    constraints = dict(m.constraints)
    for d, variable in enumerate(m.dim_vars):
        indices = box.indices(d)
        lower = max(variable.bounds.lower, indices.start)
        upper = min(variable.bounds.upper, indices[-1] if len(indices) else -1)
        if lower > upper:
            return None
        dims.append(Variable(Interval(lower, upper), variable.name))
        if box.strides[d] > 1:
            expr = ax.mod(ax.add(ax.dim(d, m.context), -box.offsets[d]), box.strides[d])
            constraints[expr] = Interval(0, 0)
    return m.replace(dims=dims, constraints=constraints)
