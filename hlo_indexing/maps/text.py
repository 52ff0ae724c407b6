"""XLA's text format for indexing maps: printer and parser.

Grammar (whitespace and newlines are insignificant)::

    map      := 'UNDEFINED' | 'unknown indexing' | 'KNOWN EMPTY'
              | vars '->' '(' [expr (',' expr)*] ')' [',' 'domain' ':' domain]
    vars     := '(' names ')' ['[' names ']'] ['{' names '}']     dims, range vars, runtime vars
    domain   := entry (',' entry)*
    entry    := expr 'in' '[' int ',' int ']'      first one per variable, in order; then constraints
    expr     := sum; sum := term (('+' | '-') term)*
    term     := unary (('*' | 'floordiv' | '/' | 'floorDiv' | 'ceildiv' | 'ceilDiv' | 'mod') unary)*
    unary    := '-' unary | int | name | '(' expr ')' | ('min' | 'max') '(' expr ',' expr ')'

``min``/``max`` (XLA's symbolic maps since 2026) are read only when the caller asks for
them (:mod:`hlo_indexing.maps.minmax`): each becomes a *defined* range variable, placed
after the declared range variables, and :attr:`ParsedMap.definitions` says what it is.

The printer writes the affine-era form (``floordiv``, MLIR's term order and
parentheses, as ``mlir::AffineExpr`` prints), with custom variable names substituted.
Both work on a map's parts (:class:`~hlo_indexing.maps.variables.MapParts`):
``IndexingMap.parse`` and ``str(IndexingMap)`` are built on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import ParseError, SourceLocation, UndefinedDivisionError
from hlo_indexing.limits import check_depth, check_int64
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.variables import MapParts, Variable

_MLIR_NAME = re.compile(r"\b([ds])(\d+)\b")


def variable_names(
    dims: Sequence[Variable], ranges: Sequence[Variable], runtimes: Sequence[Variable]
) -> tuple[list[str], list[str]]:
    """Printed names of the dimensions and of the symbols (range then runtime vars)."""
    dim_names = [v.name or f"d{i}" for i, v in enumerate(dims)]
    symbols = [v.name or f"s{i}" for i, v in enumerate(ranges)]
    symbols += [v.name or f"rt{i}" for i, v in enumerate(runtimes)]
    return dim_names, symbols


def print_expr(expr: ir.AffineExpr, dim_names: list[str], symbol_names: list[str]) -> str:
    """An ``ir.AffineExpr`` as MLIR prints it, with the given variable names."""

    def rename(match: re.Match[str]) -> str:
        names = dim_names if match.group(1) == "d" else symbol_names
        return names[int(match.group(2))]

    return _MLIR_NAME.sub(rename, str(expr))


def print_parts(parts: MapParts, inline: Mapping[int, str] | None = None) -> str:
    """One-line XLA form of a defined, not known-empty map, e.g.
    ``(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 255]``.
    ``inline`` gives symbols (by position) printed as a text where they occur (a
    ``min(...)`` of :mod:`hlo_indexing.maps.minmax`), neither declared nor given a range."""
    inline = inline or {}
    ranges = tuple(v for j, v in enumerate(parts.ranges) if j not in inline)
    dims, visible = variable_names(parts.dims, ranges, parts.runtimes)
    n_range = len(ranges)
    names = iter(visible)
    symbols = [inline[j] if j in inline else next(names) for j in range(len(parts.ranges) + len(parts.runtimes))]
    header = f"({', '.join(dims)})"
    if ranges:
        header += f"[{', '.join(visible[:n_range])}]"
    if parts.runtimes:
        header += "{" + ", ".join(visible[n_range:]) + "}"
    results = ", ".join(print_expr(e, dims, symbols) for e in parts.affine_map.results)
    text = f"{header} -> ({results})"
    variables = parts.dims + ranges + parts.runtimes
    entries = [f"{name} in {var.bounds}" for name, var in zip(dims + visible, variables)]
    entries += sorted(f"{print_expr(e, dims, symbols)} in {c}" for e, c in parts.constraints.items())
    if entries:
        text += ", domain: " + ", ".join(entries)
    return text


class ParsedMap(NamedTuple):
    """What a map's text says. A defined map: its ``parts``, whose constraints are still
    to be added one by one (a bound on a bare variable narrows its range, an empty one
    makes the map known empty). Otherwise ``parts`` is None and the map is
    ``undefined`` (``UNDEFINED``, ``unknown indexing``) or known empty with ``arity``
    (dimensions, symbols, results)."""

    parts: MapParts | None
    undefined: bool = False
    arity: tuple[int, int, int] = (0, 0, 0)
    #: Per ``min``/``max`` read (when asked for): ``(kind, lhs, rhs, symbol)``, the range
    #: variable at position ``symbol`` standing for ``kind(lhs, rhs)`` (over the parts'
    #: variables; a definition may use the ones before it).
    definitions: tuple[tuple[str, ir.AffineExpr, ir.AffineExpr, int], ...] = ()


# --------------------------------------------------------------------- parser

_TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<arrow>->)|(?P<punct>[()\[\]{},:+\-*/]))"
)
_MUL_OPS = {"*", "/", "floordiv", "floorDiv", "ceildiv", "ceilDiv", "mod"}


@dataclass
class _Token:
    kind: str  # 'int', 'name', 'punct', 'end'
    text: str
    offset: int


class _MapParser:
    def __init__(self, text: str, context: "ir.Context", filename: str, allow_empty_ranges: bool, min_max: bool = False):
        self.text = text
        self.context = context
        self.filename = filename
        self.allow_empty_ranges = allow_empty_ranges
        #: ``(kind, lhs, rhs)`` of each min/max read so far (None: refused), standing for
        #: the temporary symbol ``n_symbols + k`` until the map is built.
        self.clamps: list[tuple[str, ir.AffineExpr, ir.AffineExpr]] | None = [] if min_max else None
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.names: dict[str, ax.AffineExpr] = {}
        self.nesting = 0
        self.n_dims = self.n_symbols = 0
        #: (divisor, its first token) of every floordiv/ceildiv/mod, checked for zero.
        self.divisors: list[tuple[ax.AffineExpr, _Token]] = []
        #: (result or constraint, its first token), checked to stay in int64 over the domain.
        self.expressions: list[tuple[ax.AffineExpr, _Token]] = []

    # -- tokens

    def _tokenize(self, text: str) -> list[_Token]:
        tokens, offset = [], 0
        while True:
            while offset < len(text) and text[offset].isspace():
                offset += 1
            if offset >= len(text):
                tokens.append(_Token("end", "end of input", offset))
                return tokens
            match = _TOKEN.match(text, offset)
            if match is None or match.end() == offset:
                raise self._error_at(offset, f"unexpected character {text[offset]!r}")
            group = match.lastgroup
            assert group is not None  # every alternative of _TOKEN is a named group
            kind = "punct" if group == "arrow" else group
            start = match.start(group)
            tokens.append(_Token(kind, match.group(group), start))
            offset = match.end()

    def _location(self, offset: int) -> SourceLocation:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return SourceLocation(self.filename, line, column)

    def _error_at(self, offset: int, message: str) -> ParseError:
        return ParseError(message, self._location(offset))

    def error(self, message: str, token: _Token | None = None) -> ParseError:
        token = token or self.peek()
        return self._error_at(token.offset, f"{message}, found {token.text!r}" if token.kind != "end" else f"{message}, found end of input")

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def next(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def accept(self, text: str) -> bool:
        if self.peek().kind in ("punct", "name") and self.peek().text == text:
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> _Token:
        if not self.accept(text):
            raise self.error(f"expected {text!r}")
        return self.tokens[self.pos - 1]

    # -- grammar

    def parse(self) -> ParsedMap:
        first = self.peek()
        if first.kind == "name" and first.text in ("UNDEFINED", "unknown"):
            self.next()
            if first.text == "unknown":
                self.expect("indexing")
            self._expect_end()
            return ParsedMap(None, undefined=True)
        if first.kind == "name" and first.text == "KNOWN":
            self.next()
            self.expect("EMPTY")
            self._expect_end()
            return ParsedMap(None)
        dim_names = self._name_list("(", ")")
        range_names = self._name_list("[", "]") if self.peek().text == "[" else []
        runtime_names = self._name_list("{", "}") if self.peek().text == "{" else []
        all_names = dim_names + range_names + runtime_names
        for i, name in enumerate(dim_names):
            self.names[name] = ax.dim(i, self.context)
        for i, name in enumerate(range_names + runtime_names):
            self.names[name] = ax.symbol(i, self.context)
        self.n_dims, self.n_symbols = len(dim_names), len(range_names) + len(runtime_names)
        self.expect("->")
        self.expect("(")
        results = []
        if not self.accept(")"):
            results.append(self._checked_expr())
            while self.accept(","):
                results.append(self._checked_expr())
            self.expect(")")
        bounds: list[Interval] = []
        constraints: list[tuple[ax.AffineExpr, Interval, _Token]] = []
        if self.accept(","):
            self.expect("domain")
            self.expect(":")
            for i, name in enumerate(all_names):
                if i and not self.accept(","):
                    raise self.error(f"expected ', {name} in [lo, hi]'")
                if not self.accept(name):
                    raise self.error(f"expected the range of variable {name!r}")
                self.expect("in")
                bounds.append(self._interval())
            if not all_names or self.accept(","):
                while True:
                    token = self.peek()
                    expr = self._checked_expr()
                    self.expect("in")
                    constraints.append((expr, self._interval(), token))
                    if not self.accept(","):
                        break
        elif all_names:
            raise self.error("expected ', domain:' with the range of every variable")
        self._expect_end()
        bounds = bounds + self._clamp_bounds(len(dim_names), bounds)
        self._check_divisors(len(dim_names), bounds)
        self._check_magnitudes(len(dim_names), bounds)
        return self._build(dim_names, range_names, runtime_names, results, bounds, constraints)

    def _clamp_bounds(self, n_dims: int, bounds: list[Interval]) -> list[Interval]:
        """The range of each min/max read (after the declared variables' ranges)."""
        if not self.clamps or any(b.is_empty for b in bounds) or len(bounds) != n_dims + self.n_symbols:
            return [Interval(0, 0)] * len(self.clamps or ())
        found: list[Interval] = []
        for kind, lhs, rhs in self.clamps:
            symbols = bounds[n_dims:] + found
            a, b = ax.bounds(lhs, bounds[:n_dims], symbols), ax.bounds(rhs, bounds[:n_dims], symbols)
            pick = min if kind == "min" else max
            found.append(Interval(pick(a.lower, b.lower), pick(a.upper, b.upper)))
        return found

    def _checked_expr(self) -> ir.AffineExpr:
        """An expression whose tree is not deeper than ``limits.MAX_NESTING_DEPTH`` (MLIR
        builds ``a + b + ...`` as a left-deep tree, one level per term)."""
        token = self.peek()
        expr = self.expr()
        check_depth(ax.depth(expr), "expression", self._location(token.offset))
        self.expressions.append((expr, token))
        return expr

    def _check_magnitudes(self, n_dims: int, bounds: list[Interval]) -> None:
        """Every result and constraint stays in int64 over the variables' ranges (bounded
        by interval arithmetic), so that evaluating the map cannot overflow."""
        if any(b.is_empty for b in bounds) or len(bounds) != n_dims + self.n_symbols:
            return
        dim_ranges, symbol_ranges = bounds[:n_dims], bounds[n_dims:]
        for expr, token in self.expressions:
            value = ax.bounds(expr, dim_ranges, symbol_ranges)
            check_int64(value.lower, "lowest value of this expression over the domain", self._location(token.offset))
            check_int64(value.upper, "highest value of this expression over the domain", self._location(token.offset))

    def _check_divisors(self, n_dims: int, bounds: list[Interval]) -> None:
        """A divisor that is zero over the variables' ranges is an error at the divisor."""
        if not self.divisors or any(b.is_empty for b in bounds):
            return
        dim_ranges, symbol_ranges = bounds[:n_dims], bounds[n_dims:]
        for divisor, token in self.divisors:
            value = ax.bounds(divisor, dim_ranges, symbol_ranges)
            if value.lower == 0 and value.upper == 0:
                raise UndefinedDivisionError(
                    "division by zero: the divisor is 0" + ("" if ax.constant_value(divisor) == 0 else " over the domain"),
                    self._location(token.offset),
                )

    def _build(
        self,
        dim_names: list[str],
        range_names: list[str],
        runtime_names: list[str],
        results: list[ir.AffineExpr],
        bounds: list[Interval],
        constraints: list[tuple[ir.AffineExpr, Interval, _Token]],
    ) -> ParsedMap:
        n_dims, n_syms = len(dim_names), len(range_names) + len(runtime_names)
        n_range, clamps = len(range_names), self.clamps or []
        # Temporary positions (range, runtime, then min/max) -> final (range, min/max, runtime).
        order = list(range(n_range)) + [n_range + len(clamps) + j for j in range(len(runtime_names))]
        order += [n_range + k for k in range(len(clamps))]
        renumber = [ax.symbol(i, self.context) for i in order]
        dim_exprs = [ax.dim(i, self.context) for i in range(n_dims)]
        if clamps:
            results = [ax.substitute(e, dim_exprs, renumber) for e in results]
            constraints = [(ax.substitute(e, dim_exprs, renumber), c, t) for e, c, t in constraints]
        affine_map = ir.AffineMap.get(n_dims, n_syms + len(clamps), results, self.context)

        def var(name: str, default: str, interval: Interval) -> Variable:
            return Variable(interval, "" if name == default else name)

        dims = tuple(var(n, f"d{i}", b) for i, (n, b) in enumerate(zip(dim_names, bounds)))
        ranges = tuple(var(n, f"s{i}", b) for i, (n, b) in enumerate(zip(range_names, bounds[n_dims:])))
        ranges += tuple(Variable(b) for b in bounds[n_dims + n_syms :])
        runtimes = tuple(var(n, f"rt{i}", b) for i, (n, b) in enumerate(zip(runtime_names, bounds[n_dims + n_range :])))
        definitions = tuple(
            (kind, ax.substitute(lhs, dim_exprs, renumber), ax.substitute(rhs, dim_exprs, renumber), n_range + k)
            for k, (kind, lhs, rhs) in enumerate(clamps)
        )
        empty = any(b.is_empty for b in bounds)
        table: dict[ir.AffineExpr, Interval] = {}
        for expr, interval, token in constraints:
            if interval.is_empty:
                empty = True
                continue
            value = ax.constant_value(expr)
            if value is not None:
                empty = empty or not interval.contains(value)
                continue
            previous = table.get(expr)
            table[expr] = interval if previous is None else previous.intersect(interval)
            empty = empty or table[expr].is_empty
        if empty:
            return ParsedMap(None, arity=(n_dims, n_syms, len(results)))
        return ParsedMap(MapParts(affine_map, dims, ranges, runtimes, table), definitions=definitions)

    def _expect_end(self) -> None:
        if self.peek().kind != "end":
            raise self.error("expected end of indexing map")

    def _name_list(self, open_: str, close: str) -> list[str]:
        self.expect(open_)
        names: list[str] = []
        if self.accept(close):
            return names
        while True:
            token = self.next()
            if token.kind != "name":
                raise self.error("expected a variable name", token)
            if token.text in names or token.text in self.names:
                raise self.error("duplicate variable name", token)
            names.append(token.text)
            if self.accept(close):
                return names
            self.expect(",")

    def _interval(self) -> Interval:
        open_token = self.expect("[")
        lower = self._int()
        self.expect(",")
        upper = self._int()
        self.expect("]")
        if lower > upper and not self.allow_empty_ranges:
            raise self._error_at(open_token.offset, f"empty interval [{lower}, {upper}]: lower bound exceeds upper bound")
        return Interval(lower, upper)

    def _int(self) -> int:
        negative = self.accept("-")
        token = self.next()
        if token.kind != "int":
            raise self.error("expected an integer", token)
        value = -int(token.text) if negative else int(token.text)
        return check_int64(value, "bound", self._location(token.offset))

    def expr(self) -> ir.AffineExpr:
        lhs = self.term()
        terms = 0
        while self.peek().text in ("+", "-") and self.peek().kind == "punct":
            op_token = self.next()
            terms += 1  # MLIR builds a chain as a left-deep tree: one level per term
            check_depth(self.nesting + terms, "expression", self._location(op_token.offset))
            rhs = self.term()
            if op_token.text == "+":
                lhs = self._exact(op_token, lhs, rhs, lhs + rhs, lambda a, b: a + b)
            else:
                lhs = self._exact(op_token, lhs, rhs, lhs - rhs, lambda a, b: a - b)
        return lhs

    def _exact(
        self,
        op_token: _Token,
        lhs: ir.AffineExpr,
        rhs: ir.AffineExpr,
        result: ir.AffineExpr,
        exact: Callable[[int, int], int],
    ) -> ir.AffineExpr:
        """``result`` (MLIR's folded ``lhs op rhs``), unless the operation leaves int64 (MLIR's
        folding wraps or gives up): then :class:`IntegerOverflowError` at the operator.
        Checked at the all-0 and all-1 points, in Python ints."""
        for value in (0, 1):
            dims, symbols = [value] * self.n_dims, [value] * (self.n_symbols + len(self.clamps or ()))
            try:
                wanted = exact(ax.evaluate(lhs, dims, symbols), ax.evaluate(rhs, dims, symbols))
                got = ax.evaluate(result, dims, symbols)
            except UndefinedDivisionError:
                continue
            check_int64(wanted, "value of this operation", self._location(op_token.offset))
            check_int64(got, "value of this operation", self._location(op_token.offset))
        return result

    def term(self) -> ir.AffineExpr:
        lhs = self.unary()
        factors = 0
        while self.peek().text in _MUL_OPS and self.peek().kind in ("punct", "name"):
            op_token = self.next()
            factors += 1
            check_depth(self.nesting + factors, "expression", self._location(op_token.offset))
            rhs_token = self.peek()
            rhs = self.unary()
            op = op_token.text
            if op != "*":
                if ax.constant_value(rhs) == 0:
                    raise UndefinedDivisionError("division by zero: the divisor is 0", self._location(rhs_token.offset))
                self.divisors.append((rhs, rhs_token))
            if op == "*":
                if not (_is_symbolic(lhs) or _is_symbolic(rhs)):
                    raise self.error("non-affine product: one factor must be a constant or use symbols only", op_token)
                lhs = self._exact(op_token, lhs, rhs, lhs * rhs, lambda a, b: a * b)
            elif op in ("/", "floordiv", "floorDiv"):
                lhs = ax.floordiv(lhs, rhs)
            elif op in ("ceildiv", "ceilDiv"):
                lhs = ax.ceildiv(lhs, rhs)
            else:
                lhs = ax.mod(lhs, rhs)
        return lhs

    def unary(self) -> ir.AffineExpr:
        token = self.next()
        if token.kind == "punct" and token.text in ("-", "("):
            self.nesting += 1
            check_depth(self.nesting, "expression", self._location(token.offset))
            try:
                return self._nested(token)
            finally:
                self.nesting -= 1
        return self._leaf(token)

    def _nested(self, token: _Token) -> ir.AffineExpr:
        if token.text == "-":
            operand = self.unary()
            return self._exact(token, operand, ax.constant(-1, self.context), operand * -1, lambda a, b: a * b)
        inner = self.expr()
        self.expect(")")
        return inner

    def _leaf(self, token: _Token) -> ir.AffineExpr:
        if token.kind == "int":
            return ax.constant(check_int64(int(token.text), "constant", self._location(token.offset)), self.context)
        if token.kind == "name":
            if token.text in ("min", "max") and self.peek().text == "(":
                return self._clamp(token)
            found = self.names.get(token.text)
            if found is None:
                raise self.error("unknown variable", token)
            return found
        raise self.error("expected an expression", token)


    def _clamp(self, token: _Token) -> ir.AffineExpr:
        """``min(a, b)``/``max(a, b)``: a temporary symbol standing for it (see
        :attr:`clamps`); refused unless the caller reads min/max."""
        if self.clamps is None:
            raise self.error(
                f"'{token.text}' is not an affine expression (read maps with min/max with "
                "hlo_indexing.maps.minmax.parse_clamped_map)", token)
        self.expect("(")
        self.nesting += 1
        check_depth(self.nesting, "expression", self._location(token.offset))
        try:
            lhs = self.expr()
            self.expect(",")
            rhs = self.expr()
            self.expect(")")
        finally:
            self.nesting -= 1
        self.clamps.append((token.text, lhs, rhs))
        return ax.symbol(self.n_symbols + len(self.clamps) - 1, self.context)


def _is_symbolic(expr: ir.AffineExpr) -> bool:
    """True if ``expr`` uses no dimension (MLIR's condition for a semi-affine factor)."""
    dims: set[int] = set()
    ax.used_variables(expr, dims, set())
    return not dims


def parse_map_text(
    text: str,
    context: "ir.Context | None" = None,
    *,
    filename: str = "<indexing map>",
    allow_empty_ranges: bool = False,
    min_max: bool = False,
) -> ParsedMap:
    """Parse XLA's text form of a map (see ``IndexingMap.parse``, which builds the map).

    Errors raise :class:`ParseError` naming the offending token with its line and
    column. An interval ``[lo, hi]`` with ``lo > hi`` is rejected unless
    ``allow_empty_ranges`` is set, in which case -- as in XLA -- it makes the map
    ``KNOWN EMPTY``. ``min``/``max`` are read only with ``min_max`` (see the module
    docstring), else refused."""
    context = context or current_or_default_context()
    with context:
        return _MapParser(text, context, filename, allow_empty_ranges, min_max).parse()
