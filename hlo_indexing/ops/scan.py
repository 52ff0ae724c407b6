"""Indexing maps of ``mhlo.scan``, read from its body.

A scan over dimension ``dim`` with ``n`` steps (``n-1`` down to ``0`` when reversed) has
operands ``inputs..., inits...`` and results ``outputs..., final carries...``. Its body
takes ``input slices..., carries...`` (a slice is the input without ``dim``) and returns
``output slices..., new carries...``. Step ``t`` reads slice ``t`` of every input and
the carries left by the step before it (the inits at the first step); output slice
``t`` is what step ``t`` returns; the final carries are those left by the last step.

Body result ``r`` *reads* body argument ``a`` when its fused map set for ``a``
(:func:`hlo_indexing.analysis.fusion.fusion_indexing`) is not empty. A reader at step ``t``
(output slice ``t``, or a final carry at the last step) reads:

- input ``j`` at step ``t`` through the body's own element maps;
- input ``j`` at the step ``h >= 1`` steps before ``t`` when a carry of ``v[h-1]`` reads
  it, where ``v[0]`` is the set of carries the reader reads and ``v[l+1]`` the carries
  that the new carries of ``v[l]`` read;
- init ``c`` when ``c`` is in ``v[t]`` (``v[n-1-t]`` reversed).

``v`` is eventually periodic in ``l``, so the steps read are unions of intervals and
residue classes (e.g. ``(d0 - s0 - 1) mod 2 in [0, 0]`` when two carries swap every
step), one map per piece: exact at the level of slices. A slice or carry reached
through the carry chain is read whole: exact for scalar slices and carries, an
over-approximation otherwise. When the body cannot be analysed (an unknown map), the
body is ignored: output ``t`` may read every input element of steps ``0..t``
(``t..n-1`` reversed) and every init, a final carry everything.

Example: ``x, c -> (x, c)`` (output = input slice, the carry passes through) gives
output -> input ``(d0) -> (d0)``, output -> init no dependence, final carry -> init
``() -> ()``; the running sum ``x, c -> (x + c, x + c)`` gives output -> input
``(d0)[s0] -> (s0), s0 in [0, 9], d0 - s0 in [0, 9]`` (as two maps: the step itself
through the body's map, the earlier steps whole).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.map_builders import dims, make_map, syms
from hlo_indexing.ops.rule import OpInfo, RuleResult, Shape, UnknownIndexing
from hlo_indexing.ops.regions import RegionIndexing


@dataclass(frozen=True)
class _Layout:
    inputs: int
    outputs: int
    carries: int
    dimension: int
    reverse: bool
    steps: int

    @property
    def last(self) -> int:
        """The step that leaves the final carries."""
        return 0 if self.reverse else self.steps - 1


def _layout(info: OpInfo) -> _Layout:
    inputs = op_attrs.int_array(info.op, "operandSegmentSizes")[0]
    outputs = op_attrs.int_array(info.op, "resultSegmentSizes")[0]
    dimension = op_attrs.int_attr(info.op, "dimension")
    reverse = bool(op_attrs.int_attr(info.op, "is_reverse", 0))
    shapes = [info.operand(j) for j in range(inputs)] + [info.result(k) for k in range(outputs)]
    if not shapes or any(not 0 <= dimension < len(s) for s in shapes) or len({s[dimension] for s in shapes}) > 1:
        raise UnknownIndexing(f"scan dimension {dimension} does not match the shapes")
    return _Layout(inputs, outputs, info.num_operands - inputs, dimension, reverse, shapes[0][dimension])


@dataclass(frozen=True)
class _Body:
    """``reads[r]``: the body arguments body result ``r`` reads; ``maps[r][a]``: its
    fused maps (body result -> body argument)."""

    region: ir.Region
    regions: RegionIndexing
    reads: tuple[frozenset[int], ...]
    maps: tuple[tuple[frozenset[IndexingMap], ...], ...]
    input_to_output: dict[int, tuple[frozenset[IndexingMap], ...]] = field(default_factory=dict, compare=False)

    def chain(self, layout: _Layout, start: frozenset[int]) -> _Chain:
        """``v`` from ``v[0] = start`` (carry numbers), see the module docstring."""
        states, seen = [start], {start: 0}
        while True:
            state = frozenset(
                c for c in range(layout.carries) for p in states[-1] if layout.inputs + c in self.reads[layout.outputs + p]
            )
            if state in seen:
                return _Chain(tuple(states), seen[state])
            seen[state] = len(states)
            states.append(state)

    def carries_read(self, layout: _Layout, result: int) -> frozenset[int]:
        """The carries body result ``result`` reads."""
        return frozenset(c for c in range(layout.carries) if layout.inputs + c in self.reads[result])

    def feeds(self, layout: _Layout, input_index: int, carries: frozenset[int]) -> bool:
        """True when the new value of one of ``carries`` reads input ``input_index``."""
        return any(input_index in self.reads[layout.outputs + c] for c in carries)

    def input_to_output_maps(self, argument: int, result: int) -> frozenset[IndexingMap]:
        """Body argument -> body result maps (the input-to-output walk runs once per argument)."""
        if argument not in self.input_to_output:
            self.input_to_output[argument] = self.regions.input_to_output(self.region, argument)
        return self.input_to_output[argument][result]


def _body(info: OpInfo, layout: _Layout) -> _Body | None:
    """The body's fused maps, or None when some of them is unknown or the caller has no
    region analysis (:mod:`hlo_indexing.ops.regions`)."""
    if info.regions is None:
        return None
    region = info.op.regions[0]
    try:
        maps = tuple(info.regions.output_to_input(region, r) for r in range(layout.outputs + layout.carries))
    except (HloIndexingError, ValueError):
        return None
    if any(m.is_undefined for per_result in maps for ms in per_result for m in ms):
        return None
    reads = tuple(frozenset(a for a, ms in enumerate(per) if any(not m.is_known_empty() for m in ms)) for per in maps)
    return _Body(region, info.regions, reads, maps)


@dataclass(frozen=True)
class _Chain:
    """``v[l]`` is ``states[l]``, periodic from ``loop`` on (period ``len(states) - loop``)."""

    states: tuple[frozenset[int], ...]
    loop: int

    def pieces(self, holds: Callable[[frozenset[int]], bool], last: int) -> list[tuple[int, int, int]]:
        """``{l in [0, last] : holds(v[l])}`` as pieces ``(lo, hi, period)``: ``l in
        [lo, hi]`` with ``(l - lo) mod period == 0``: runs before the loop, then one
        residue class per state of the loop that holds (one run when all do)."""
        values = [holds(v) for v in self.states]
        period = len(values) - self.loop
        runs: list[tuple[int, int, int]] = []
        for l in range(min(self.loop, last + 1)):
            if values[l]:
                if runs and runs[-1][1] == l - 1:
                    runs[-1] = (runs[-1][0], l, 1)
                else:
                    runs.append((l, l, 1))
        cycle = values[self.loop :]
        if self.loop > last or not any(cycle):
            return runs
        if all(cycle):
            if runs and runs[-1][1] == self.loop - 1:
                return runs[:-1] + [(runs[-1][0], last, 1)]
            return runs + [(self.loop, last, 1)]
        for r, holds_r in enumerate(cycle):
            lo = self.loop + r
            if holds_r and lo <= last:
                hi = lo + (last - lo) // period * period
                runs.append((lo, hi, period) if hi > lo else (lo, lo, 1))
        return runs


#: ``(lo, hi, period)``: the integers ``l`` in ``[lo, hi]`` with ``(l - lo) mod period == 0``.
Piece = tuple[int, int, int]


def _piece_constraints(expr: ir.AffineExpr, piece: Piece) -> dict[ir.AffineExpr, Interval]:
    lo, hi, period = piece
    constraints = {expr: Interval(lo, hi)}
    if period > 1:
        constraints[ax.mod(expr - lo, period)] = Interval(0, 0)
    return constraints


def _insert(exprs: list[ir.AffineExpr], position: int, expr: ir.AffineExpr) -> list[ir.AffineExpr]:
    return exprs[:position] + [expr] + exprs[position:]


def _embedded(
    m: IndexingMap, space: tuple[int, ...], coords: list[ir.AffineExpr], step: ir.AffineExpr, dimension: int | None, constraints: dict[ir.AffineExpr, Interval]
) -> IndexingMap | None:
    """Body map ``m`` (over a slice or carry) as a map over ``space``: its dimensions
    replaced by ``coords``; ``step`` inserted at ``dimension`` in its results (unless
    None); plus ``constraints``. None when ``m`` has runtime variables (their values
    live in the body)."""
    if m.runtime_vars:
        return None
    s = syms(m.num_symbols, m.context)
    results = [ax.substitute(e, coords, s) for e in m.results]
    if dimension is not None:
        results = _insert(results, dimension, step)
    own = {ax.substitute(e, coords, s): c for e, c in m.constraints.items()}
    return make_map(m.context, space, results, m.range_vars, constraints={**own, **constraints})


def _whole(
    context: ir.Context, space: Shape, target: Shape, step_at: int | None, steps: int, constraints_of: Callable[[ir.AffineExpr | None], dict[ir.AffineExpr, Interval]]
) -> IndexingMap:
    """``(d...)[s...] -> (s...)`` over all of ``target``: a carry (``step_at`` None), or
    a slice with the step symbol inserted at ``step_at``. ``constraints_of(step)``
    gives the constraints, ``step`` being that symbol (None for a carry)."""
    if step_at is None:
        s = syms(len(target), context)
        return make_map(context, space, s, target, constraints=constraints_of(None))
    slice_shape = [n for i, n in enumerate(target) if i != step_at]
    s = syms(len(slice_shape) + 1, context)
    results = _insert(s[:-1], step_at, s[-1])
    return make_map(context, space, results, slice_shape + [steps], constraints=constraints_of(s[-1]))


def _after(layout: _Layout, piece: Piece, reader: ir.AffineExpr, source: ir.AffineExpr | None) -> dict[ir.AffineExpr, Interval]:
    """The source step runs ``l + 1`` steps before the reader step, ``l`` in ``piece``."""
    assert source is not None, "a step's slice has its step symbol"
    distance = source - reader if layout.reverse else reader - source
    return _piece_constraints(distance - 1, piece)


def _from_init(layout: _Layout, piece: Piece, reader: ir.AffineExpr) -> dict[ir.AffineExpr, Interval]:
    """The reader step runs ``l`` steps after the first one, ``l`` in ``piece``."""
    return _piece_constraints(reader * -1 + (layout.steps - 1) if layout.reverse else reader, piece)


def _holds(carry: int, carries: frozenset[int]) -> bool:
    return carry in carries


def _init_at(layout: _Layout, piece: Piece, reader: ir.AffineExpr, _step: ir.AffineExpr | None) -> dict[ir.AffineExpr, Interval]:
    return _from_init(layout, piece, reader)


def _known(maps: Sequence[IndexingMap | None]) -> list[IndexingMap]:
    return [m for m in maps if m is not None and not m.is_known_empty()]


def _output_to_input(info: OpInfo, layout: _Layout, body: _Body, result_index: int) -> RuleResult:
    n, dim, context = layout.steps, layout.dimension, info.context
    space = info.result(result_index)
    d = dims(len(space), context)
    per_step = result_index < layout.outputs
    if not per_step and n == 0:  # no step runs: the final carries are the inits
        carry = layout.inputs + result_index - layout.outputs
        return [[make_map(context, space, d)] if k == carry else [] for k in range(info.num_operands)]
    step = d[dim] if per_step else ax.constant(layout.last, context)
    coords = [d[i] for i in range(len(space)) if i != dim] if per_step else d
    chain = body.chain(layout, body.carries_read(layout, result_index))
    out = []
    for j in range(layout.inputs):
        target = info.operand(j)
        maps = [_embedded(m, space, coords, step, dim, {}) for m in body.maps[result_index][j] if not m.is_known_empty()]
        if any(m is None for m in maps):  # runtime variables: the whole slice of this step
            maps = [_whole(context, space, target, dim, n, partial(_after, layout, (-1, -1, 1), step))]
        for piece in chain.pieces(partial(body.feeds, layout, j), n - 2):
            maps.append(_whole(context, space, target, dim, n, partial(_after, layout, piece, step)))
        out.append(_known(maps))
    for c in range(layout.carries):
        pieces = chain.pieces(partial(_holds, c), n - 1)
        target = info.operand(layout.inputs + c)
        out.append(_known([_whole(context, space, target, None, n, partial(_init_at, layout, p, step)) for p in pieces]))
    return out


def _input_to_output(info: OpInfo, layout: _Layout, body: _Body, operand_index: int) -> RuleResult:
    return [_known(_operand_to_result(info, layout, body, operand_index, r)) for r in range(info.num_results)]


def _operand_to_result(info: OpInfo, layout: _Layout, body: _Body, operand_index: int, r: int) -> list[IndexingMap | None]:
    n, dim, context = layout.steps, layout.dimension, info.context
    space, target, per_step = info.operand(operand_index), info.result(r), r < layout.outputs
    d = dims(len(space), context)
    if not per_step and n == 0:  # no step runs: the final carries are the inits
        return [make_map(context, space, d)] if operand_index == layout.inputs + r - layout.outputs else []
    chain = body.chain(layout, body.carries_read(layout, r))
    step_at = dim if per_step else None
    last = ax.constant(layout.last, context)

    def reader(t: ir.AffineExpr | None) -> ir.AffineExpr:  # the step of the result element (a final carry: the last)
        return t if per_step and t is not None else last

    def from_init(piece: Piece) -> Callable[[ir.AffineExpr | None], dict[ir.AffineExpr, Interval]]:
        return lambda t: _from_init(layout, piece, reader(t))

    def after(piece: Piece, source: ir.AffineExpr) -> Callable[[ir.AffineExpr | None], dict[ir.AffineExpr, Interval]]:
        return lambda t: _after(layout, piece, reader(t), source)

    if operand_index >= layout.inputs:
        c = operand_index - layout.inputs
        pieces = chain.pieces(lambda v: c in v, n - 1)
        return [_whole(context, space, target, step_at, n, from_init(p)) for p in pieces]
    j, source = operand_index, d[dim]
    coords = [d[i] for i in range(len(space)) if i != dim]
    at_last = {} if per_step else {source: Interval(layout.last, layout.last)}
    maps = [_embedded(m, space, coords, source, step_at, at_last) for m in body.input_to_output_maps(j, r) if not m.is_known_empty()]
    if any(m is None for m in maps):  # runtime variables: the whole of this step's result
        maps = [_whole(context, space, target, step_at, n, after((-1, -1, 1), source))]
    pieces = chain.pieces(partial(body.feeds, layout, j), n - 2)
    return maps + [_whole(context, space, target, step_at, n, after(p, source)) for p in pieces]


def _body_independent(info: OpInfo, layout: _Layout, result_index: int, operand_index: int, input_to_output: bool) -> IndexingMap:
    """The over-approximation used when the body cannot be analysed (module docstring)."""
    result, operand = info.result(result_index), info.operand(operand_index)
    space, target = (operand, result) if input_to_output else (result, operand)
    d, s = dims(len(space), info.context), syms(len(target), info.context)
    if result_index >= layout.outputs or operand_index >= layout.inputs:
        return make_map(info.context, space, s, target)
    steps = layout.steps
    later = layout.reverse != input_to_output  # is the target step at or after the space's?
    reach = Interval(0, steps - 1) if later else Interval(-(steps - 1), 0)
    return make_map(info.context, space, s, target, constraints={s[layout.dimension] - d[layout.dimension]: reach})


def scan_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> input maps of result ``result_index``: one list per operand."""
    layout = _layout(info)
    body = _body(info, layout)
    if body is None:
        return [[_body_independent(info, layout, result_index, k, False)] for k in range(info.num_operands)]
    return _output_to_input(info, layout, body, result_index)


def scan_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Input -> output maps of operand ``operand_index``: one list per result."""
    layout = _layout(info)
    body = _body(info, layout)
    if body is None:
        return [[_body_independent(info, layout, r, operand_index, True)] for r in range(info.num_results)]
    return _input_to_output(info, layout, body, operand_index)
