"""XLA's indexing map on top of ``mlir.ir.AffineMap``.

An :class:`IndexingMap` is ``f(d, s)`` -- an ``ir.AffineMap`` -- together with an
inclusive range for every dimension ``d_i`` and every symbol ``s_j`` and a set of
constraints ``lo <= g(d, s) <= hi``. For a point ``d`` of its domain, the set of
points it maps to is ``{ f(d, s) : s in its ranges and every constraint holds }``.

Symbols come in two kinds, as in XLA: *range variables* (``s0, s1, ...``), which
enumerate a range (e.g. the reduced dimension of a reduce), and *runtime variables*
(``rt0, rt1, ...``), values read from another tensor at run time (e.g. the offsets of
a dynamic slice). In the underlying affine map, range variables come first.

Maps are immutable and hashable; two maps are equal when their affine maps, variable
ranges (and runtime-variable origins) and constraints are equal, which is what
de-duplication needs after :meth:`IndexingMap.simplify`.

What a map does alone is a method: parse and print (:mod:`~hlo_indexing.maps.text`,
below this module), simplify (:mod:`~hlo_indexing.maps.simplifier`, below too),
evaluate, enumerate, add a constraint. Operations on maps built above it are free
functions of their modules: composition and the removal or conversion of variables in
:mod:`~hlo_indexing.maps.algebra`, the MLIR attribute form in
:mod:`~hlo_indexing.maps.attributes`.

Example::

    m = IndexingMap.parse("(d0, d1)[s0] -> (d0, s0), "
                          "domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 255]")
    str(m)  # the same text back
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import DomainTooLargeError, InvalidArgumentError, UndefinedDivisionError
from hlo_indexing.limits import MAX_ENUMERATION_POINTS
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps import text
from hlo_indexing.maps.interval import INT64_MAX, INT64_MIN, Interval, check_int64
from hlo_indexing.maps.memo import EXPRESSION_VARIABLES_TABLE, bounded_table, memoized
from hlo_indexing.maps.points import distinct_rows
from hlo_indexing.maps.simplifier import simplify_parts
from hlo_indexing.maps.variables import MapParts, RangeLike, Variable

__all__ = ["DEFAULT_MAX_POINTS", "IndexingMap", "RangeLike", "Variable", "display_text", "parse_indexing_map", "print_indexing_map"]

#: Default limit on the number of domain points :meth:`IndexingMap.enumerate` visits.
DEFAULT_MAX_POINTS = MAX_ENUMERATION_POINTS

def _variable(value: RangeLike, prefix: str, index: int) -> Variable:
    """``value`` as a checked :class:`Variable` (``prefix``/``index`` name it in errors)."""
    if type(value) is Variable:
        variable = value
    elif isinstance(value, Variable):
        variable = value
    elif isinstance(value, Interval):
        variable = Variable(value)
    else:
        lower, upper = value
        variable = Variable(Interval(int(lower), int(upper)))
    bounds = variable.bounds
    lower, upper = bounds.lower, bounds.upper
    if not (INT64_MIN <= lower <= INT64_MAX and INT64_MIN <= upper <= INT64_MAX):
        check_int64(lower, f"lower bound of {prefix}{index}")
        check_int64(upper, f"upper bound of {prefix}{index}")
    if lower > upper:
        raise InvalidArgumentError(f"range of {prefix}{index} is empty: {bounds} (lower > upper)")
    return variable


def _interval(value: Interval | tuple[int, int]) -> Interval:
    return value if isinstance(value, Interval) else Interval(int(value[0]), int(value[1]))


class IndexingMap:
    """An affine map with ranges for its variables and constraints on expressions.

    Construct with :meth:`__init__`, :meth:`parse`, :meth:`identity`,
    :meth:`known_empty` or :meth:`undefined`. All operations return new maps.
    """

    __slots__ = ("_map", "_dims", "_ranges", "_runtimes", "_constraints", "_empty", "_reason", "_hash", "_equality_key", "_is_identity", "_text", "_names", "_results", "_depth")

    def __init__(
        self,
        affine_map: "ir.AffineMap",
        dims: Sequence[RangeLike],
        range_vars: Sequence[RangeLike] = (),
        runtime_vars: Sequence[RangeLike] = (),
        constraints: Mapping[ir.AffineExpr, Interval | tuple[int, int]]
        | Iterable[tuple[ir.AffineExpr, Interval | tuple[int, int]]] = (),
    ):
        """``dims``/``range_vars``/``runtime_vars`` give one range each (a
        :class:`Variable`, an :class:`Interval` or a ``(lower, upper)`` pair, inclusive);
        ``constraints`` maps ``ir.AffineExpr`` over the same variables to intervals.

        Raises ``ValueError`` for a variable count that does not match the affine map,
        an empty range or a bound that overflows int64."""
        dim_vars = tuple([_variable(v, "d", i) for i, v in enumerate(dims)])
        range_list = tuple([_variable(v, "s", i) for i, v in enumerate(range_vars)]) if range_vars else ()
        runtime_list = tuple([_variable(v, "rt", i) for i, v in enumerate(runtime_vars)]) if runtime_vars else ()
        if len(dim_vars) != affine_map.n_dims:
            raise InvalidArgumentError(f"the affine map has {affine_map.n_dims} dimensions but {len(dim_vars)} ranges were given")
        if len(range_list) + len(runtime_list) != affine_map.n_symbols:
            raise InvalidArgumentError(
                f"the affine map has {affine_map.n_symbols} symbols but {len(range_list)} range and "
                f"{len(runtime_list)} runtime variables were given"
            )
        items = constraints.items() if isinstance(constraints, Mapping) else constraints
        table: dict[ir.AffineExpr, Interval] = {}
        for expr, interval in items:
            expr = ax.typed(expr)
            interval = _interval(interval)
            check_int64(interval.lower, f"lower bound of constraint {expr}")
            check_int64(interval.upper, f"upper bound of constraint {expr}")
            previous = table.get(expr)
            table[expr] = interval if previous is None else previous.intersect(interval)
        self._init(affine_map, dim_vars, range_list, runtime_list, table, empty=False, reason="")

    def _init(
        self,
        affine_map: ir.AffineMap | None,
        dims: tuple[Variable, ...],
        ranges: tuple[Variable, ...],
        runtimes: tuple[Variable, ...],
        constraints: dict[ir.AffineExpr, Interval],
        *,
        empty: bool,
        reason: str,
    ) -> None:
        self._map = affine_map
        self._dims = dims
        self._ranges = ranges
        self._runtimes = runtimes
        self._constraints = constraints
        self._empty = empty
        self._reason = reason
        self._hash: int | None = None
        self._equality_key: tuple[object, ...] | None = None
        self._is_identity: bool | None = None
        self._text: str | None = None
        self._names: tuple[str, ...] | None = None
        self._results: tuple[ir.AffineExpr, ...] | None = None
        self._depth: int | None = None

    @classmethod
    def _make(
        cls,
        affine_map: ir.AffineMap | None,
        dims: Iterable[Variable],
        ranges: Iterable[Variable],
        runtimes: Iterable[Variable],
        constraints: Mapping[ir.AffineExpr, Interval],
        *,
        empty: bool = False,
        reason: str = "",
    ) -> "IndexingMap":
        """Build without validation (internal: callers guarantee consistency)."""
        out = cls.__new__(cls)
        out._init(affine_map, tuple(dims), tuple(ranges), tuple(runtimes), dict(constraints), empty=empty, reason=reason)
        return out

    # ----------------------------------------------------------------- factories

    @classmethod
    def parse(
        cls,
        source: str,
        context: "ir.Context | None" = None,
        *,
        filename: str = "<indexing map>",
        allow_empty_ranges: bool = False,
    ) -> "IndexingMap":
        """Read XLA's text format (one- or multi-line; grammar in
        :mod:`hlo_indexing.maps.text`), e.g.
        ``IndexingMap.parse("(d0) -> (d0 floordiv 8), domain: d0 in [0, 31]")``.

        Errors raise :class:`~hlo_indexing.errors.ParseError` naming the offending token
        with its line and column in ``filename``. An interval ``[lo, hi]`` with
        ``lo > hi`` is rejected unless ``allow_empty_ranges`` is set, in which case -- as
        in XLA -- it makes the map ``KNOWN EMPTY``."""
        context = context or current_or_default_context()
        parsed = text.parse_map_text(source, context, filename=filename, allow_empty_ranges=allow_empty_ranges)
        if parsed.parts is None:
            return cls.undefined("unknown indexing") if parsed.undefined else cls.known_empty(*parsed.arity, context)
        affine_map, dims, ranges, runtimes, constraints = parsed.parts
        m = cls._make(affine_map, dims, ranges, runtimes, {})
        for expr, interval in constraints.items():
            m = m.add_constraint(expr, interval)
        return m

    @classmethod
    def identity(cls, shape: Sequence[int], context: "ir.Context | None" = None) -> "IndexingMap":
        """``(d0, ..., dn) -> (d0, ..., dn)`` over the index space of ``shape``; known
        empty when ``shape`` has no element (a zero-sized dimension)."""
        context = context or current_or_default_context()
        if any(n <= 0 for n in shape):
            return cls.known_empty(len(shape), 0, len(shape), context)
        affine_map = ir.AffineMap.get_identity(len(shape), context)
        return cls(affine_map, [Interval.of_size(n) for n in shape])

    @classmethod
    def from_exprs(
        cls,
        dims: Sequence[RangeLike],
        results: Sequence[ir.AffineExpr | int],
        range_vars: Sequence[RangeLike] = (),
        runtime_vars: Sequence[RangeLike] = (),
        constraints: Mapping[ir.AffineExpr, Interval | tuple[int, int]] = MappingProxyType({}),
        context: "ir.Context | None" = None,
    ) -> "IndexingMap":
        """Build from result expressions (``ir.AffineExpr`` or ints)."""
        context = context or current_or_default_context()
        exprs = [ax.constant(r, context) if isinstance(r, int) else r for r in results]
        affine_map = ir.AffineMap.get(len(dims), len(range_vars) + len(runtime_vars), exprs, context)
        return cls(affine_map, dims, range_vars, runtime_vars, constraints or ())

    @classmethod
    def known_empty(cls, num_dims: int, num_symbols: int, num_results: int, context: "ir.Context | None" = None) -> "IndexingMap":
        """The map whose domain is proven empty (``KNOWN EMPTY``); results are all 0."""
        context = context or current_or_default_context()
        zero = ax.constant(0, context)
        affine_map = ir.AffineMap.get(num_dims, num_symbols, [zero] * num_results, context)
        dims = [Variable(Interval(0, -1))] * num_dims
        ranges = [Variable(Interval(0, -1))] * num_symbols
        return cls._make(affine_map, dims, ranges, (), {}, empty=True)

    @classmethod
    def undefined(cls, reason: str) -> "IndexingMap":
        """The explicit *unknown* map of an op the analysis cannot describe; prints as
        ``UNDEFINED`` and carries the reason."""
        return cls._make(None, (), (), (), {}, reason=reason or "unknown indexing")

    # ----------------------------------------------------------------- accessors

    @property
    def affine_map(self) -> "ir.AffineMap | None":
        """The underlying ``ir.AffineMap`` (None for an undefined map)."""
        return self._map

    @property
    def context(self) -> "ir.Context":
        """The MLIR context of the affine map (defined maps only)."""
        return self._defined().context

    @property
    def dim_vars(self) -> tuple[Variable, ...]:
        """The dimension variables ``d0, d1, ...`` with their ranges."""
        return self._dims

    @property
    def range_vars(self) -> tuple[Variable, ...]:
        """The range variables (the first symbols) with their ranges."""
        return self._ranges

    @property
    def runtime_vars(self) -> tuple[Variable, ...]:
        """The runtime variables (the last symbols) with their ranges."""
        return self._runtimes

    @property
    def symbol_vars(self) -> tuple[Variable, ...]:
        """Range variables then runtime variables, in the affine map's symbol order."""
        return self._ranges + self._runtimes

    @property
    def dim_ranges(self) -> tuple[Interval, ...]:
        """The range of each dimension, in order."""
        return tuple(v.bounds for v in self._dims)

    @property
    def symbol_ranges(self) -> tuple[Interval, ...]:
        """The range of each symbol (range variables then runtime variables)."""
        return tuple(v.bounds for v in self.symbol_vars)

    @property
    def constraints(self) -> Mapping[ir.AffineExpr, Interval]:
        """Read-only ``{ir.AffineExpr: Interval}``."""
        return MappingProxyType(self._constraints)

    @property
    def num_dims(self) -> int:
        """The number of dimensions."""
        return len(self._dims)

    @property
    def num_symbols(self) -> int:
        """The number of symbols (range plus runtime variables)."""
        return len(self._ranges) + len(self._runtimes)

    @property
    def num_results(self) -> int:
        """The number of results (0 for an undefined map)."""
        return 0 if self._map is None else len(self._result_exprs())

    @property
    def results(self) -> list[ir.AffineExpr]:
        """The result expressions (``ir.AffineExpr``), in order."""
        return list(self._result_exprs())

    @property
    def depth(self) -> int:
        """The depth of the deepest result or constraint expression (a variable or a
        constant has depth 1; 0 for a map without any, or undefined). Computed once per
        map, each expression's depth remembered in the context's table of expression facts
        (:func:`~hlo_indexing.maps.affine_expr.remembered_variables`)."""
        if self._depth is None:
            found = 0
            if self._map is not None:
                table = bounded_table(self._map.context, EXPRESSION_VARIABLES_TABLE)
                for e in itertools.chain(self._result_exprs(), self._constraints):
                    found = max(found, ax.remembered_variables(e, table)[2])
            self._depth = found
        return self._depth

    def _result_exprs(self) -> tuple[ir.AffineExpr, ...]:
        """The result expressions, read from the affine map once (each read through the
        bindings makes new Python objects)."""
        if self._results is None:
            self._results = tuple(self._defined().results)
        return self._results

    @property
    def is_undefined(self) -> bool:
        """True for an *unknown indexing* map (no affine map, see :attr:`reason`)."""
        return self._map is None

    def _defined(self) -> "ir.AffineMap":
        """The affine map; ``AttributeError`` for an undefined map, which has none."""
        if self._map is None:
            raise AttributeError(f"an undefined map ({self._reason}) has no affine map")
        return self._map

    @property
    def reason(self) -> str:
        """Why the map is undefined ('' for a defined map)."""
        return self._reason

    def is_known_empty(self) -> bool:
        """True when the domain is proven empty (see :meth:`simplify`)."""
        return self._empty

    @property
    def is_identity(self) -> bool:
        """True for ``(d0, ..., dn-1) -> (d0, ..., dn-1)`` without symbols or
        constraints, over any non-empty dimension ranges (an elementwise op's maps).
        Computed once per map."""
        if self._is_identity is None:
            affine = self._map
            self._is_identity = (
                affine is not None
                and not self._empty
                and not self._ranges
                and not self._runtimes
                and not self._constraints
                and affine == ir.AffineMap.get_identity(len(self._dims), affine.context)
            )
        return self._is_identity

    # ----------------------------------------------------------------- identity

    def _key(self) -> tuple[object, ...]:
        """What equality compares (computed once): variables as plain
        ``(lower, upper, origin)`` tuples, as :class:`Variable` equality does."""
        if self._equality_key is None:
            if self._map is None:
                self._equality_key = ("undefined", self._reason)
            elif self._empty:
                self._equality_key = ("empty", self.num_dims, self.num_symbols, self.num_results)
            else:
                variables = tuple(
                    tuple((v.bounds.lower, v.bounds.upper, v.origin) for v in part)
                    for part in (self._dims, self._ranges, self._runtimes)
                )
                self._equality_key = (self._map, variables, frozenset(self._constraints.items()))
        return self._equality_key

    def memo_key(self) -> tuple[object, ...]:
        """What the maps' memo (:mod:`hlo_indexing.maps.memo`) keys a result on: the map
        and its variable names (cosmetic, so not part of equality, but printed and carried
        into derived maps)."""
        if self._names is None:
            self._names = tuple(v.name for v in itertools.chain(self._dims, self._ranges, self._runtimes))
        return (self, self._names)

    def sort_key(self) -> tuple[str, tuple[str, ...]]:
        """A total order of maps, for output that does not depend on set iteration order:
        the XLA text, then the variables' origins (which the text does not show and
        equality compares)."""
        return (str(self), tuple(v.origin for v in itertools.chain(self._dims, self._ranges, self._runtimes)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, IndexingMap) and hash(self) == hash(other) and self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __str__(self) -> str:
        if self._text is None:
            if self._map is None:
                self._text = "UNDEFINED"
            elif self._empty:
                self._text = "KNOWN EMPTY"
            else:
                self._text = text.print_parts(self._parts())
        return self._text

    def display_text(self) -> str:
        """The text reports print for this map: XLA's one-line form (``str()``), or, for an
        undefined map, ``unknown indexing (REASON)`` so that the reason is never lost in
        remarks and ``str()`` of analysis results (``str()`` keeps XLA's ``UNDEFINED``)."""
        if self._map is None:
            reason = self._reason
            return f"unknown indexing ({reason})" if reason and reason != "unknown indexing" else "unknown indexing"
        return str(self)

    def variable_names(self) -> tuple[list[str], list[str]]:
        """Printed names of the dimensions and of the symbols (range then runtime variables)."""
        return text.variable_names(self._dims, self._ranges, self._runtimes)

    def _parts(self) -> MapParts:
        """The parts of a defined map (the text and the simplifier work on them)."""
        return MapParts(self._defined(), self._dims, self._ranges, self._runtimes, self._constraints)

    def __repr__(self) -> str:
        # An expression that rebuilds the map (in the default context): parse of the XLA
        # text, or the undefined map with its reason.
        if self.is_undefined:
            return f"IndexingMap.undefined({self._reason!r})"
        return f"IndexingMap.parse({str(self)!r})"

    # ----------------------------------------------------------------- rebuilding

    def replace(
        self,
        affine_map: "ir.AffineMap | None" = None,
        dims: Sequence[Variable] | None = None,
        ranges: Sequence[Variable] | None = None,
        runtimes: Sequence[Variable] | None = None,
        constraints: Mapping[ir.AffineExpr, Interval] | None = None,
    ) -> "IndexingMap":
        """A copy with some parts replaced (no validation beyond the constructor's own)."""
        return IndexingMap._make(
            self._map if affine_map is None else affine_map,
            self._dims if dims is None else dims,
            self._ranges if ranges is None else ranges,
            self._runtimes if runtimes is None else runtimes,
            self._constraints if constraints is None else constraints,
        )

    def add_constraint(self, expr: ir.AffineExpr, interval: Interval | tuple[int, int]) -> "IndexingMap":
        """Add ``lo <= expr <= hi`` (intersected with an existing bound on the same
        expression); a bound on a bare variable narrows its range instead. The result is
        :meth:`is_known_empty` when a range or constraint becomes empty."""
        if self._map is None or self._empty:
            return self
        interval = _interval(interval)
        expr = ax.typed(expr)
        if isinstance(expr, ax.Const):
            return self if interval.contains(expr.value) else self._as_known_empty()
        if isinstance(expr, (ax.Dim, ax.Sym)):
            return self._narrow_variable(expr, interval)
        constraints = dict(self._constraints)
        previous = constraints.get(expr)
        constraints[expr] = interval if previous is None else previous.intersect(interval)
        if constraints[expr].is_empty:
            return self._as_known_empty()
        return self.replace(constraints=constraints)

    def add_constraints(self, items: Iterable[tuple[ir.AffineExpr, Interval | tuple[int, int]]]) -> "IndexingMap":
        """:meth:`add_constraint` of each item in turn, the same map, built once instead of
        once per item (composition adds every constraint of both maps); the map itself
        when there is no item."""
        if self._map is None or self._empty:
            return self
        variables = {"d": list(self._dims), "s": list(self._ranges + self._runtimes)}
        constraints = dict(self._constraints)
        added = False
        node: Any  # typed by the bindings: dispatch on its class
        for expr, interval in items:
            added = True
            interval = _interval(interval)
            expr = node = ax.typed(expr)
            kind = type(node)  # (the expression classes have no subclasses: as isinstance, cheaper)
            if kind is ax.Const:
                if not interval.contains(node.value):
                    return self._as_known_empty()
            elif kind is ax.Dim or kind is ax.Sym:
                table = variables["d" if kind is ax.Dim else "s"]
                old = table[node.position]
                narrowed = old.bounds.intersect(interval)
                if narrowed.is_empty:
                    return self._as_known_empty()
                table[node.position] = Variable(narrowed, old.name, old.origin)
            else:
                previous = constraints.get(expr)
                merged = constraints[expr] = interval if previous is None else previous.intersect(interval)
                if merged.is_empty:
                    return self._as_known_empty()
        if not added:
            return self
        n = len(self._ranges)
        symbols = variables["s"]
        return IndexingMap._make(self._map, variables["d"], symbols[:n], symbols[n:], constraints)

    def _narrow_variable(self, expr: ir.AffineDimExpr | ir.AffineSymbolExpr, interval: Interval) -> "IndexingMap":
        is_dim = isinstance(expr, ax.Dim)
        variables = list(self._dims if is_dim else self.symbol_vars)
        old = variables[expr.position]
        narrowed = old.bounds.intersect(interval)
        if narrowed.is_empty:
            return self._as_known_empty()
        variables[expr.position] = Variable(narrowed, old.name, old.origin)
        if is_dim:
            return self.replace(dims=variables)
        n = len(self._ranges)
        return self.replace(ranges=variables[:n], runtimes=variables[n:])

    def _as_known_empty(self) -> "IndexingMap":
        return IndexingMap.known_empty(self.num_dims, self.num_symbols, self.num_results, self.context)

    # ----------------------------------------------------------------- evaluation

    def evaluate(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> tuple[int, ...]:
        """The results at one point (domain membership is not checked: see
        :meth:`contains_point`)."""
        if len(dims) != self.num_dims or len(symbols) != self.num_symbols:
            raise InvalidArgumentError(f"expected {self.num_dims} dims and {self.num_symbols} symbols")
        return tuple(ax.evaluate(e, dims, symbols) for e in self._defined().results)

    def contains_point(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> bool:
        """Whether ``(dims, symbols)`` lies in the ranges and satisfies every constraint
        (a point where a constraint or result divides by zero is not in the domain, as
        in :meth:`enumerate`). ``ValueError`` for an undefined map."""
        if self.is_undefined:
            raise InvalidArgumentError(f"cannot test a point of an undefined map ({self._reason})")
        if self._empty:
            return False
        for value, var in zip(itertools.chain(dims, symbols), self._dims + self.symbol_vars):
            if not var.bounds.contains(value):
                return False
        try:
            for expr in self.results:
                ax.evaluate(expr, dims, symbols)
            return all(c.contains(ax.evaluate(e, dims, symbols)) for e, c in self._constraints.items())
        except UndefinedDivisionError:
            return False

    def expr_bounds(self, expr: ir.AffineExpr) -> Interval:
        """Interval bounds of any expression over the variable ranges (constraints are
        not used, so the bound is sound but may be loose)."""
        return ax.bounds(expr, self.dim_ranges, self.symbol_ranges)

    def constrained_bounds(self, exprs: Sequence[ir.AffineExpr]) -> list[Interval]:
        """An interval holding every value of each expression over the domain (XLA's range
        evaluator with constraints): bounds over the variable ranges, where a
        subexpression that a constraint bounds is narrowed to the constraint's interval
        (sound, as every point of the domain satisfies the constraints; a constraint nested
        in another one narrows it first; an empty interval where the constraints leave no
        point). ``InvalidArgumentError`` for an undefined map."""
        if self.is_undefined:
            raise InvalidArgumentError(f"cannot bound expressions over an undefined map ({self._reason})")
        narrowed: dict[ir.AffineExpr, Interval] = {}
        for expr, interval in sorted(self._constraints.items(), key=lambda item: len(str(item[0]))):
            narrowed[expr] = ax.bounds(expr, self.dim_ranges, self.symbol_ranges, narrowed).intersect(interval)
        return [ax.bounds(expr, self.dim_ranges, self.symbol_ranges, narrowed) for expr in exprs]

    def result_bounds(self) -> list[Interval]:
        """:meth:`constrained_bounds` of the results (XLA's ``ComputeResultRanges``)."""
        return self.constrained_bounds(self.results if not self.is_undefined else [])

    def domain_size(self) -> int:
        """The number of points of the box of variable ranges (before constraints)."""
        size = 1
        for var in self._dims + self.symbol_vars:
            size *= var.bounds.size
        return size

    def enumerate(self, max_points: int = DEFAULT_MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
        """All feasible points and their images, vectorised with numpy.

        Returns ``(points, images)``: ``points`` is an int64 array of shape
        ``(n, num_dims + num_symbols)`` (dims first), ``images`` of shape
        ``(n, num_results)``. Raises :class:`DomainTooLargeError` when the box of
        variable ranges holds more than ``max_points`` points. Points where a constraint
        or a result divides by 0 (semi-affine maps) have no image and are left out."""
        if self._map is None:
            raise InvalidArgumentError(f"cannot enumerate an undefined map ({self._reason})")
        total = self.num_dims + self.num_symbols
        if self._empty:
            return np.zeros((0, total), np.int64), np.zeros((0, self.num_results), np.int64)
        size = self.domain_size()
        if size > max_points:
            raise DomainTooLargeError(
                f"domain of {size} points exceeds the enumeration limit of {max_points} (max_points)",
                limit="MAX_ENUMERATION_POINTS",
                value=size,
            )
        axes = [np.arange(v.bounds.lower, v.bounds.upper + 1, dtype=np.int64) for v in self._dims + self.symbol_vars]
        if total:
            grids = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")]
        else:
            grids = []
        count = size
        dims, syms = grids[: self.num_dims], grids[self.num_dims :]
        keep = np.ones(count, dtype=bool)
        for expr, interval in self._constraints.items():
            values = np.broadcast_to(ax.evaluate_array(expr, dims, syms, keep), (count,))
            keep &= (values >= interval.lower) & (values <= interval.upper)
        points = np.stack(grids, axis=1)[keep] if total else np.zeros((int(keep.sum()), 0), np.int64)
        dims = [g[keep] for g in dims]
        syms = [g[keep] for g in syms]
        n = points.shape[0]
        defined = np.ones(n, dtype=bool)
        images = [np.broadcast_to(ax.evaluate_array(e, dims, syms, defined), (n,)) for e in self._map.results]
        images_array = np.stack(images, axis=1) if images else np.zeros((n, 0), np.int64)
        if not defined.all():
            points, images_array = points[defined], images_array[defined]
        return points, images_array.astype(np.int64, copy=False)

    def relation(self, max_points: int = DEFAULT_MAX_POINTS) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
        """The relation ``{(d, f(d, s))}`` over the feasible domain, symbols projected out."""
        points, images = self.enumerate(max_points)
        dims = points[:, : self.num_dims]
        pairs = np.concatenate([dims, images], axis=1)
        unique = distinct_rows(pairs)[0] if len(pairs) else pairs
        return {(tuple(row[: self.num_dims].tolist()), tuple(row[self.num_dims :].tolist())) for row in unique}

    # ----------------------------------------------------------------- simplification

    def simplify(self, *, remember: bool = True) -> "IndexingMap":
        """Range-aware simplification (see :mod:`hlo_indexing.maps.simplifier`); never
        changes the relation. Results are remembered per map (and variable names) in the
        maps' memo, unless ``remember=False`` (for a caller that remembers a whole chain
        of operations under one entry)."""
        if self._map is None or self._empty or self._plain():
            return self
        if not remember:
            return self._simplified()
        return memoized(self._map.context, ("simplify", self.memo_key()), self._simplified)

    def _simplified(self) -> "IndexingMap":
        parts = self._parts()
        simplified = simplify_parts(parts)
        if simplified is None:
            return self._as_known_empty()
        if simplified is parts:
            return self
        return IndexingMap._make(*simplified)

    def _plain(self) -> bool:
        """Whether the simplifier would give this map back unchanged for want of anything
        to rewrite: no constraints, no empty range, every result a constant or a variable
        whose range is not a single point (the simplifier replaces such a variable by
        its value)."""
        if self._map is None or self._empty or self._constraints:
            return False
        for variable in itertools.chain(self._dims, self._ranges, self._runtimes):
            if variable.bounds.lower > variable.bounds.upper:
                return False  # an empty range: the simplifier finds the map known empty
        symbols = None
        expr: Any  # typed by the bindings: dispatch on its class
        for expr in self._map.results:
            kind = type(expr)
            if kind is ax.Dim:
                bounds = self._dims[expr.position].bounds
            elif kind is ax.Sym:
                symbols = symbols or self._ranges + self._runtimes
                bounds = symbols[expr.position].bounds
            elif kind is ax.Const:
                continue
            else:
                return False
            if bounds.lower == bounds.upper:
                return False
        return True


def parse_indexing_map(
    source: str,
    context: "ir.Context | None" = None,
    *,
    filename: str = "<indexing map>",
    allow_empty_ranges: bool = False,
) -> IndexingMap:
    """:meth:`IndexingMap.parse` as a function."""
    return IndexingMap.parse(source, context, filename=filename, allow_empty_ranges=allow_empty_ranges)


def print_indexing_map(m: IndexingMap) -> str:
    """One-line XLA form (``str(m)``), e.g.
    ``(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 255]``."""
    return str(m)


def display_text(m: IndexingMap) -> str:
    """:meth:`IndexingMap.display_text` as a function."""
    return m.display_text()
