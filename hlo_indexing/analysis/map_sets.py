"""The set algebra of the fused walk (:mod:`hlo_indexing.analysis.fusion`): sets of
indexing maps composed, united and capped, with the memos that make a big module cheap.

Sets are interned (one object per distinct set), so memo keys compare by identity; the
compose-simplify-clean-up chain has one memo entry per pair of maps (the maps' own
memo, shared across computations); a set is composed once per pair of sets, a table
entry once per distinct set it holds. A map that is a result of the chain (*clean*)
composed after an identity map with its dimensions is itself, so an entry whose maps are
all clean passes unchanged through elementwise ops (:meth:`SetAlgebra.passes_through`).
Table entries are immutable and shared: a value's entry is merged once per distinct
tuple of parts (the entries it reads and the maps after them, :meth:`SetAlgebra.merge`),
so the walk of a copy of a computation finds every entry made already. Example::

    sets = SetAlgebra(max_maps=16)
    sets.compose_sets(frozenset({consumer}), frozenset({producer}))
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_indexing.analysis.fused_maps import DEFAULT_MAX_EXPR_NODES, Path, element_type, static_shape, whole_value_map
from hlo_indexing.analysis.runtime_identity import merge_runtime_variables
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps import algebra
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.memo import memoized
from hlo_indexing.maps.range_variables import reduce_range_variables


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
#: The sets of a block argument (result) to itself: ``None`` stands for the identity.
SEED: frozenset = frozenset({None})
#: No value capped on the way.
NO_CAPS: frozenset[str] = frozenset()
#: Most entries :meth:`SetAlgebra.merge` remembers (a copy of a computation finds the
#: entries of the previous copies while they are fewer; code that does not repeat
#: itself would otherwise keep every entry of the analysis alive).
MERGED_MEMO_SIZE = 1024


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


#: What :meth:`SetAlgebra.merge` takes per operand (user): its entry, the maps to compose
#: after it (None: the same index) and the names of values capped inside a callee.
Part = tuple[Entry | None, frozenset[IndexingMap] | None, frozenset[str]]


class SetAlgebra:
    """The memos of one analysis over map sets: compositions, unions, interned sets, the
    caps' verdicts, the domains of entries and the merged entries (see the module
    docstring)."""

    def __init__(self, max_maps: int, max_expr_nodes: int = DEFAULT_MAX_EXPR_NODES):
        self.max_maps = max_maps
        self.max_expr_nodes = max_expr_nodes
        self.sets_memo: dict[tuple[frozenset, frozenset], frozenset] = {}
        self.union_memo: dict[tuple[frozenset, frozenset], frozenset] = {}
        self.map_memo: dict[tuple[object, object], IndexingMap] = {}
        self.too_large: dict[frozenset, bool] = {}
        self.clean: dict[int, IndexingMap] = {}  # results of the chain, by identity
        self.identities: dict[tuple[int, ...], IndexingMap] = {}
        self.interned: dict[frozenset, frozenset] = {}
        self.set_domains: dict[frozenset, object] = {}
        self.identity_sets: dict[frozenset, object] = {}
        self.seeds: dict[tuple[int, Path], Entry] = {}
        self.merged: dict[tuple[Part, ...], Entry] = {}
        self.asm_states: dict[ir.Operation, ir.AsmState] = {}

    def seed(self, index: int, path: Path) -> Entry:
        """The entry of element ``path`` of block argument (result) ``index`` to itself,
        one object per analysis (entries are memo keys of :meth:`merge`)."""
        found = self.seeds.get((index, path))
        if found is None:
            found = self.seeds[(index, path)] = Entry({(index, path): SEED}, NO_CAPS, None)
        return found

    def merge(self, value: ir.Value, path: Path, parts: list, targets: Sequence[ir.Value]) -> Entry:
        """The entry of element ``path`` of ``value``: each part ``(entry, maps, caps)``
        is the entry of a value it reads (writes), composed after ``maps`` (None: the
        same index); sets reaching the same target are joined, then capped (the
        capped set becomes one map reading the whole target).

        Memoized on the parts (entries by identity, maps interned) for the whole
        analysis, unless a set was over the caps (the capped map and its note are
        built from ``value``, its name and shape, and from the target's shape): copies
        of a computation, and the ops of a chain that read the same entries, cost a
        lookup. The memo is emptied when it reaches :data:`MERGED_MEMO_SIZE` entries
        (it keeps the entries of blocks already walked alive)."""
        key = tuple(parts)
        found = self.merged.get(key)
        if found is None:
            found, general = self._merge(value, path, parts, targets)
            if general:
                if len(self.merged) >= MERGED_MEMO_SIZE:
                    self.merged.clear()  # bounded: it holds the entries of walked blocks alive
                self.merged[key] = found
        return found

    def _merge(self, value: ir.Value, path: Path, parts: list, targets: Sequence[ir.Value]) -> tuple[Entry, bool]:
        """:meth:`merge` without the memo, and whether the entry is the same for any
        value and targets (no set over the caps).

        A part whose maps change nothing (None, or an identity map after maps that are
        already results of the chain: see :meth:`passes_through`) contributes its
        entry's sets as they are, already checked against the caps; a value whose parts
        add nothing to one part's sets shares that part's entry, so chains of
        elementwise ops cost nothing per target."""
        capped = NO_CAPS
        kept: list[Entry] = []
        fresh: list[Sets] = []
        for entry, maps, caps in parts:
            if caps and caps is not capped:
                capped = capped | caps if capped else caps  # parts mostly share one set of names
            if entry is None:
                continue
            if entry.caps and entry.caps is not capped:
                capped = capped | entry.caps if capped else entry.caps
            if not entry.sets:
                continue
            if maps is None or self.passes_through(maps, entry):
                kept.append(entry)
            else:
                fresh.append(self.compose_entry(maps, entry.sets))
        if not fresh:
            if not kept:
                return Entry({}, capped), True
            first = kept[0]
            if len(kept) == 1 or all(e.sets is first.sets for e in kept):
                return (first if capped == first.caps else Entry(first.sets, capped, first.domain)), True
        dicts = [e.sets for e in kept] + [d for d in fresh if d]
        merged = max(dicts, key=len) if dicts else {}
        for other in dicts:
            if other is not merged:
                merged = self.join(merged, other)
        # A kept entry whose sets hold all the others' (checked against the caps already)
        # is shared, with its domain; when fresh sets joined in, only if none is over.
        holder = next((e for e in kept if merged is e.sets), None)
        if holder is not None and not fresh:
            return (holder if capped == holder.caps else Entry(holder.sets, capped, holder.domain)), True
        domain: object = NOT_COMPUTED
        if not fresh:  # a union of sets of the same known domain keeps it
            first_domain = kept[0].domain
            if first_domain is not NOT_COMPUTED and all(e.domain == first_domain for e in kept):
                domain = first_domain
        checked = self.too_large
        over = [f for f in dict.fromkeys(merged.values()) if f is not SEED and checked.get(f) is not False and self.over_cap(f)]
        if not over:
            if holder is not None:
                return (holder if capped == holder.caps else Entry(holder.sets, capped, holder.domain)), True
            return Entry(merged, capped, domain), True
        replaced = False
        if holder is not None:
            merged = dict(merged)  # kept entries are shared
        for target, found in list(merged.items()):
            if found not in over:
                continue
            if not _is_tuple(value, path) and not _is_tuple(targets[target[0]], target[1]):
                domain_map = IndexingMap.identity(static_shape(value, path), context=value.context)
                index, target_path = target
                merged[target] = frozenset({whole_value_map(static_shape(targets[index], target_path), domain_map)})
                name = self.value_name(value)
                capped = capped | {name + "".join(f"[{k}]" for k in path)}
                replaced = True
        return Entry(merged, capped, NOT_COMPUTED if replaced else domain), False

    def value_name(self, value: ir.Value) -> str:
        """``value.get_name()`` (``%12``, ``%arg3``), numbered by one ``AsmState`` per
        top-level operation for the whole analysis: ``get_name()`` alone numbers every
        value of the module at each call (about 5 ms in a module of 4000 ops)."""
        if not hasattr(value, "get_name"):
            return str(value.type)
        owner = value.owner
        op: ir.Operation = (owner.owner if isinstance(owner, ir.Block) else owner).operation
        while op.parent is not None:
            op = op.parent.operation
        state = self.asm_states.get(op)
        if state is None:
            state = self.asm_states[op] = ir.AsmState(op)  # the key keeps the operation alive as long as its state
        return value.get_name(state)

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
        key = (consumer.memo_key(), producer.memo_key())
        composed = self.map_memo.get(key)
        if composed is None:
            composed = self.map_memo[key] = _compose(consumer, producer)
            self.clean[id(composed)] = composed
        return composed

    def is_identity(self, m: IndexingMap) -> bool:
        """``(d0, ..., dn) -> (d0, ..., dn)`` with no symbol, constraint or variable name."""
        return m.is_identity and not any(v.name for v in m.dim_vars)

    def identity(self, shape: tuple[int, ...], context: ir.Context) -> IndexingMap:
        """The identity map of ``shape`` (one object per shape: memo keys then compare by identity)."""
        found = self.identities.get(shape)
        if found is None:
            found = self.identities[shape] = IndexingMap.identity(shape, context=context)
        return found

    def intern(self, maps: frozenset) -> frozenset:
        """One object per distinct set (memo keys then compare by identity)."""
        return self.interned.setdefault(maps, maps)


def _is_tuple(value: ir.Value, path: Path) -> bool:
    return isinstance(element_type(value.type, path), ir.TupleType)


def _compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """``remove_unused_symbols(compose(consumer, producer).simplify())`` with one entry of
    the maps' memo for the whole chain (it carries compositions across computations and
    is cleared with it), instead of one per step keyed on each intermediate map."""
    if consumer.is_undefined:
        return _chain(consumer, producer)
    key = ("compose-simplify-clean", consumer.memo_key(), producer.memo_key())
    return memoized(consumer.context, key, lambda: _chain(consumer, producer))


def _chain(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """Compose, simplify, remove unused symbols (no memo of its own)."""
    simplified = algebra.compose(consumer, producer, remember=False).simplify(remember=False)
    # Without symbols there is nothing to remove (remove_unused_symbols returns the map).
    if simplified.num_symbols == 0:
        return simplified
    cleaned = algebra.remove_unused_symbols(simplified, remember=False)
    return reduce_range_variables(merge_runtime_variables(cleaned) if len(cleaned.runtime_vars) > 1 else cleaned)
