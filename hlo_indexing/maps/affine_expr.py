"""Small, exact operations on ``ir.AffineExpr`` trees: classification, evaluation,
substitution, interval bounds and size. They walk the trees of the upstream bindings;
nothing here builds a second expression representation.

Caution (jaxlib 0.10.2 bindings): an expression built by an operator or a ``get``
keeps the Python class of the *requested* operation even when MLIR folded it, e.g.
``AffineConstantExpr(11) * -1`` is an ``AffineMulExpr`` object holding the constant
``-11``, and reading its ``.lhs`` crashes the process. Every constructor here returns
:func:`typed` results and every public function re-types its argument, so code that
goes through this module is safe; children read through ``.lhs``/``.rhs`` and
``AffineMap.results`` are always typed correctly.

Expressions of any depth are walked: composition builds expressions deeper than any
text we parse (``limits.MAX_NESTING_DEPTH`` bounds the recursive map-text parser and
symbolic tiling, :func:`depth` is how they check; the simplifier leaves a map too deep
for its recursion as it is). The hot walks (:func:`substitute`, :func:`bounds`, :func:`node_count`,
:func:`used_variables`) recurse, which is fastest, and walk an expression too deep for
Python's stack again on an explicit stack (:func:`fold`, :func:`_post_order`; each
node of the uniqued DAG once), as the others (:func:`evaluate`,
:func:`evaluate_array`, :func:`walk`, :func:`depth`) always do. MLIR's own rewrites,
which recurse in C++, are handed only expressions at most :data:`NATIVE_REWRITE_DEPTH`
deep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import context_memo
from hlo_indexing.errors import IntegerOverflowError
from hlo_indexing.errors import (
    UndefinedDivisionError as UndefinedDivisionError,  # re-exported: ax.UndefinedDivisionError
)
from hlo_indexing.maps.interval import INT64_MAX, INT64_MIN, Interval, check_int64

AffineExpr = ir.AffineExpr
#: The value :func:`fold` computes per node.
_V = TypeVar("_V")

Add, Mul, Mod, FloorDiv, CeilDiv = (
    ir.AffineAddExpr,
    ir.AffineMulExpr,
    ir.AffineModExpr,
    ir.AffineFloorDivExpr,
    ir.AffineCeilDivExpr,
)
Const, Dim, Sym, Binary = ir.AffineConstantExpr, ir.AffineDimExpr, ir.AffineSymbolExpr, ir.AffineBinaryExpr
#: The classes of binary expressions. The walks below dispatch on ``type(expr)`` (an
#: ``isinstance`` test against the bindings' classes costs several times more when it
#: fails); they see typed expressions only (their argument re-typed, children typed),
#: taken as ``Any`` since the type test is not one mypy narrows on.
_BINARY_KINDS = frozenset({Add, Mul, Mod, FloorDiv, CeilDiv})


def typed(expr: AffineExpr) -> AffineExpr:
    """``expr`` as an object of the Python class matching its real kind."""
    return expr.maybe_downcast()


def constant(value: int, context: "ir.Context") -> AffineExpr:
    """The constant expression ``value`` in ``context``; :class:`IntegerOverflowError`
    outside int64."""
    return ir.AffineConstantExpr.get(check_int64(value, "constant"), context)


def dim(position: int, context: "ir.Context") -> AffineExpr:
    """The dimension expression ``d<position>`` in ``context``."""
    return ir.AffineDimExpr.get(position, context)


def symbol(position: int, context: "ir.Context") -> AffineExpr:
    """The symbol expression ``s<position>`` in ``context``."""
    return ir.AffineSymbolExpr.get(position, context)


def _variable_lists(context: "ir.Context") -> dict[str, list[AffineExpr]]:
    """The dimension (``"d"``) and symbol (``"s"``) expressions of ``context`` built so
    far, in its memo (:func:`~hlo_indexing.dialect_glue.context.context_memo`), handed out
    again by :func:`dim_list` and :func:`symbol_list`: building an expression through the
    bindings costs more than slicing a list."""
    lists = context_memo(context, "affine-variables")
    if not lists:
        lists.update(d=[], s=[])
    return lists


def dim_list(count: int, context: "ir.Context") -> list[AffineExpr]:
    """``[d0, ..., d<count-1>]`` in ``context`` (a new list; the expressions are shared)."""
    found = _variable_lists(context)["d"]
    while len(found) < count:
        found.append(ir.AffineDimExpr.get(len(found), context))
    return found[:count]


def symbol_list(count: int, context: "ir.Context", start: int = 0) -> list[AffineExpr]:
    """``[s<start>, ..., s<start+count-1>]`` in ``context`` (a new list; the expressions
    are shared)."""
    found = _variable_lists(context)["s"]
    while len(found) < start + count:
        found.append(ir.AffineSymbolExpr.get(len(found), context))
    return found[start : start + count]


def add(lhs: AffineExpr, rhs: AffineExpr | int) -> AffineExpr:
    """``lhs + rhs`` (an int is a constant), folded by MLIR and typed."""
    return typed(lhs + (check_int64(rhs, "constant") if isinstance(rhs, int) else rhs))


def mul(lhs: AffineExpr, rhs: AffineExpr | int) -> AffineExpr:
    """``lhs * rhs`` (an int is a constant), folded by MLIR and typed."""
    return typed(lhs * (check_int64(rhs, "factor") if isinstance(rhs, int) else rhs))


def floordiv(lhs: AffineExpr, rhs: AffineExpr | int) -> AffineExpr:
    """``lhs floordiv rhs`` (an int is a constant), folded by MLIR and typed."""
    return typed(ir.AffineFloorDivExpr.get(lhs, _as_expr(rhs, lhs.context)))


def ceildiv(lhs: AffineExpr, rhs: AffineExpr | int) -> AffineExpr:
    """``lhs ceildiv rhs`` (an int is a constant), folded by MLIR and typed."""
    return typed(ir.AffineCeilDivExpr.get(lhs, _as_expr(rhs, lhs.context)))


def mod(lhs: AffineExpr, rhs: AffineExpr | int) -> AffineExpr:
    """``lhs mod rhs`` (an int is a constant), folded by MLIR and typed."""
    return typed(ir.AffineModExpr.get(lhs, _as_expr(rhs, lhs.context)))


def _as_expr(value: AffineExpr | int, context: "ir.Context") -> AffineExpr:
    return constant(value, context) if isinstance(value, int) else value


def constant_value(expr: AffineExpr) -> int | None:
    """The value of a constant expression, else None."""
    expr = typed(expr)
    return expr.value if isinstance(expr, Const) else None


def rhs_constant(expr: ir.AffineBinaryExpr) -> int:
    """The right operand of ``expr``, which the caller knows is a constant, as an int."""
    rhs = expr.rhs
    assert isinstance(rhs, Const), f"{expr}: the right operand is not a constant"
    return rhs.value


def rebuild(expr: AffineExpr, lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    """A binary expression of the same kind as ``expr`` with new operands."""
    kind = type(expr)
    if kind not in _BINARY_KINDS:
        kind = type(typed(expr))
    if kind is Add:
        return typed(lhs + rhs)
    if kind is Mul:
        return typed(lhs * rhs)
    if kind is Mod:
        return mod(lhs, rhs)
    if kind is FloorDiv:
        return floordiv(lhs, rhs)
    return ceildiv(lhs, rhs)


def fold(
    expr: AffineExpr,
    leaf: Callable[[AffineExpr], _V],
    combine: Callable[[AffineExpr, _V, _V], _V],
    memo: dict[AffineExpr, _V] | None = None,
) -> _V:
    """The value of ``expr`` computed bottom-up without recursion: ``leaf(node)`` for
    constants and variables, ``combine(node, lhs value, rhs value)`` for binary nodes.
    Each node of the DAG is computed once and kept in ``memo`` (a fresh dict by default;
    pass one to share values across calls)."""
    memo = {} if memo is None else memo
    found = memo.get(expr)
    if found is not None:
        return found
    stack: list[tuple[Any, tuple[AffineExpr, AffineExpr] | None]] = [(typed(expr), None)]
    while stack:
        node, children = stack.pop()
        if children is None:
            if node in memo:
                continue
            if type(node) in _BINARY_KINDS:
                lhs, rhs = node.lhs, node.rhs
                stack.append((node, (lhs, rhs)))
                if rhs not in memo:
                    stack.append((rhs, None))
                if lhs not in memo:
                    stack.append((lhs, None))
            else:
                memo[node] = leaf(node)
        elif node not in memo:
            memo[node] = combine(node, memo[children[0]], memo[children[1]])
    return memo[expr]


def substitute(
    expr: AffineExpr,
    dims: Sequence[AffineExpr],
    symbols: Sequence[AffineExpr],
    memo: dict[AffineExpr, AffineExpr] | None = None,
) -> AffineExpr:
    """Replace ``d_i`` by ``dims[i]`` and ``s_j`` by ``symbols[j]`` (MLIR folds as it
    rebuilds)."""
    memo = {} if memo is None else memo
    try:
        return _substitute(typed(expr), dims, symbols, memo)
    except RecursionError:  # too deep for the recursive walk: the same walk on a stack (module docstring)

        def leaf(node: Any) -> AffineExpr:
            kind = type(node)
            if kind is Dim:
                return typed(dims[node.position])
            return typed(symbols[node.position]) if kind is Sym else node

        return fold(expr, leaf, rebuild, memo)


def _substitute(
    expr: Any, dims: Sequence[AffineExpr], symbols: Sequence[AffineExpr], memo: dict[AffineExpr, AffineExpr]
) -> AffineExpr:
    found = memo.get(expr)
    if found is not None:
        return found
    kind = type(expr)
    if kind is Dim:
        out = typed(dims[expr.position])
    elif kind is Sym:
        out = typed(symbols[expr.position])
    elif kind in _BINARY_KINDS:
        out = rebuild(expr, _substitute(expr.lhs, dims, symbols, memo), _substitute(expr.rhs, dims, symbols, memo))
    else:
        out = expr
    memo[expr] = out
    return out


def evaluate(expr: AffineExpr, dims: Sequence[int], symbols: Sequence[int]) -> int:
    """The value of ``expr`` at a point: floor semantics for ``floordiv`` and ``mod``
    (``a mod b = a - b * (a floordiv b)``, for negative divisors too, as Python's ``//``
    and ``%`` and MLIR's constant folding of ``floordiv``/``ceildiv`` compute it).
    Raises :class:`UndefinedDivisionError` when a divisor is 0.

    Example: ``evaluate(s0 floordiv s1, [], [7, 2]) == 3``; with ``s1 = 0`` it raises."""

    def leaf(node: AffineExpr) -> int:
        if isinstance(node, Const):
            return int(node.value)
        return dims[node.position] if isinstance(node, Dim) else symbols[cast(ir.AffineSymbolExpr, node).position]

    def combine(node: AffineExpr, lhs: int, rhs: int) -> int:
        if isinstance(node, Add):
            return lhs + rhs
        if isinstance(node, Mul):
            return lhs * rhs
        if rhs == 0:
            raise _zero_divisor_error(cast(ir.AffineBinaryExpr, node), dims, symbols)
        if isinstance(node, Mod):
            return lhs % rhs
        if isinstance(node, FloorDiv):
            return lhs // rhs
        return -((-lhs) // rhs)

    return fold(expr, leaf, combine)


def evaluate_array(
    expr: AffineExpr,
    dims: Sequence[np.ndarray],
    symbols: Sequence[np.ndarray],
    defined: np.ndarray | None = None,
) -> np.ndarray | np.int64:
    """Vectorised :func:`evaluate`: ``dims``/``symbols`` are int64 arrays of one shape
    (the value of a constant expression is an int64 scalar).

    A divisor that is 0 at some points makes the value undefined there. With ``defined``
    (a boolean array of the points' shape) those points are cleared in ``defined`` and
    their values are meaningless (computed with the divisor replaced by 1); without it,
    :class:`UndefinedDivisionError` names the first such point. Never warns.

    Example: for ``s0 floordiv s1`` at ``s0 = [7, 7]``, ``s1 = [2, 0]`` with
    ``defined = [True, True]`` the values are ``[3, 7]`` and ``defined`` becomes
    ``[True, False]``.

    Values that may leave int64 on the way (``d0 ceildiv 16`` with ``d0`` near the int64
    minimum negates ``d0``) are computed exactly with Python ints; a result outside
    int64 raises :class:`IntegerOverflowError`."""
    expr = typed(expr)
    if type(expr) not in _BINARY_KINDS or not _may_overflow(expr, dims, symbols):  # a leaf computes nothing
        return _evaluate_array(expr, dims, symbols, defined)
    exact = _evaluate_array(
        expr, [np.asarray(v, dtype=object) for v in dims], [np.asarray(v, dtype=object) for v in symbols], defined, int
    )
    values = np.asarray(exact, dtype=object)
    if values.size and (values.min() < INT64_MIN or values.max() > INT64_MAX):
        raise IntegerOverflowError(
            f"a value of {expr} does not fit in int64", limit="INT64_MAX", value=max(values.max(), -values.min())
        )
    return np.asarray(values.astype(np.int64))


#: Magnitude above which int64 arithmetic may overflow in one step (a sum of two values,
#: a negation); products are bounded by their interval bounds directly.
_SAFE_MAGNITUDE = 1 << 62


def _may_overflow(expr: AffineExpr, dims: Sequence[np.ndarray], symbols: Sequence[np.ndarray]) -> bool:
    """Whether some node of ``expr`` may reach :data:`_SAFE_MAGNITUDE` over the values given
    (the spans of the variables ``expr`` uses; the others are never read)."""

    def spans(values: Sequence[np.ndarray], used: set[int]) -> list[Interval]:
        found = []
        for position, value in enumerate(values):
            array = np.asarray(value) if position in used else None
            found.append(Interval(int(array.min()), int(array.max())) if array is not None and array.size else Interval(0, 0))
        return found

    used_dims: set[int] = set()
    used_symbols: set[int] = set()
    used_variables(expr, used_dims, used_symbols)
    memo: dict[AffineExpr, Interval] = {}
    bounds(expr, spans(dims, used_dims), spans(symbols, used_symbols), memo)
    return any(max(abs(b.lower), abs(b.upper)) >= _SAFE_MAGNITUDE for b in memo.values() if not b.is_empty)


def _evaluate_array(
    expr: AffineExpr,
    dims: Sequence[np.ndarray],
    symbols: Sequence[np.ndarray],
    defined: np.ndarray | None,
    scalar: Callable[[int], Any] = np.int64,
) -> np.ndarray | np.int64:
    """:func:`evaluate_array`'s walk (bottom-up over the DAG, each array released once its
    last parent is computed); ``scalar`` makes constants (``np.int64``, or ``int`` for
    exact object arrays)."""
    order, children = _post_order(expr)
    uses: dict[AffineExpr, int] = {}
    for kids in children.values():
        for kid in kids:
            uses[kid] = uses.get(kid, 0) + 1
    values: dict[AffineExpr, Any] = {}
    for node in order:
        kids = children[node]
        if not kids:
            if isinstance(node, Const):
                values[node] = cast("np.int64", scalar(node.value))
            else:
                values[node] = dims[node.position] if isinstance(node, Dim) else symbols[cast(ir.AffineSymbolExpr, node).position]
            continue
        lhs, rhs = values[kids[0]], values[kids[1]]
        for kid in kids:
            uses[kid] -= 1
            if uses[kid] == 0:
                del values[kid]
        if isinstance(node, Add):
            values[node] = lhs + rhs
            continue
        if isinstance(node, Mul):
            values[node] = lhs * rhs
            continue
        zero = rhs == 0
        if np.any(zero):
            if defined is None:
                raise _zero_divisor_error(cast(ir.AffineBinaryExpr, node), *_first_point(zero, dims, symbols))
            defined &= ~zero
            rhs = np.where(zero, scalar(1), rhs)
        if isinstance(node, Mod):
            values[node] = np.mod(lhs, rhs)
        elif isinstance(node, FloorDiv):
            values[node] = np.floor_divide(lhs, rhs)
        else:
            values[node] = -np.floor_divide(-lhs, rhs)
    return cast("np.ndarray | np.int64", values[expr])


def _post_order(expr: AffineExpr) -> tuple[list[AffineExpr], dict[AffineExpr, tuple[AffineExpr, ...]]]:
    """The nodes of ``expr``'s DAG, children before parents (each once), and the children
    of each node."""
    order: list[AffineExpr] = []
    children: dict[AffineExpr, tuple[AffineExpr, ...]] = {}
    stack: list[tuple[AffineExpr, bool]] = [(typed(expr), False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in children:
            continue
        kids = (node.lhs, node.rhs) if isinstance(node, Binary) else ()
        children[node] = kids
        stack.append((node, True))
        for kid in reversed(kids):
            if kid not in children:
                stack.append((kid, False))
    return order, children


def _first_point(
    mask: np.ndarray, dims: Sequence[np.ndarray], symbols: Sequence[np.ndarray]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (dims, symbols) values at the first point where ``mask`` holds."""
    shape = np.broadcast_shapes(np.shape(mask), *(np.shape(v) for v in (*dims, *symbols)))
    index = np.unravel_index(int(np.argmax(np.broadcast_to(mask, shape))), shape) if shape else ()
    dims_at, symbols_at = (tuple(int(np.broadcast_to(v, shape)[index]) for v in values) for values in (dims, symbols))
    return dims_at, symbols_at


def _zero_divisor_error(expr: ir.AffineBinaryExpr, dims: Sequence[int], symbols: Sequence[int]) -> UndefinedDivisionError:
    return UndefinedDivisionError(
        f"'{expr}' is undefined: its divisor '{expr.rhs}' is 0 at dims {tuple(dims)}, symbols {tuple(symbols)}"
    )


def bounds(
    expr: AffineExpr,
    dim_ranges: Sequence[Interval],
    symbol_ranges: Sequence[Interval],
    memo: dict[AffineExpr, Interval] | None = None,
) -> Interval:
    """An interval holding every value of ``expr`` over the given variable ranges
    (exact for sums of distinct variables, a sound over-approximation otherwise)."""
    memo = {} if memo is None else memo
    found = memo.get(expr)
    if found is not None:
        return found
    try:
        return _bounds(typed(expr), dim_ranges, symbol_ranges, memo)
    except RecursionError:  # too deep for the recursive walk: the same walk on a stack (module docstring)
        return fold(expr, lambda node: _leaf_bounds(node, dim_ranges, symbol_ranges), _binary_bounds, memo)


def _bounds(
    expr: Any, dim_ranges: Sequence[Interval], symbol_ranges: Sequence[Interval], memo: dict[AffineExpr, Interval]
) -> Interval:
    found = memo.get(expr)
    if found is not None:
        return found
    kind = type(expr)
    if kind is Const:
        out = Interval.point(expr.value)
    elif kind is Dim:
        out = dim_ranges[expr.position]
    elif kind is Sym:
        out = symbol_ranges[expr.position]
    else:
        assert kind in _BINARY_KINDS
        lhs = _bounds(expr.lhs, dim_ranges, symbol_ranges, memo)
        rhs = _bounds(expr.rhs, dim_ranges, symbol_ranges, memo)
        if kind is Add:
            out = lhs + rhs
        elif kind is Mul:
            out = lhs * rhs
        elif not rhs.is_point or rhs.lower == 0:
            out = _semi_affine_bounds(expr, lhs, rhs)
        elif kind is Mod:
            out = lhs.mod(rhs.lower)
        elif kind is FloorDiv:
            out = lhs.floordiv(rhs.lower)
        else:
            out = lhs.ceildiv(rhs.lower)
    memo[expr] = out
    return out


def _leaf_bounds(expr: Any, dim_ranges: Sequence[Interval], symbol_ranges: Sequence[Interval]) -> Interval:
    kind = type(expr)
    if kind is Const:
        return Interval.point(expr.value)
    return dim_ranges[expr.position] if kind is Dim else symbol_ranges[expr.position]  # type: ignore[no-any-return]  # positions index the sequences


def _binary_bounds(expr: Any, lhs: Interval, rhs: Interval) -> Interval:
    kind = type(expr)
    if kind is Add:
        return lhs + rhs
    if kind is Mul:
        return lhs * rhs
    if not rhs.is_point or rhs.lower == 0:
        return _semi_affine_bounds(expr, lhs, rhs)
    if kind is Mod:
        return lhs.mod(rhs.lower)
    if kind is FloorDiv:
        return lhs.floordiv(rhs.lower)
    return lhs.ceildiv(rhs.lower)


def _semi_affine_bounds(expr: AffineExpr, lhs: Interval, rhs: Interval) -> Interval:
    """Bounds when the divisor is not a single constant (semi-affine maps)."""
    if rhs.lower == 0 and rhs.upper == 0:  # never defined: no value to bound (and never a point to fold to)
        return Interval(INT64_MIN, INT64_MAX)
    magnitude = max(abs(lhs.lower), abs(lhs.upper))
    if isinstance(expr, Mod):
        top = max(abs(rhs.lower), abs(rhs.upper))
        return Interval(-top + 1 if rhs.lower < 0 else 0, top - 1 if rhs.upper > 0 else 0)
    return Interval(-magnitude, magnitude)


def node_count(expr: AffineExpr) -> int:
    """The number of nodes of the expression tree (constants and variables count 1; a
    subexpression counts as often as it is printed)."""
    try:
        return _node_count(typed(expr))
    except RecursionError:  # too deep for the recursive walk: the same count on a stack
        return fold(expr, lambda node: 1, lambda node, lhs, rhs: 1 + lhs + rhs)


def _node_count(expr: Any) -> int:
    if type(expr) in _BINARY_KINDS:
        return 1 + _node_count(expr.lhs) + _node_count(expr.rhs)
    return 1


def used_variables(expr: AffineExpr, dims: set[int], symbols: set[int]) -> None:
    """Add the positions of the dimensions and symbols ``expr`` uses to the two sets."""
    try:
        _used_variables(typed(expr), dims, symbols)
    except RecursionError:  # too deep for the recursive walk: every node once, on a stack
        node: Any
        for node in _post_order(expr)[0]:
            kind = type(node)
            if kind is Dim:
                dims.add(node.position)
            elif kind is Sym:
                symbols.add(node.position)


#: Depth up to which an expression may go to MLIR's own rewrites in C++
#: (``AffineExpr.compose``, ``shift_symbols``, ``AffineMap.compress_unused_symbols``,
#: which :mod:`~hlo_indexing.maps.algebra` uses): they recurse on the native stack and an
#: overflow kills the process (measured: ~30,000 levels on the 8 MB main stack, 3,600 in
#: a thread of 256 KB; 1,000 pass in a thread of 128 KB). Deeper expressions take the
#: walks of this module.
NATIVE_REWRITE_DEPTH = 1000


def remembered_variables(expr: AffineExpr, table: dict[Any, Any]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The positions of the dimensions and of the symbols ``expr`` uses (sorted) and the
    depth of its tree (a leaf has depth 1), remembered in ``table`` (a memo of
    ``expr``'s context, e.g. the table
    :data:`~hlo_indexing.maps.memo.EXPRESSION_VARIABLES_TABLE` that many maps share)."""
    found = table.get(expr)
    if found is None:
        dims: set[int] = set()
        symbols: set[int] = set()
        try:
            levels = _used_variables(typed(expr), dims, symbols)
        except RecursionError:  # too deep for the recursive walk: the same facts on a stack
            used_variables(expr, dims, symbols)
            levels = depth(expr)
        found = table[expr] = (tuple(sorted(dims)), tuple(sorted(symbols)), levels)
    return found


def _used_variables(expr: Any, dims: set[int], symbols: set[int]) -> int:
    """Add the variables of ``expr`` to ``dims`` and ``symbols``; return its depth."""
    kind = type(expr)
    if kind is Dim:
        dims.add(expr.position)
    elif kind is Sym:
        symbols.add(expr.position)
    elif kind in _BINARY_KINDS:
        lhs = _used_variables(expr.lhs, dims, symbols)
        rhs = _used_variables(expr.rhs, dims, symbols)
        return 1 + (lhs if lhs > rhs else rhs)
    return 1


def walk(expr: AffineExpr, visit: Callable[[AffineExpr], None]) -> None:
    """Call ``visit`` on every node of the DAG once, children before parents (on a
    stack: ``visit`` may be called from any depth)."""
    order, _children = _post_order(expr)
    for node in order:
        visit(node)


def depth(expr: AffineExpr) -> int:
    """The depth of the expression tree (a leaf has depth 1), so that deep expressions
    can be refused (``limits.MAX_NESTING_DEPTH``) before a recursive algorithm (the map
    text parser, symbolic tiling) sees them."""
    return int(fold(expr, lambda node: 1, lambda node, lhs, rhs: 1 + max(lhs, rhs)))


def zero_divisors(expr: AffineExpr, dim_ranges: Sequence[Interval], symbol_ranges: Sequence[Interval]) -> list[AffineExpr]:
    """The divisors of ``floordiv``/``ceildiv``/``mod`` nodes of ``expr`` that are zero
    over the given ranges (a constant 0, or an expression whose bounds are ``[0, 0]``)."""
    found: list[AffineExpr] = []

    def visit(node: AffineExpr) -> None:
        if isinstance(node, (FloorDiv, CeilDiv, Mod)):
            value = bounds(node.rhs, dim_ranges, symbol_ranges)
            if value.lower == 0 and value.upper == 0:
                found.append(node.rhs)

    walk(expr, visit)
    return found
