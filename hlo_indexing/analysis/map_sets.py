"""The set algebra of the fused walk (:mod:`hlo_indexing.analysis.fusion`): sets of
indexing maps composed, united and capped, with the memos that make a big module cheap.

Sets are interned (one object per distinct set), so memo keys compare by identity; the
compose-simplify-clean-up chain has one memo entry per pair of maps (the maps' own
memo, shared across computations); a set is composed once per pair of sets, a table
entry once per distinct set it holds. A map that is a result of the chain (*clean*)
composed after an identity map with its dimensions is itself, so an entry whose maps are
all clean passes unchanged through elementwise ops (:meth:`SetAlgebra.passes_through`).
Example::

    sets = SetAlgebra(max_maps=16)
    sets.compose_sets(frozenset({consumer}), frozenset({producer}))
"""

from __future__ import annotations

from hlo_indexing.analysis.fused_maps import DEFAULT_MAX_EXPR_NODES, Path
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps import algebra, simplifier
from hlo_indexing.maps.indexing_map import IndexingMap, _memoized


def _too_large(m: IndexingMap, max_expr_nodes: int) -> bool:
    """Whether ``m``'s results hold more than ``max_expr_nodes`` expression nodes."""
    if m.is_undefined or m.is_known_empty():
        return False
    total = 0
    for expr in m.results:
        total += ax.node_count(expr)
        if total > max_expr_nodes:
            return True
    return False


#: Per target (argument or result index, element path), the maps to it.
Sets = dict[tuple[int, Path], frozenset]
#: :attr:`Entry.domain` not computed yet.
NOT_COMPUTED = object()


class Entry:
    """A table entry: the sets of one value element, the names of the capped values on
    the way, and (computed on demand, see :meth:`SetAlgebra.domain`) the dimensions every
    map in the sets shares when each is a result of the compose chain, else None. An
    entry is never modified: consumers that add nothing share it."""

    __slots__ = ("sets", "caps", "domain")

    def __init__(self, sets: Sets, caps: frozenset[str], domain: object = NOT_COMPUTED):
        self.sets = sets
        self.caps = caps
        self.domain = domain


class SetAlgebra:
    """The memos of one analysis over map sets: compositions, unions, interned sets, the
    caps' verdicts and the domains of entries (see the module docstring)."""

    def __init__(self, max_maps: int, max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES):
        self.max_maps = max_maps
        self.max_expr_nodes = max_expr_nodes
        self.sets_memo: dict[tuple[frozenset, frozenset], frozenset] = {}
        self.union_memo: dict[tuple[frozenset, frozenset], frozenset] = {}
        self.map_memo: dict[tuple[object, object], IndexingMap] = {}
        self.too_large: dict[frozenset, bool] = {}
        self.clean: dict[int, IndexingMap] = {}  # results of the chain, by identity
        self.identity_flags: dict[IndexingMap, bool] = {}
        self.identities: dict[tuple[int, ...], IndexingMap] = {}
        self.interned: dict[frozenset, frozenset] = {}
        self.set_domains: dict[frozenset, object] = {}
        self.identity_sets: dict[frozenset, object] = {}

    def compose_entry(self, maps: frozenset, sets: Sets) -> Sets:
        """``sets`` with each set composed after ``maps``, empty results dropped: one
        composition per distinct set, the per-target dict built at C speed."""
        memo = self.sets_memo
        composed = {found: memo.get((maps, found)) or self.compose_sets(maps, found) for found in dict.fromkeys(sets.values())}
        out = dict(zip(sets, map(composed.__getitem__, sets.values())))
        if not all(composed.values()):
            out = {target: found for target, found in out.items() if found}
        return out

    def join(self, a: Sets, b: Sets) -> Sets:
        """``a`` and ``b`` with the sets of a target in both united: ``a`` (or ``b``) itself
        when the other adds nothing, else a new dict (copied at C speed, a Python step
        only for targets with two different sets)."""
        if len(a) < len(b):
            a, b = b, a
        unions = {target: self.union(a[target], b[target]) for target in b.keys() & a.keys() if a[target] is not b[target]}
        if all(joined is a[target] for target, joined in unions.items()) and b.keys() <= a.keys():
            return a  # b adds nothing (an operand read again, as chains of binary ops do)
        merged = {**a, **b}
        merged.update(unions)
        return merged

    def domain(self, entry: Entry) -> object:
        """The dimensions shared by every map of ``entry`` when each is a result of the
        compose chain with unnamed dimensions (composing an identity map with the same
        dimensions after it gives it back), else None; computed once per entry."""
        found = entry.domain
        if found is NOT_COMPUTED:
            found = None
            for maps in dict.fromkeys(entry.sets.values()):
                dims = self.set_domain(maps)
                if dims is None or (found is not None and dims != found):
                    found = None
                    break
                found = dims
            entry.domain = found
        return found

    def set_domain(self, maps: frozenset) -> tuple | None:
        """:meth:`domain` of one set (memoized per set)."""
        known = self.set_domains.get(maps, NOT_COMPUTED)
        if known is not NOT_COMPUTED:
            return known  # type: ignore[return-value]
        found: tuple | None = None
        for m in maps:
            chained = self.clean.get(id(m)) if m is not None else None
            dims = chained.dim_vars if chained is not None and chained is m else None
            if dims is None or any(v.name for v in dims) or (found is not None and dims != found):
                found = None
                break
            found = dims
        self.set_domains[maps] = found
        return found

    def passes_through(self, maps: frozenset, entry: Entry) -> bool:
        """Whether composing ``maps`` after each of ``entry``'s sets gives the sets back:
        ``maps`` is one identity map whose dimensions are the entry's :meth:`domain`
        (what :meth:`compose` returns unchanged)."""
        dims = self.identity_sets.get(maps, NOT_COMPUTED)
        if dims is NOT_COMPUTED:
            (only,) = maps if len(maps) == 1 else (None,)
            dims = only.dim_vars if only is not None and self.is_identity(only) else None
            self.identity_sets[maps] = dims
        if dims is None:
            return False
        domain = entry.domain if entry.domain is not NOT_COMPUTED else self.domain(entry)
        return domain is not None and (domain is dims or domain == dims)

    def over_cap(self, found: frozenset) -> bool:
        """Whether a set is over the caps (never when it holds an unknown map)."""
        over = self.too_large.get(found)
        if over is None:
            defined = [m for m in found if m is not None]
            over = not any(m.is_undefined for m in defined) and (
                len(found) > self.max_maps or any(_too_large(m, self.max_expr_nodes) for m in defined)
            )
            self.too_large[found] = over
        return over

    def compose_sets(self, maps: frozenset, found: frozenset) -> frozenset:
        """``{compose(q, m)}`` for ``q`` in ``maps`` (one op's) and ``m`` in ``found``."""
        key = (maps, found)
        composed = self.sets_memo.get(key)
        if composed is None:
            composed = self.sets_memo[key] = self.intern(frozenset(self.compose(q, m) for q in maps for m in found))
        return composed

    def union(self, a: frozenset, b: frozenset) -> frozenset:
        """``a | b`` (memoized: the same sets meet again and again)."""
        key = (a, b)
        joined = self.union_memo.get(key)
        if joined is None:
            joined = self.union_memo[key] = self.intern(a | b)
        return joined

    def compose(self, consumer: IndexingMap, producer: IndexingMap | None) -> IndexingMap:
        """Compose, simplify, remove unused symbols (one memo for the chain); a None
        producer is the identity of a seed."""
        if producer is None:
            return consumer
        if (
            self.clean.get(id(producer)) is producer
            and self.is_identity(consumer)
            and consumer.dim_vars == producer.dim_vars
            and not any(v.name for v in producer.dim_vars)
        ):
            return producer  # composing a result of this chain after the identity gives it back
        key = (consumer._memo_key(), producer._memo_key())
        composed = self.map_memo.get(key)
        if composed is None:
            composed = self.map_memo[key] = _compose(consumer, producer)
            self.clean[id(composed)] = composed
        return composed

    def is_identity(self, m: IndexingMap) -> bool:
        """``(d0, ..., dn) -> (d0, ..., dn)`` with no symbol, constraint or variable name."""
        found = self.identity_flags.get(m)
        if found is None:
            found = self.identity_flags[m] = (
                not m.is_undefined
                and m.num_symbols == 0
                and not m.constraints
                and not any(v.name for v in m.dim_vars)
                and m.affine_map == ir.AffineMap.get_identity(m.num_dims, m.context)
            )
        return found

    def identity(self, shape: tuple[int, ...], context: ir.Context) -> IndexingMap:
        """The identity map of ``shape`` (one object per shape: memo keys then compare by identity)."""
        found = self.identities.get(shape)
        if found is None:
            found = self.identities[shape] = IndexingMap.identity(shape, context=context)
        return found

    def intern(self, maps: frozenset) -> frozenset:
        """One object per distinct set (memo keys then compare by identity)."""
        return self.interned.setdefault(maps, maps)


def _compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """``consumer.compose(producer).simplify().remove_unused_symbols()`` with one entry of
    the maps' memo for the whole chain (it carries compositions across computations and
    is cleared with it), instead of one per step keyed on each intermediate map."""
    return _memoized(
        consumer, ("compose-simplify-clean", consumer._memo_key(), producer._memo_key()), lambda: _chain(consumer, producer)
    )


def _chain(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """Compose, simplify, remove unused symbols (no memo of its own)."""
    simplified = simplifier.simplify(algebra.compose(consumer, producer))
    # Without symbols there is nothing to remove (remove_unused_symbols returns the map).
    return simplified if simplified.num_symbols == 0 else algebra.remove_unused_symbols(simplified)
