"""How rules build maps: map construction that copes with zero-sized shapes (ranges
written as sizes, pairs, intervals or variables), row-major (de)linearisation, reshape
expressions and whole-operand maps. The rule interface is :mod:`hlo_indexing.ops.rule`,
the inversion of maps :mod:`hlo_indexing.ops.inversion`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.rule import Shape
#: A variable's range as rules write it: a size ``n`` (``[0, n-1]``), an inclusive
#: ``(lo, hi)`` pair, an :class:`Interval` or a :class:`Variable`.
RangeSpec = int | tuple[int, int] | Interval | Variable


def dims(n: int, context: ir.Context) -> list[ir.AffineExpr]:
    """The dimension expressions ``d0 .. d<n-1>``."""
    return ax.dim_list(n, context)


def syms(n: int, context: ir.Context, start: int = 0) -> list[ir.AffineExpr]:
    """The symbol expressions ``s<start> .. s<start+n-1>``."""
    return ax.symbol_list(n, context, start)


#: The variable of each dimension size met so far (variables are immutable; building
#: one costs more than looking it up). Cleared when it reaches ``_MAX_SIZES`` entries.
_SIZE_VARIABLES: dict[int, Variable] = {}
_MAX_SIZES = 4096


def _range(value: RangeSpec) -> Variable:
    if type(value) is int:
        found = _SIZE_VARIABLES.get(value)
        if found is None:
            if len(_SIZE_VARIABLES) >= _MAX_SIZES:
                _SIZE_VARIABLES.clear()
            found = _SIZE_VARIABLES[value] = Variable(Interval.of_size(value))
        return found
    if isinstance(value, Variable):
        return value
    if isinstance(value, Interval):
        return Variable(value)
    if isinstance(value, int):
        return Variable(Interval.of_size(value))
    return Variable(Interval(*value))


def make_map(
    context: ir.Context,
    dim_ranges: Sequence[RangeSpec],
    results: Sequence[ir.AffineExpr | int],
    range_vars: Sequence[RangeSpec] = (),
    runtime_vars: Sequence[RangeSpec] = (),
    constraints: Mapping[ir.AffineExpr, Interval] | None = None,
) -> IndexingMap:
    """An :class:`IndexingMap`; ranges are sizes (``n`` -> ``[0, n-1]``), ``(lo, hi)``
    pairs, Intervals or Variables. A map with an empty range (a zero-sized dimension, or
    an empty slice of an index space) or a constant constraint that fails is ``KNOWN
    EMPTY``; constant constraints that hold are dropped."""
    dim_vars = [_range(v) for v in dim_ranges]
    range_list = [_range(v) for v in range_vars] if range_vars else []
    runtime_list = [_range(v) for v in runtime_vars] if runtime_vars else []
    constraints = dict(constraints or {})
    # MLIR folds some constraints to constants (``(2 * d0 + 1) mod 2`` is ``1``)
    folded = {e: c for e, c in constraints.items() if ax.constant_value(e) is not None} if constraints else {}
    infeasible = any(not c.contains(v) for e, c in folded.items() if (v := ax.constant_value(e)) is not None)
    if infeasible or any(v.bounds.is_empty for v in (*dim_vars, *range_list, *runtime_list)):
        return IndexingMap.known_empty(len(dim_vars), len(range_list) + len(runtime_list), len(results), context)
    for expr in folded:
        del constraints[expr]
    return IndexingMap.from_exprs(dim_vars, results, range_list, runtime_list, constraints, context)


def filled(exprs: Sequence[ir.AffineExpr | None]) -> list[ir.AffineExpr]:
    """The expressions of a list a rule fills position by position (e.g. through a
    permutation); ``ValueError`` if a position was left unset (a bug of the rule)."""
    out = [e for e in exprs if e is not None]
    if len(out) != len(exprs):
        raise ValueError(f"result expressions left unset at positions {[i for i, e in enumerate(exprs) if e is None]}")
    return out


def scalar_map(context: ir.Context, dim_ranges: Sequence[RangeSpec]) -> IndexingMap:
    """``(d...) -> ()``: every point reads the single element of a rank-0 tensor."""
    return make_map(context, dim_ranges, [])


def spread_map(
    context: ir.Context,
    input_shape: Shape,
    results_of: Callable[[list[ir.AffineExpr], list[ir.AffineExpr]], Sequence[ir.AffineExpr]],
    output_shape: Shape,
) -> IndexingMap:
    """``(d...)[s...] -> (results_of(d, s))`` with one range variable per output dim."""
    d = dims(len(input_shape), context)
    s = syms(len(output_shape), context)
    return make_map(context, input_shape, results_of(d, s), output_shape)


def linearize(exprs: Sequence[ir.AffineExpr], shape: Shape, context: ir.Context) -> ir.AffineExpr:
    """Row-major linear index of ``exprs`` in ``shape``."""
    linear = ax.constant(0, context)
    for expr, size in zip(exprs, shape):
        linear = linear * size + expr
    return linear


def delinearize(linear: ir.AffineExpr, shape: Shape) -> list[ir.AffineExpr]:
    """Row-major multi-index of ``linear`` in ``shape`` (the outermost index needs no
    ``mod``: the linear index lies within the shape)."""
    out = []
    stride = 1
    for position in range(len(shape) - 1, -1, -1):
        size = shape[position]
        if size == 1:
            out.append(ax.constant(0, linear.context))
        else:
            expr = ax.floordiv(linear, stride) if stride != 1 else linear
            out.append(ax.mod(expr, size) if position > 0 else expr)
        stride *= size
    out.reverse()
    return out


def reshape_groups(src: Shape, dst: Shape) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Split a reshape into minimal groups of source and destination dimensions with
    equal element counts (``[4, 8] -> [2, 4, 4]`` is one group; ``[4, 8, 12] ->
    [32, 3, 4]`` is ``((0, 1), (0,))`` and ``((2,), (1, 2))``). Size-1 dimensions join
    the group before them (or the first group)."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        gi: list[int] = []
        gj: list[int] = []
        psrc = pdst = 1
        while True:
            if (psrc == pdst and gi and gj) or (i >= len(src) and j >= len(dst)):
                break
            if (psrc <= pdst and i < len(src)) or j >= len(dst):
                psrc *= src[i]
                gi.append(i)
                i += 1
            else:
                pdst *= dst[j]
                gj.append(j)
                j += 1
        # trailing size-1 dimensions stay with this group
        while i < len(src) and src[i] == 1 and (j >= len(dst) or dst[j] != 1):
            gi.append(i)
            i += 1
        while j < len(dst) and dst[j] == 1 and (i >= len(src) or src[i] != 1):
            gj.append(j)
            j += 1
        groups.append((gi, gj))
    return [(tuple(a), tuple(b)) for a, b in groups]


def reshape_exprs(
    src_exprs: Sequence[ir.AffineExpr], src: Shape, dst: Shape, context: ir.Context
) -> list[ir.AffineExpr]:
    """Expressions of the ``dst`` index for a ``src`` index given as ``src_exprs``
    (row-major reshape), group by group."""
    out: list[ir.AffineExpr | None] = [None] * len(dst)
    for gi, gj in reshape_groups(src, dst):
        if not gj:
            continue
        linear = linearize([src_exprs[i] for i in gi], tuple(src[i] for i in gi), context)
        parts = delinearize(linear, tuple(dst[j] for j in gj))
        for j, expr in zip(gj, parts):
            out[j] = expr
    return [ax.constant(0, context) if e is None else e for e in out]


def whole_map(context: ir.Context, space: Shape, target: Shape, kept: int = 0) -> IndexingMap:
    """``(d...)[s...] -> (d[0..kept-1], s...)``: the first ``kept`` dimensions of
    ``target`` follow ``space``'s (batch dimensions), the rest is read whole."""
    d = dims(len(space), context)
    rest = target[kept:]
    return make_map(context, space, d[:kept] + syms(len(rest), context), rest)
