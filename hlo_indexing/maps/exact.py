"""Proof by isl: exact equality, inclusion and emptiness of the relations of indexing
maps, with the integer set library (``islpy``, the optional ``exact`` extra:
``pip install hlo-indexing[exact]``).

The relation of a map is ``{(d, f(d, s)) : d, s in their ranges, every constraint
holds}``, symbols (range and runtime variables) projected out, as
:meth:`IndexingMap.relation` enumerates it; the relation of a set of maps is their
union. isl decides equality, inclusion and emptiness of such Presburger relations
exactly, whatever the domain's size: ``floordiv``, ``ceildiv`` and ``mod`` by constants
are existentially quantified divisions. Maps isl cannot hold give no proof: a product
of two variables or a division by a variable (semi-affine), or an undefined map.

Every answer is a :class:`Proof`: ``holds`` is True (proven), False (disproven, with a
``witness`` pair in one relation and not in the other) or None (not run, ``reason``
says why: islpy is not installed, or a map is outside Presburger arithmetic). Without
islpy nothing fails: every proof says it was not run.

Example::

    >>> a = IndexingMap.parse("(d0) -> (d0 mod 4), domain: d0 in [0, 3]")
    >>> prove_equal(a, IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]")).holds
    True
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap

__all__ = ["NotPresburger", "Proof", "isl_available", "isl_relation", "prove_empty", "prove_equal", "prove_includes"]


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


#: isl's operation budget per proof (isl counts its elementary steps): a proof that
#: needs more gives up (not proven) instead of running for minutes on maps with many
#: divisions over large ranges.
MAX_OPERATIONS = 2_000_000


@functools.cache
def _context() -> Any:
    """The isl context of every proof, with the :data:`MAX_OPERATIONS` budget."""
    context = _isl().Context()
    context.set_max_operations(MAX_OPERATIONS)
    return context


@functools.cache
def _isl() -> Any:
    """The ``islpy`` module, or None when it is not installed (an optional dependency:
    imported here, on first use)."""
    try:
        import islpy  # optional dependency (the 'exact' extra)
    except ImportError:
        return None
    return islpy


def isl_available() -> bool:
    """Whether ``islpy`` is installed (proofs run)."""
    return _isl() is not None


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


def _map_text(m: IndexingMap) -> str:
    """The isl text of ``m``'s relation (symbols existentially quantified)."""
    dims = [f"d{i}" for i in range(m.num_dims)]
    outs = [f"o{i}" for i in range(m.num_results)]
    head = f"[{', '.join(dims)}] -> [{', '.join(outs)}]"
    if m.is_known_empty():
        return "{ " + head + " : 1 = 0 }"
    conditions = [f"{v.bounds.lower} <= d{i} <= {v.bounds.upper}" for i, v in enumerate(m.dim_vars)]
    conditions += [f"{v.bounds.lower} <= s{i} <= {v.bounds.upper}" for i, v in enumerate(m.symbol_vars)]
    conditions += [f"{c.lower} <= {_expr_text(e)} <= {c.upper}" for e, c in m.constraints.items()]
    conditions += [f"o{i} = {_expr_text(e)}" for i, e in enumerate(m.results)]
    body = " and ".join(conditions) or "1 = 1"
    if m.num_symbols:
        body = f"exists ({', '.join(f's{j}' for j in range(m.num_symbols))} : {body})"
    return "{ " + head + " : " + body + " }"


def _maps(maps: IndexingMap | Iterable[IndexingMap]) -> list[IndexingMap]:
    return [maps] if isinstance(maps, IndexingMap) else list(maps)


def isl_relation(maps: IndexingMap | Iterable[IndexingMap]) -> Any:
    """The ``islpy.Map`` of the union of the relations of ``maps`` (one map or several of
    the same arity). :class:`NotPresburger` for an undefined or semi-affine map, or maps
    of different arities; ``ModuleNotFoundError`` without islpy."""
    isl = _isl()
    if isl is None:
        raise ModuleNotFoundError(_NOT_INSTALLED)
    items = _maps(maps)
    if not items:
        raise NotPresburger("no map: the arity of an empty set is unknown")
    for m in items:
        if m.is_undefined:
            raise NotPresburger(f"an undefined map ({m.reason})")
    arity = {(m.num_dims, m.num_results) for m in items}
    if len(arity) > 1:
        raise NotPresburger(f"maps of different arities {sorted(arity)}")
    relation = None
    for m in items:
        one = isl.Map.read_from_str(_context(), _map_text(m))
        relation = one if relation is None else relation.union(one)
    return relation


def _witness(difference: Any, n_dims: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """One pair of the non-empty isl relation ``difference``."""
    isl = _isl()
    point = difference.wrap().sample_point()
    if point.is_void():
        return None
    size = difference.wrap().dim(isl.dim_type.set)
    values = [point.get_coordinate_val(isl.dim_type.set, i).to_python() for i in range(size)]
    return tuple(values[:n_dims]), tuple(values[n_dims:])


def _relations(*sides: IndexingMap | Iterable[IndexingMap]) -> tuple[list[Any], Proof | None]:
    """The isl relations of ``sides``, or the :class:`Proof` saying why there are none."""
    if not isl_available():
        return [], Proof(None, _NOT_INSTALLED)
    try:
        relations = [isl_relation(side) for side in sides]
    except NotPresburger as exc:
        return [], Proof(None, f"isl cannot hold the map: {exc}")
    spaces = {(r.dim(_isl().dim_type.in_), r.dim(_isl().dim_type.out)) for r in relations}
    if len(spaces) > 1:
        return [], Proof(False, f"arities differ: {sorted(spaces)}")
    return relations, None


def _decide(decide: Any) -> Proof:
    """``decide()`` within isl's operation budget; a proof beyond it is not run."""
    context = _context()
    context.reset_operations()
    try:
        proof: Proof = decide()
    except _isl().Error as exc:
        text = str(exc).lower()
        if "quota" in text or "operations" in text:
            return Proof(None, f"isl gave up after {MAX_OPERATIONS} operations")
        raise
    return proof


def prove_includes(outer: IndexingMap | Iterable[IndexingMap], inner: IndexingMap | Iterable[IndexingMap]) -> Proof:
    """Whether the relation of ``inner`` is inside the relation of ``outer`` (each one
    map or a set of maps, their union); the witness of a disproof is a pair of
    ``inner`` that ``outer`` lacks."""
    return _decide(lambda: _includes(outer, inner))


def _includes(outer: IndexingMap | Iterable[IndexingMap], inner: IndexingMap | Iterable[IndexingMap]) -> Proof:
    relations, failed = _relations(outer, inner)
    if failed is not None:
        return failed
    big, small = relations
    if small.is_subset(big):
        return Proof(True)
    return Proof(False, "not included", _witness(small.subtract(big), small.dim(_isl().dim_type.in_)))


def prove_equal(a: IndexingMap | Iterable[IndexingMap], b: IndexingMap | Iterable[IndexingMap]) -> Proof:
    """Whether ``a`` and ``b`` (each one map or a set of maps, their union) have the same
    relation; the witness of a disproof is a pair of one that the other lacks."""
    return _decide(lambda: _equal(a, b))


def _equal(a: IndexingMap | Iterable[IndexingMap], b: IndexingMap | Iterable[IndexingMap]) -> Proof:
    relations, failed = _relations(a, b)
    if failed is not None:
        return failed
    first, second = relations
    if first.is_equal(second):
        return Proof(True)
    n_dims = first.dim(_isl().dim_type.in_)
    extra = first.subtract(second)
    if not extra.is_empty():
        return Proof(False, "the first has a pair the second lacks", _witness(extra, n_dims))
    return Proof(False, "the second has a pair the first lacks", _witness(second.subtract(first), n_dims))


def prove_empty(maps: IndexingMap | Iterable[IndexingMap]) -> Proof:
    """Whether the relation of ``maps`` is empty (no point of the domain satisfies the
    constraints); the witness of a disproof is one of its pairs."""
    return _decide(lambda: _empty(maps))


def _empty(maps: IndexingMap | Iterable[IndexingMap]) -> Proof:
    relations, failed = _relations(maps)
    if failed is not None:
        return failed
    (relation,) = relations
    if relation.is_empty():
        return Proof(True)
    return Proof(False, "not empty", _witness(relation, relation.dim(_isl().dim_type.in_)))
