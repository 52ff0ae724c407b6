"""Symbolic integer expressions of tile ids, tile sizes and runtime variables.

The expressions of XLA's experimental tiling (``SymbolicExpr`` there): integers,
variables ``tid_i`` (tile id of tiling-space dimension i), ``ts_i`` (its tile size) and
``rt_k`` (runtime variable k), ``+``, ``*``, floor division ``/``, ``mod`` (result in
``[0, |b|)``), ``ceildiv``, ``min`` and ``max``. Unlike affine expressions, products of
two variables (``tid_0 * ts_0``) are allowed.

Contract: :meth:`Expr.evaluate` is exact integer arithmetic; constants are int64
(:class:`~hlo_indexing.errors.IntegerOverflowError` past it) and expressions at most
``limits.MAX_NESTING_DEPTH`` deep (:class:`~hlo_indexing.errors.NestingTooDeepError`),
so that every walk over one is bounded; the constructors fold
constant operands and drop neutral elements only (``x + 64 - 256`` stays as built, as
in XLA before ``Simplify()``; :mod:`simplify` folds it); :func:`parse_expr`
reads the printed form (XLA's precedence: ``*``, ``/``, ``mod`` bind tighter than ``+``,
``-``; ``min``/``max``/``ceildiv`` as calls or ``ceildiv`` as an infix operator).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Union

from hlo_indexing.errors import ParseError
from hlo_indexing.limits import check_depth, check_int64

ExprLike = Union["Expr", int]


def _floordiv(a: int, b: int) -> int:
    return a // b


def _mod(a: int, b: int) -> int:
    return a % abs(b)


def _ceildiv(a: int, b: int) -> int:
    return -((-a) // b)


_BINARY: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "floordiv": _floordiv,
    "mod": _mod,
    "ceildiv": _ceildiv,
    "min": min,
    "max": max,
}


@dataclass(frozen=True)
class Expr:
    """One node: ``op`` is ``const`` (``value``), ``var`` (``name``) or a binary
    operator of ``_BINARY`` with ``lhs``/``rhs``."""

    op: str
    value: int = 0
    name: str = ""
    lhs: "Expr | None" = None
    rhs: "Expr | None" = None
    #: Operator nodes on the longest path to a leaf (0 for a leaf).
    depth: int = field(default=0, compare=False, repr=False)

    # -- construction -------------------------------------------------------------
    @staticmethod
    def const(value: int) -> "Expr":
        """The integer ``value`` (:class:`~hlo_indexing.errors.IntegerOverflowError`
        outside int64)."""
        return Expr("const", value=check_int64(int(value), "a tile expression constant"))

    @staticmethod
    def var(name: str) -> "Expr":
        """A variable (``tid_0``, ``ts_1``, ``rt_0``)."""
        return Expr("var", name=name)

    @property
    def is_const(self) -> bool:
        """True for an integer literal."""
        return self.op == "const"

    def _bin(self, op: str, other: ExprLike) -> "Expr":
        return binary(op, self, as_expr(other))

    def __add__(self, other: ExprLike) -> "Expr":
        return self._bin("add", other)

    def __radd__(self, other: ExprLike) -> "Expr":
        return binary("add", as_expr(other), self)

    def __sub__(self, other: ExprLike) -> "Expr":
        return self._bin("add", as_expr(other) * -1)

    def __rsub__(self, other: ExprLike) -> "Expr":
        return binary("add", as_expr(other), self * -1)

    def __mul__(self, other: ExprLike) -> "Expr":
        return self._bin("mul", other)

    def __rmul__(self, other: ExprLike) -> "Expr":
        return binary("mul", as_expr(other), self)

    def __neg__(self) -> "Expr":
        return self * -1

    def floordiv(self, other: ExprLike) -> "Expr":
        """Floor division."""
        return self._bin("floordiv", other)

    def mod(self, other: ExprLike) -> "Expr":
        """Remainder in ``[0, |other|)``."""
        return self._bin("mod", other)

    def ceildiv(self, other: ExprLike) -> "Expr":
        """Ceiling division."""
        return self._bin("ceildiv", other)

    def min(self, other: ExprLike) -> "Expr":
        """Minimum."""
        return self._bin("min", other)

    def max(self, other: ExprLike) -> "Expr":
        """Maximum."""
        return self._bin("max", other)

    # -- use ----------------------------------------------------------------------
    def evaluate(self, env: Mapping[str, int]) -> int:
        """The value with every variable taken from ``env`` (KeyError if missing)."""
        if self.op == "const":
            return self.value
        if self.op == "var":
            return int(env[self.name])
        assert self.lhs is not None and self.rhs is not None
        a, b = self.lhs.evaluate(env), self.rhs.evaluate(env)
        if self.op in ("floordiv", "mod", "ceildiv") and b == 0:
            raise ZeroDivisionError(f"division by zero in {self}")
        return int(_BINARY[self.op](a, b))

    def substitute(self, values: Mapping[str, "ExprLike"]) -> "Expr":
        """The expression with the variables of ``values`` replaced (folded again)."""
        if self.op == "const":
            return self
        if self.op == "var":
            return as_expr(values[self.name]) if self.name in values else self
        assert self.lhs is not None and self.rhs is not None
        return binary(self.op, self.lhs.substitute(values), self.rhs.substitute(values))

    def variables(self) -> set[str]:
        """Names of the variables used."""
        if self.op == "var":
            return {self.name}
        if self.op == "const":
            return set()
        assert self.lhs is not None and self.rhs is not None
        return self.lhs.variables() | self.rhs.variables()

    def __str__(self) -> str:
        return _print(self, 0)

    def __repr__(self) -> str:
        return f"Expr({self})"


def as_expr(value: ExprLike) -> Expr:
    """``value`` as an expression (integers become constants)."""
    return value if isinstance(value, Expr) else Expr.const(value)


def binary(op: str, a: Expr, b: Expr) -> Expr:
    """``a op b`` with constants folded and neutral elements dropped."""
    if a.is_const and b.is_const and not (op in ("floordiv", "mod", "ceildiv") and b.value == 0):
        return Expr.const(_BINARY[op](a.value, b.value))
    if op == "add":
        if a.is_const and a.value == 0:
            return b
        if b.is_const and b.value == 0:
            return a
        if a.is_const:  # constants go right: x + 3
            return binary("add", b, a)
    elif op == "mul":
        if a.is_const and not b.is_const:
            return binary("mul", b, a)
        if b.is_const:
            if b.value == 0:
                return b
            if b.value == 1:
                return a
            if a.op == "mul" and a.rhs is not None and a.rhs.is_const:
                return binary("mul", a.lhs or a, Expr.const(a.rhs.value * b.value))
            if a.op == "add" and a.lhs is not None and a.rhs is not None:
                return binary("add", binary("mul", a.lhs, b), binary("mul", a.rhs, b))
    elif op in ("floordiv", "ceildiv") and b.is_const and b.value == 1:
        return a
    elif op == "mod" and b.is_const and abs(b.value) == 1:
        return Expr.const(0)
    elif op in ("min", "max") and a == b:
        return a
    depth = 1 + max(a.depth, b.depth)
    check_depth(depth, "a tile expression")
    return Expr(op, lhs=a, rhs=b, depth=depth)


# -- printing ---------------------------------------------------------------------
_PRECEDENCE = {"add": 1, "mul": 2, "floordiv": 2, "mod": 2}
_INFIX = {"mul": " * ", "floordiv": " / ", "mod": " mod "}


def _negated(e: Expr) -> Expr | None:
    """``x`` when ``e`` is ``x * c`` with ``c < 0`` (as ``x * -c``), or ``-c`` for a constant."""
    if e.is_const and e.value < 0:
        return Expr.const(-e.value)
    if e.op == "mul" and e.rhs is not None and e.rhs.is_const and e.rhs.value < 0 and e.lhs is not None:
        return binary("mul", e.lhs, Expr.const(-e.rhs.value))
    return None


def _print(e: Expr, parent: int) -> str:
    if e.op == "const":
        return str(e.value) if e.value >= 0 or parent == 0 else f"({e.value})"
    if e.op == "var":
        return e.name
    assert e.lhs is not None and e.rhs is not None
    if e.op in ("min", "max", "ceildiv"):
        return f"{e.op}({_print(e.lhs, 0)}, {_print(e.rhs, 0)})"
    if e.op == "add":
        right = _negated(e.rhs)
        text = f"{_print(e.lhs, 1)} - {_print(right, 2)}" if right is not None else (
            f"{_print(e.lhs, 1)} + {_print(e.rhs, 2)}")
        return f"({text})" if parent > 1 else text
    if e.op == "mul" and e.rhs.is_const and e.rhs.value == -1:
        return f"-{_print(e.lhs, 3)}"
    prec = _PRECEDENCE[e.op]
    left = _print(e.lhs, prec if e.lhs.op == e.op else prec + 1)
    text = f"{left}{_INFIX[e.op]}{_print(e.rhs, prec + 1)}"
    return f"({text})" if parent > prec else text


# -- parsing ----------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(.))")
_FUNCTIONS = {"min", "max", "ceildiv", "floordiv", "mod"}


def _tokens(text: str) -> list[str]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        token = m.group(1) or m.group(2) or m.group(3)
        if token:
            out.append(token)
    return out


class _Parser:
    def __init__(self, text: str, names: Mapping[str, str] | None) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.pos = 0
        self.names = names or {}
        self.nesting = 0  # parentheses, calls and unary minuses open

    def enter(self) -> None:
        self.nesting += 1
        check_depth(self.nesting, f"expression {self.text[:60]!r}")

    def peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ParseError(f"expected {expected or 'a token'} in expression {self.text!r}, got {tok!r}")
        self.pos += 1
        return tok

    def sum(self) -> Expr:
        e = self.product()
        while self.peek() in ("+", "-"):
            if self.take() == "+":
                e = e + self.product()
            else:
                e = e - self.product()
        return e

    def product(self) -> Expr:
        e = self.unary()
        while self.peek() in ("*", "/", "mod", "floordiv", "ceildiv"):
            op = self.take()
            rhs = self.unary()
            name = {"*": "mul", "/": "floordiv"}.get(op, op)
            e = binary(name, e, rhs)
        return e

    def unary(self) -> Expr:
        if self.peek() == "-":
            self.take()
            self.enter()
            negated = -self.unary()
            self.nesting -= 1
            return negated
        return self.atom()

    def atom(self) -> Expr:
        tok = self.take()
        if tok == "(":
            self.enter()
            e = self.sum()
            self.take(")")
            self.nesting -= 1
            return e
        if tok.isdigit():
            return Expr.const(int(tok))
        if tok in _FUNCTIONS and self.peek() == "(":
            self.take("(")
            self.enter()
            a = self.sum()
            self.take(",")
            b = self.sum()
            self.take(")")
            self.nesting -= 1
            return binary("floordiv" if tok == "floordiv" else tok, a, b)
        if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", tok):
            return Expr.var(self.names.get(tok, tok))
        raise ParseError(f"unexpected {tok!r} in expression {self.text!r}")


def parse_expr(text: str, names: Mapping[str, str] | None = None) -> Expr:
    """Parse one expression; ``names`` renames variables while parsing (``v0`` -> ``tid_0``).

    Raises ParseError on malformed text."""
    parser = _Parser(text, names)
    e = parser.sum()
    if parser.peek() is not None:
        raise ParseError(f"trailing {parser.peek()!r} in expression {text!r}")
    return e
