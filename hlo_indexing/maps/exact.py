"""Proof by isl: exact equality, inclusion and emptiness of the relations of indexing
maps, with the integer set library (``islpy``, the optional ``exact`` extra:
``pip install hlo-indexing[exact]``).

The relation of a map is ``{(d, f(d, s)) : d, s in their ranges, every constraint
holds}``, symbols (range and runtime variables) projected out, as
:meth:`IndexingMap.relation` enumerates it; the relation of a set of maps is their
union; a map with ``min``/``max`` (:mod:`~hlo_indexing.maps.minmax`) is the union of its
pieces. isl decides equality, inclusion and emptiness of such Presburger relations
exactly, whatever the domain's size: ``floordiv``, ``ceildiv`` and ``mod`` by constants
are existentially quantified divisions. A semi-affine map (a product of two variables,
a division by a variable) is split into Presburger pieces, one per value of a variable
of the product or divisor (the one with the fewest values, again until none is left;
at most ``limits.ISL_MAX_CASES`` pieces): ``s0 * s1`` with ``s0 in [0, 1]`` is the
union of ``s0 = 0`` (``0``) and ``s0 = 1`` (``s1``). Maps isl cannot hold give no
proof: a semi-affine map with more pieces, or an undefined map.

How: each side goes to isl as its relation *before* projection, ``(d, s) -> f(d, s)``
(every map of a set padded to the same symbols, a symbol no expression uses fixed at
0). Equal (included) lifted relations have equal (included) projections, and isl
decides that in a fraction of a millisecond; only when the lifted relations differ
(the simplifier dropped, narrowed or renumbered a symbol) are the symbols projected
out, which isl does without a bound of its own (one corpus map took minutes). So isl
runs in the isolation server (:mod:`hlo_indexing.dialect_glue.isolation`, the server
process itself: ~0.1 ms per call) under ``limits.PROOF_SECONDS`` of wall-clock time
and ``limits.ISL_MAX_OPERATIONS`` of isl's operation budget
(:mod:`hlo_indexing.maps.isl_decision`); past either the proof says it was not run.
Where ``os.fork`` does not exist (Windows) isl runs in-process, without the time bound.

Every answer is a :class:`Proof`: ``holds`` is True (proven), False (disproven, with a
``witness`` pair in one relation and not in the other) or None (not run, ``reason``
says why: islpy is not installed, a map is outside Presburger arithmetic, or isl went
past its bound). Without islpy nothing fails: every proof says it was not run.

Example::

    >>> a = IndexingMap.parse("(d0) -> (d0 mod 4), domain: d0 in [0, 3]")
    >>> prove_equal(a, IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]")).holds
    True
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from hlo_indexing import limits
from hlo_indexing.dialect_glue.isolation import ChildDied, run_isolated
from hlo_indexing.errors import LimitExceededError, TimeLimitError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.minmax import ClampedMap

if TYPE_CHECKING:
    from hlo_indexing.maps.isl_decision import Answer

__all__ = ["NotPresburger", "Proof", "isl_available", "isl_relation_text", "prove_empty", "prove_equal", "prove_includes"]


@dataclass(frozen=True)
class Proof:
    """The answer of a proof: ``holds`` True (proven), False (disproven) or None (not
    run, see ``reason``); ``witness`` is a ``(dims, results)`` pair that one relation has
    and the other has not (for a disproven equality or inclusion) or a point of a
    relation shown non-empty."""

    holds: bool | None
    reason: str = ""
    witness: tuple[tuple[int, ...], tuple[int, ...]] | None = None

    @property
    def ran(self) -> bool:
        """Whether isl decided (True or False), as opposed to a proof not run."""
        return self.holds is not None

    def __str__(self) -> str:
        if self.holds is None:
            return f"not proven: {self.reason}"
        text = "proven" if self.holds else "disproven"
        return text + (f" ({self.reason})" if self.reason else "") + (f", e.g. {self.witness}" if self.witness else "")


class NotPresburger(Exception):
    """A map isl cannot represent (the message says why)."""


@functools.cache
def _installed() -> bool:
    return importlib.util.find_spec("islpy") is not None


def isl_available() -> bool:
    """Whether ``islpy`` is installed (proofs run)."""
    return _installed()


#: :func:`hlo_indexing.maps.isl_decision.decide`, by name: the isolation server imports
#: it (and islpy), this process does not.
_DECIDE = "hlo_indexing.maps.isl_decision:decide"

_NOT_INSTALLED = "islpy is not installed (pip install hlo-indexing[exact]): the proof was not run"


def _expr_text(expr: ax.AffineExpr) -> str:
    """``expr`` in isl's syntax over ``d<i>`` and ``s<j>``; :class:`NotPresburger` for a
    product of two variables or a division by a variable."""

    def leaf(node: Any) -> str:
        kind = type(node)
        if kind is ax.Const:
            return str(node.value)
        return f"d{node.position}" if kind is ax.Dim else f"s{node.position}"

    def combine(node: Any, lhs: str, rhs: str) -> str:
        kind = type(node)
        if kind is ax.Add:
            return f"(({lhs}) + ({rhs}))"
        if kind is ax.Mul:  # isl reads a constant factor first: "3 * (x)"
            if type(node.rhs) is ax.Const:
                return f"{rhs} * ({lhs})"
            if type(node.lhs) is ax.Const:
                return f"{lhs} * ({rhs})"
            raise NotPresburger(f"{node}: a product of two variables")
        if type(node.rhs) is not ax.Const:
            raise NotPresburger(f"{node}: a division by a variable")
        divisor = node.rhs.value
        if divisor == 0 or (divisor < 0 and kind is ax.Mod):
            raise NotPresburger(f"{node}: a division or modulo by {divisor}")
        if divisor < 0:  # isl divides by positive constants: x / -k = -x / k
            lhs, divisor = f"-1 * ({lhs})", -divisor
        if kind is ax.Mod:  # every operand in parentheses: isl reads "2 * x mod 4" as 2 * (x mod 4)
            return f"(({lhs}) mod {divisor})"
        if kind is ax.FloorDiv:
            return f"floor(({lhs}) / {divisor})"
        return f"ceil(({lhs}) / {divisor})"

    return str(ax.fold(ax.typed(expr), leaf, combine))


#: A variable of a map: ("d", position) or ("s", position).
_Variable: TypeAlias = tuple[str, int]


def _conditions(m: IndexingMap, num_symbols: int, fixed: dict[_Variable, int]) -> str:
    """The conditions of ``m``'s lifted relation over ``d<i>``, ``s<j>`` (``num_symbols``
    of them: those ``m`` lacks, and those no expression of ``m`` uses, are 0) and
    ``o<k>``, the variables of ``fixed`` at their values."""
    if m.is_known_empty():
        return "1 = 0"
    used_dims: set[int] = set()
    used_symbols: set[int] = set()
    for expr in [*m.results, *m.constraints]:
        ax.used_variables(expr, used_dims, used_symbols)
    conditions = [f"{v.bounds.lower} <= d{i} <= {v.bounds.upper}" for i, v in enumerate(m.dim_vars)]
    for j in range(num_symbols):
        bounds = m.symbol_vars[j].bounds if j < m.num_symbols else None
        if bounds is not None and (j in used_symbols or bounds.lower > bounds.upper):
            conditions.append(f"{bounds.lower} <= s{j} <= {bounds.upper}")
        else:
            conditions.append(f"s{j} = 0")
    conditions += [f"{kind}{position} = {value}" for (kind, position), value in fixed.items()]
    fix = _fixer(m, fixed)
    conditions += [f"{c.lower} <= {_expr_text(fix(e))} <= {c.upper}" for e, c in m.constraints.items()]
    conditions += [f"o{i} = {_expr_text(fix(e))}" for i, e in enumerate(m.results)]
    return " and ".join(conditions)


def _fixer(m: IndexingMap, fixed: dict[_Variable, int]) -> Callable[[ax.AffineExpr], ax.AffineExpr]:
    """A function replacing the variables of ``fixed`` by their values in ``m``'s
    expressions (MLIR folds what becomes constant)."""
    if not fixed:
        return lambda expr: expr
    context = m.context
    dims = [ax.constant(fixed[("d", i)], context) if ("d", i) in fixed else ax.dim(i, context) for i in range(m.num_dims)]
    symbols = [
        ax.constant(fixed[("s", j)], context) if ("s", j) in fixed else ax.symbol(j, context) for j in range(m.num_symbols)
    ]
    memo: dict[ax.AffineExpr, ax.AffineExpr] = {}
    return lambda expr: ax.substitute(expr, dims, symbols, memo)


def _semi_affine_variables(exprs: Iterable[ax.AffineExpr]) -> set[_Variable]:
    """The variables of the non-Presburger nodes of ``exprs``: both factors of a product
    of two variables, the divisor of a division by a variable."""
    found: set[_Variable] = set()

    def leaf(node: Any) -> frozenset[_Variable]:
        kind = type(node)
        if kind is ax.Const:
            return frozenset()
        return frozenset({("d" if kind is ax.Dim else "s", node.position)})

    def combine(node: Any, lhs: frozenset[_Variable], rhs: frozenset[_Variable]) -> frozenset[_Variable]:
        kind = type(node)
        if kind is ax.Mul and lhs and rhs:
            found.update(lhs | rhs)
        elif kind is not ax.Add and kind is not ax.Mul and rhs:
            found.update(rhs)
        return lhs | rhs

    memo: dict[ax.AffineExpr, Any] = {}
    for expr in exprs:
        ax.fold(ax.typed(expr), leaf, combine, memo)
    return found


def _disjuncts(m: IndexingMap, num_symbols: int) -> list[str]:
    """The conditions of ``m``'s lifted relation, one text per Presburger piece (see the
    module docstring); :class:`NotPresburger` past ``limits.ISL_MAX_CASES`` pieces."""
    pieces: list[str] = []
    pending: list[dict[_Variable, int]] = [{}]
    while pending:
        fixed = pending.pop()
        try:
            pieces.append(_conditions(m, num_symbols, fixed))
            continue
        except NotPresburger as exc:
            fix = _fixer(m, fixed)
            free = _semi_affine_variables(fix(e) for e in [*m.results, *m.constraints]) - set(fixed)
            if not free:
                if not fixed:
                    raise
                at = ", ".join(f"{kind}{position} = {value}" for (kind, position), value in sorted(fixed.items()))
                raise NotPresburger(f"{exc} (at {at})") from None
            bounds = {v: (m.dim_vars if v[0] == "d" else m.symbol_vars)[v[1]].bounds for v in free}
            variable = min(sorted(free), key=lambda v: bounds[v].upper - bounds[v].lower)
            values = range(bounds[variable].lower, bounds[variable].upper + 1)
            if len(pieces) + len(pending) + len(values) > limits.ISL_MAX_CASES:
                raise NotPresburger(f"{exc}, in more than {limits.ISL_MAX_CASES} pieces (limits.ISL_MAX_CASES)") from None
            pending += [{**fixed, variable: value} for value in values]
    return pieces


#: One map or several (their union), plain or with min/max.
Maps: TypeAlias = IndexingMap | ClampedMap | Iterable[IndexingMap | ClampedMap]


def _maps(maps: Maps) -> list[IndexingMap]:
    """The plain maps of ``maps``; a map with min/max is its pieces (the same relation)."""
    items = [maps] if isinstance(maps, (IndexingMap, ClampedMap)) else list(maps)
    return [p for m in items for p in (m.pieces() if isinstance(m, ClampedMap) else [m])]


def isl_relation_text(maps: Maps, num_symbols: int | None = None) -> str:
    """isl's text of the union of the lifted relations of ``maps`` (one map or several
    of the same arity): ``{ [d0, .., s0, ..] -> [o0, ..] : ... ; ... }`` over
    ``num_symbols`` symbols (default: the most any of them has); projecting the ``s``
    out gives the relation of the maps. :class:`NotPresburger` for an undefined or
    semi-affine map, or maps of different arities."""
    items = _maps(maps)
    if not items:
        raise NotPresburger("no map: the arity of an empty set is unknown")
    for m in items:
        if m.is_undefined:
            raise NotPresburger(f"an undefined map ({m.reason})")
    arity = {(m.num_dims, m.num_results) for m in items}
    if len(arity) > 1:
        raise NotPresburger(f"maps of different arities {sorted(arity)}")
    ((num_dims, num_results),) = arity
    symbols = max(m.num_symbols for m in items) if num_symbols is None else num_symbols
    inputs = [f"d{i}" for i in range(num_dims)] + [f"s{j}" for j in range(symbols)]
    head = f"[{', '.join(inputs)}] -> [{', '.join(f'o{k}' for k in range(num_results))}]"
    return "{ " + " ; ".join(f"{head} : {piece}" for m in items for piece in _disjuncts(m, symbols)) + " }"


def _ask(question: str, *sides: Maps) -> Proof:
    """``question`` (``equal``, ``includes`` or ``empty``, see
    :func:`~hlo_indexing.maps.isl_decision.decide`) on ``sides``, within the bounds."""
    if not isl_available():
        return Proof(None, _NOT_INSTALLED)
    try:
        items = [_maps(side) for side in sides]
    except LimitExceededError as exc:  # too many pieces of a map with min/max
        return Proof(None, exc.message)
    try:
        symbols = max((m.num_symbols for side in items for m in side if not m.is_undefined), default=0)
        texts = [isl_relation_text(side, symbols) for side in items]
    except NotPresburger as exc:
        return Proof(None, f"isl cannot hold the map: {exc}")
    shapes = {(m.num_dims, m.num_results) for side in items for m in side}
    if len(shapes) > 1:
        return Proof(False, f"arities differ: {sorted(shapes)}")
    num_dims = items[0][0].num_dims
    try:
        answer = cast("Answer", run_isolated(  # maps.isl_decision.decide's answer, through pickle
            _DECIDE, question, texts, num_dims, symbols, what="an isl proof", limit="PROOF_SECONDS", fork=False
        ))
    except TimeLimitError:
        return Proof(None, f"isl did not finish within {limits.PROOF_SECONDS:g} s (limits.PROOF_SECONDS)")
    except ChildDied as exc:
        return Proof(None, f"the isl server stopped ({exc.how})")
    holds, reason, witness = answer
    return Proof(holds, reason, witness)


def prove_includes(outer: Maps, inner: Maps) -> Proof:
    """Whether the relation of ``inner`` is inside the relation of ``outer`` (each one
    map or a set of maps, their union); the witness of a disproof is a pair of
    ``inner`` that ``outer`` lacks."""
    return _ask("includes", outer, inner)


def prove_equal(a: Maps, b: Maps) -> Proof:
    """Whether ``a`` and ``b`` (each one map or a set of maps, their union) have the same
    relation; the witness of a disproof is a pair of one that the other lacks."""
    return _ask("equal", a, b)


def prove_empty(maps: Maps) -> Proof:
    """Whether the relation of ``maps`` is empty (no point of the domain satisfies the
    constraints); the witness of a disproof is one of its pairs."""
    return _ask("empty", maps)
