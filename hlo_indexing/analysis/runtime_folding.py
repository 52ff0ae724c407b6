"""Folding runtime variables whose value the computation itself computes.

A runtime variable ``rtN`` (e.g. the start index of a ``dynamic_slice``) is read from
an operand at run time. When that operand is computed in the same block from constants
and ``iota`` -- through ops that only move values around (reshape, transpose,
broadcast, reverse, slice, bitcast), integer converts, and integer ``add``,
``subtract``, ``negate`` and ``multiply`` by a constant, none of which may wrap, and
``select``s whose ``compare`` is decided by the bounds (JAX's ``i < 0 ? i + n : i``),
``clamp``, ``maximum`` and ``minimum`` (the value then known piecewise: ``min(a, b)`` is
``a`` where ``a - b <= 0``, ``b`` elsewhere; each piece folded under its condition),
also inside called functions (JAX's ``@_where``) -- its
value is an affine expression of the variables of the variable's
:class:`~hlo_indexing.ops.result.RuntimeSource` map -- the map's dimensions and,
where the value is read at a position the map holds as range variables (a scatter's
update position), those range variables: the ``iota`` index read (through the maps of
the moving ops) combined with the constants. By that contract the value is an
expression of the map's own variables, so it can replace ``rtN`` whatever the op.

The value ``v`` replaces ``rtN`` only where it lies inside ``rtN``'s range, the range
the op clamps (``dynamic_slice``, ``dynamic_update_slice``, ``gather``) or bounds-checks
(``scatter``) start indices to: there the clamp is a no-op and the substitution is exact.
Where ``v`` can leave the range, the map is split by constraints on ``v``: the in-range
piece is folded; an out-of-range piece of an op that clamps reads at the bound it is
clamped to (exact), one of ``scatter`` keeps ``rtN`` (a sound over-approximation, as
before folding: the update is skipped). XLA keeps the variable in both cases, so a
constant past the range folds here (to the bound) where XLA's map keeps ``rtN``.

Example: ``dynamic_slice(p0, constant(42))`` of ``s32[4096] -> s32[10]`` gives
``(d0){rt0} -> (d0 + rt0)`` with ``rt0 in [0, 4086]``; folded: ``(d0) -> (d0 + 42)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import call_operands, callee_block
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.minmax import choices
from hlo_indexing.ops.dispatch import result_indexing
from hlo_indexing.ops.result import RuntimeSource

#: Ops (name after the dialect prefix) that clamp their start indices into the runtime
#: variable's range: a start past it reads the window at the nearest bound.
_CLAMPING_OPS = frozenset({"dynamic_slice", "dynamic_update_slice", "gather"})

#: Ops (name after the dialect prefix) whose single operand's elements are moved, not changed.
_MOVING_OPS = frozenset({"reshape", "transpose", "broadcast_in_dim", "broadcast", "reverse", "slice", "bitcast", "copy"})


def _integer_range(value_type: ir.Type) -> Interval | None:
    """The values of the element type of ``value_type``, if it is an integer type (not
    ``i1``: a predicate's ``true`` reads as -1 in a signless attribute but converts to 1)."""
    try:
        element = ir.ShapedType(value_type).element_type
    except (ValueError, TypeError):
        return None
    if not isinstance(element, ir.IntegerType):
        return None
    integer = ir.IntegerType(element)
    if integer.width == 1:
        return None
    if integer.is_unsigned:
        return Interval(0, (1 << integer.width) - 1)
    return Interval(-(1 << (integer.width - 1)), (1 << (integer.width - 1)) - 1)


def _constant_element(op: OpLike, index_map: IndexingMap) -> int | None:
    attribute = op.attributes["value"] if "value" in op.attributes else None
    if not isinstance(attribute, ir.DenseIntElementsAttr):
        return None
    dense = ir.DenseIntElementsAttr(attribute)
    if dense.is_splat:
        return ir.IntegerAttr(dense.get_splat_value()).value
    index = [i for i in (ax.constant_value(e) for e in index_map.results) if i is not None]
    if len(index) != len(index_map.results):
        return None
    shape = ir.RankedTensorType(op.results[0].type).shape
    flat = 0
    for i, n in zip(index, shape, strict=True):
        flat = flat * n + i
    return int(dense[flat])


#: Limit on the producer ops visited for one runtime variable (a DAG such as
#: ``x = x + x`` repeated would otherwise cost exponential time).
MAX_STEPS = 256


@dataclass(frozen=True)
class Known:
    """The value of a block argument given as an affine expression of the variables of
    the maps it is read through (a loop's induction variable: ``start + step * t``)."""

    expr: ir.AffineExpr


@dataclass(frozen=True)
class Scope:
    """Block arguments of the nested computations entered so far, bound to the values
    the calling op passes (looked up in ``parent``) or to :class:`Known` expressions."""

    arguments: dict
    parent: "Scope | None"

    @cached_property
    def key(self) -> tuple:
        """What a fold reads of the scope, hashable: its bindings and its parent's (built
        once per scope: a walk composes many maps in one)."""
        return (tuple(self.arguments.items()), self.parent.key if self.parent is not None else ())


#: A value known piecewise: ``(conditions, expr)`` pieces, the value being ``expr`` where
#: every ``(expression, interval)`` condition holds; the conditions of the pieces of one
#: value cover the domain and do not overlap (a ``clamp``, ``maximum`` or ``minimum``
#: splits a value where its choice changes: :func:`hlo_indexing.maps.minmax.choices`).
Pieces = list[tuple[tuple[tuple[ir.AffineExpr, Interval], ...], ir.AffineExpr]]

#: Most pieces one runtime value may have (beyond: not folded).
MAX_VALUE_PIECES = 16


def runtime_value(
    value: ir.Value, index_map: IndexingMap, scope: Scope | None = None, budget: list[int] | None = None
) -> Pieces | None:
    """The element ``index_map(d, s)`` of ``value`` as :data:`Pieces` of affine
    expressions of ``index_map``'s dimensions ``d`` and symbols ``s``, when ``value`` is
    computed in its block from constants and iotas by value-moving ops, integer
    converts, ``add``/``subtract``/``negate``/``multiply`` (by a constant),
    ``clamp``/``maximum``/``minimum`` (split into pieces where the choice changes),
    ``select`` on a ``compare`` of such values that is decided over the whole domain,
    and calls of nested computations (``func.call``, ``stablehlo.composite``,
    ``mhlo.fusion``) computing them; ``None`` otherwise, or when some step could wrap
    around its integer type."""
    budget = [MAX_STEPS] if budget is None else budget
    budget[0] -= 1
    value_range = _integer_range(value.type)
    if value_range is None or budget[0] < 0:
        return None
    owner = value.owner
    if isinstance(owner, ir.Block):  # a block argument
        if scope is None or value not in scope.arguments:
            return None
        bound = scope.arguments[value]
        if not isinstance(bound, Known):
            return runtime_value(bound, index_map, scope.parent, budget)
        known = bound.expr
        return [((), known)] if value_range.contains(ax.bounds(known, index_map.dim_ranges, index_map.symbol_ranges)) else None
    op = owner
    name = op.name.split(".", 1)[-1]
    pieces: Pieces | None = None

    def operand(k: int) -> Pieces | None:
        return runtime_value(op.operands[k], index_map, scope, budget)

    callee = callee_block(op)
    if callee is not None:
        returned = callee.operations[-1].operands[ir.OpResult(value).result_number]
        callee_scope = Scope(dict(zip(callee.arguments, call_operands(op), strict=True)), scope)
        pieces = runtime_value(returned, index_map, callee_scope, budget)
    elif name == "constant":
        element = _constant_element(op, index_map)
        pieces = None if element is None else [((), ax.constant(element, index_map.context))]
    elif name == "iota":
        pieces = [((), index_map.results[ir.IntegerAttr(op.attributes["iota_dimension"]).value])]
    elif (name in _MOVING_OPS or name == "convert") and len(op.operands) == 1:
        (maps,) = result_indexing(op, 0).maps
        step = next(iter(maps)) if len(maps) == 1 else None
        if step is not None and not step.is_undefined and not step.num_symbols:
            pieces = runtime_value(op.operands[0], compose(index_map, step).simplify(), scope, budget)
    elif name == "negate":
        pieces = _combined([operand(0)], lambda e: ax.mul(e[0], -1))
    elif name == "select" and len(op.operands) == 3:
        choice = _decided(op.operands[0], index_map, scope, budget)
        if choice is not None:
            pieces = operand(1 if choice else 2)
    elif name in ("add", "subtract", "multiply") and len(op.operands) == 2:
        if name == "add":
            pieces = _combined([operand(0), operand(1)], lambda e: ax.add(e[0], e[1]))
        elif name == "subtract":
            pieces = _combined([operand(0), operand(1)], lambda e: ax.add(e[0], ax.mul(e[1], -1)))
        else:
            pieces = _combined([operand(0), operand(1)], _constant_product)
    elif name in ("maximum", "minimum") and len(op.operands) == 2:
        pieces = _clamped(name[:3], operand(0), operand(1), index_map)
    elif name == "clamp" and len(op.operands) == 3:  # clamp(low, x, high) = min(max(x, low), high)
        pieces = _clamped("min", _clamped("max", operand(1), operand(0), index_map), operand(2), index_map)
    if pieces is None or len(pieces) > MAX_VALUE_PIECES:
        return None
    for conditions, expr in pieces:
        bounds = _piece_bounds(index_map, conditions, expr)
        if bounds is not None and not value_range.contains(bounds):
            return None  # the op could wrap around its integer type
    return pieces


def _piece_bounds(index_map: IndexingMap, conditions: Sequence[tuple[ir.AffineExpr, Interval]], expr: ir.AffineExpr) -> Interval | None:
    """The range of ``expr`` over ``index_map``'s domain where ``conditions`` hold (the
    variables' ranges narrowed by them); None where they never hold."""
    m = index_map
    for condition, interval in conditions:
        m = m.add_constraint(condition, interval)
    if conditions:
        m = m.simplify()
    if m.is_known_empty():
        return None
    return ax.bounds(expr, m.dim_ranges, m.symbol_ranges)


def _constant_product(exprs: Sequence[ir.AffineExpr]) -> ir.AffineExpr | None:
    """``a * b`` when one of them is a constant (else not affine: None)."""
    lhs, rhs = exprs
    if ax.constant_value(lhs) is None and ax.constant_value(rhs) is None:
        return None
    return ax.mul(lhs, rhs)


def _combined(
    operands: Sequence[Pieces | None], combine: Callable[[list[ir.AffineExpr]], ir.AffineExpr | None]
) -> Pieces | None:
    """The pieces of ``combine([operand values])``: every combination of the operands'
    pieces, their conditions joined; None when an operand is unknown or ``combine``
    gives None."""
    if any(p is None for p in operands):
        return None
    out: Pieces = []
    for chosen in itertools.product(*[p for p in operands if p is not None]):
        expr = combine([e for _, e in chosen])
        if expr is None:
            return None
        out.append((tuple(c for conditions, _ in chosen for c in conditions), expr))
        if len(out) > MAX_VALUE_PIECES:
            return None
    return out


def _clamped(kind: str, lhs: Pieces | None, rhs: Pieces | None, index_map: IndexingMap) -> Pieces | None:
    """The pieces of ``kind(lhs, rhs)`` (``min`` or ``max``): each combination split
    where ``lhs - rhs`` changes sign over the domain (one piece where it does not)."""
    if lhs is None or rhs is None:
        return None
    out: Pieces = []
    for (lhs_conditions, a), (rhs_conditions, b) in itertools.product(lhs, rhs):
        conditions = lhs_conditions + rhs_conditions
        difference = ax.add(a, ax.mul(b, -1))
        bounds = _piece_bounds(index_map, conditions, difference)
        if bounds is None:
            continue  # these two pieces never meet
        for chosen, part in choices(kind, a, b, bounds):
            condition = () if part == bounds else ((difference, part),)
            out.append((conditions + condition, chosen))
    return out if len(out) <= MAX_VALUE_PIECES else None


#: Comparison direction -> its value from the bounds of ``lhs - rhs`` (None: undecided).
_COMPARISONS = {
    "EQ": lambda d: True if d.lower == d.upper == 0 else None if d.contains(0) else False,
    "NE": lambda d: False if d.lower == d.upper == 0 else None if d.contains(0) else True,
    "LT": lambda d: True if d.upper < 0 else False if d.lower >= 0 else None,
    "LE": lambda d: True if d.upper <= 0 else False if d.lower > 0 else None,
    "GT": lambda d: True if d.lower > 0 else False if d.upper <= 0 else None,
    "GE": lambda d: True if d.lower >= 0 else False if d.upper < 0 else None,
}


def _decided(predicate: ir.Value, index_map: IndexingMap, scope: Scope | None, budget: list[int]) -> bool | None:
    """The value of a scalar-per-element ``compare`` of two known integer values when the
    same at every point of ``index_map``'s domain (JAX's ``i < 0 ? i + n : i``), else None."""
    while isinstance(predicate, ir.BlockArgument) and scope is not None and predicate in scope.arguments:
        predicate, scope = scope.arguments[predicate], scope.parent
    op = predicate.owner
    if isinstance(op, ir.Block) or op.name.split(".", 1)[-1] != "compare":
        return None
    direction = str(op.attributes["comparison_direction"]).rstrip(">").split()[-1]
    lhs = runtime_value(op.operands[0], index_map, scope, budget)
    rhs = runtime_value(op.operands[1], index_map, scope, budget) if lhs is not None else None
    if lhs is None or rhs is None or direction not in _COMPARISONS:
        return None
    verdicts = set()  # decided only when every combination of pieces decides the same
    for (lhs_conditions, a), (rhs_conditions, b) in itertools.product(lhs, rhs):
        difference = _piece_bounds(index_map, lhs_conditions + rhs_conditions, ax.add(a, ax.mul(b, -1)))
        if difference is not None:
            verdicts.add(_COMPARISONS[direction](difference))
    return verdicts.pop() if len(verdicts) == 1 else None


def _substitute(m: IndexingMap, position: int, expr: ir.AffineExpr) -> IndexingMap:
    """``m`` with symbol ``position`` replaced by ``expr`` (the symbol stays, unused)."""
    context = m.context
    dims = [ax.dim(i, context) for i in range(m.num_dims)]
    symbols = [ax.symbol(i, context) for i in range(m.num_symbols)]
    symbols[position] = expr
    memo: dict = {}
    results = [ax.substitute(e, dims, symbols, memo) for e in m.results]
    affine_map = ir.AffineMap.get(m.num_dims, m.num_symbols, results, context)
    out = m.replace(affine_map=affine_map, constraints={})
    for constraint, interval in m.constraints.items():
        out = out.add_constraint(ax.substitute(constraint, dims, symbols, memo), interval)
    return out


def fold_runtime_variables(
    m: IndexingMap, sources: Sequence[RuntimeSource], op: OpLike, scope: Scope | None = None
) -> list[IndexingMap]:
    """The maps replacing ``m`` (an output -> input map of ``op`` whose runtime variables
    ``sources`` describe, in order, by the ``RuntimeSource`` contract) once every runtime
    variable with a known value is folded; ``[m]`` when none is known. ``scope`` binds
    the block arguments of the computations ``op`` is nested in. A source whose
    map is not over ``m``'s variables (other dimensions, symbols that are not ``m``'s
    range variables) is not folded. See the module docstring."""
    if m.is_undefined or m.is_known_empty() or not m.runtime_vars or len(sources) != len(m.runtime_vars):
        return [m]
    pieces = [m]
    clamps = op.name.split(".", 1)[-1] in _CLAMPING_OPS
    for i, (variable, source) in enumerate(zip(m.runtime_vars, sources, strict=True)):
        over = source.index_map
        if over.num_dims != m.num_dims or over.num_symbols not in (0, len(m.range_vars)) or over.runtime_vars:
            continue
        value = runtime_value(op.operands[source.operand], over, scope)
        if value is None:
            continue
        position = len(m.range_vars) + i
        clamp = variable.bounds
        next_pieces = []
        for piece in pieces:
            for conditions, expr in value:
                part = piece
                for condition, interval in conditions:  # where this piece of the value holds
                    part = part.add_constraint(condition, interval)
                if not part.is_known_empty():
                    next_pieces += _folded(part, position, expr, clamp, clamps)
        pieces = [p for p in next_pieces if not p.is_known_empty()]
    return pieces


def _folded(piece: IndexingMap, position: int, expr: ir.AffineExpr, clamp: Interval, clamps: bool) -> list[IndexingMap]:
    """``piece`` with symbol ``position`` (a runtime variable clamped to ``clamp``)
    replaced by its value ``expr`` where ``expr`` lies in ``clamp``; where it does not, by
    the bound it is clamped to (``clamps``) or kept (module docstring)."""
    bounds = ax.bounds(expr, piece.dim_ranges, piece.symbol_ranges)
    out = []
    inside = piece if clamp.contains(bounds) else piece.add_constraint(expr, clamp)
    if not inside.is_known_empty():
        out.append(_substitute(inside, position, expr))
    for outside, clamped in ((Interval(bounds.lower, clamp.lower - 1), clamp.lower), (Interval(clamp.upper + 1, bounds.upper), clamp.upper)):
        if not outside.is_empty:
            kept = piece.add_constraint(expr, outside)
            if not kept.is_known_empty():
                out.append(_substitute(kept, position, ax.constant(clamped, piece.context)) if clamps else kept)
    return out
