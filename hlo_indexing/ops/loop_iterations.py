"""Exact maps of a counted loop, with the iteration number as a variable.

A counted ``while`` (:class:`~hlo_indexing.ops.loops.Counted`) runs iterations ``t`` in
``[0, n - 1]``; iteration ``t`` reads the carries at *boundary* ``t`` (the inits at
boundary 0) and leaves them at boundary ``t + 1``. ``M[c][a]`` are the body's maps
from new carry ``c`` to carry ``a`` over ``c``'s index space plus ``t``
(:meth:`~hlo_indexing.ops.regions.RegionIndexing.iteration_output_to_input`).
``R[c][b]`` maps carry ``c`` at boundary ``tau`` (a trailing dimension in ``[0, n]``) to
the elements of init ``b`` it reads:

- a pass-through carry (the body returns its argument) and the induction carries read
  their own init, at every boundary;
- a carry that keeps every element (``M[c][c]`` holds the identity: an accumulator, or
  a stacked output written by ``dynamic_update_slice`` at ``t``) reads its init and what
  any iteration ``t < tau`` read into it: ``M[c][a]`` at ``t`` composed with ``R[a]``
  at boundary ``t``; its other own maps (``v.at[i].set(f(v[i]))``) compose with ``R[c]``
  itself at boundary ``t`` up to the fixed point (else it is read as mixing);
- a carry the body rewrites whole (``M[c][c]`` empty) reads its init at boundary 0 and,
  at ``tau >= 1``, what iteration ``tau - 1`` read into it;
- a carry that mixes its own elements (any other ``M[c][c]``, e.g. an RNN's state
  ``tanh(w @ h + x)``) may read any element of its init, what the last iteration
  ``tau - 1`` read into the element itself and, at every element, what an iteration
  ``t < tau - 1`` read into *any* element of it: the iterations stay ordered, the
  elements of earlier iterations are over-approximated.

Result ``r`` is ``R[r]`` at boundary ``n``. This is exact for carries of the first
three kinds when the body's maps are (e.g. a scan's stacked output row ``j`` reads row
``j`` of its input and, through the carry, rows ``0..j - 1``); a result that depends on
a mixing carry, or on more than :data:`MAX_MAPS` maps of one init (then read whole),
comes with the note saying so (:data:`MIXED`, :data:`CAPPED`). Other loops (carries
depending on each other in a cycle, a map left with runtime variables) get ``None``:
the caller falls back to its closure (:mod:`hlo_indexing.ops.loops`).
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose, eliminate_equal_symbols, remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap, RangeLike
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.map_builders import dims, make_map, syms
from hlo_indexing.ops.regions import ArgumentReached, MapSets, RegionIndexing
from hlo_indexing.ops.rule import OpInfo

#: Cap on the maps kept per carry and init (then: the whole init).
MAX_MAPS = 16

#: Why the maps of a counted loop over-approximate (the ``note`` of its entries).
MIXED = (
    "a carry mixes its own elements (e.g. an RNN's state): what its earlier iterations read is read "
    "through any of its elements"
)
CAPPED = f"more than {MAX_MAPS} maps of one carry: its init is read whole"


def _identity(context: ir.Context, shape: tuple, count: int) -> IndexingMap:
    """``(x..., tau) -> (x...)`` with ``tau`` in ``[0, count]``."""
    return make_map(context, list(shape) + [count + 1], dims(len(shape), context))


KEEPS, REWRITES, MIXES = "keeps", "rewrites", "mixes"


def _lift(m: IndexingMap, count: int, mode: str) -> IndexingMap:
    """``m`` (over ``(x..., t)``) as a map over ``(x..., tau)`` whose results are the
    carry index and the boundary ``t`` it is read at: ``tau - 1`` (``REWRITES``), or a
    range variable below ``tau``; for ``MIXES`` ``x`` is any element (range variables)
    and ``t`` below ``tau - 1`` (the last iteration is lifted as ``REWRITES``)."""
    context = m.context
    n_x = m.num_dims - 1
    d = dims(n_x + 1, context)
    tau = d[n_x]
    extra = n_x if mode == MIXES else 0
    s = syms(m.num_symbols + 1 + extra, context)
    x = s[m.num_symbols + 1 :] if mode == MIXES else d[:n_x]
    t: ax.AffineExpr
    ranges: list[RangeLike] = list(m.range_vars)
    if mode == REWRITES:
        t = tau - 1
        constraints = {tau: Interval(1, count)}
    else:
        t = s[m.num_symbols]
        constraints = {tau - t: Interval(2 if mode == MIXES else 1, count)}
        ranges.append((0, count - 1))
    if mode == MIXES:
        ranges += list(m.dim_ranges[:n_x])
    new_dims = list(x) + [t]
    iterations = m.dim_ranges[n_x]  # narrower than [0, count - 1] where simplifying bounded t (a clamp's piece)
    if iterations != Interval(0, count - 1):
        t_expr = ax.typed(t)
        constraints[t_expr] = constraints[t_expr].intersect(iterations) if t_expr in constraints else iterations
    for expr, interval in m.constraints.items():
        key = ax.typed(ax.substitute(expr, new_dims, s[: m.num_symbols]))
        constraints[key] = constraints[key].intersect(interval) if key in constraints else interval
    results = [ax.substitute(e, new_dims, s[: m.num_symbols]) for e in m.results] + [t]
    return make_map(context, list(m.dim_ranges[:n_x]) + [(0, count)], results, ranges, (), constraints)


def _compose(first: IndexingMap, then: IndexingMap) -> IndexingMap:
    return remove_unused_symbols(compose(first, then).simplify())


def iterated_maps(
    info: OpInfo, result_index: int, inductions: tuple[tuple[int, int, int], ...], count: int
) -> tuple[list[list[IndexingMap]], str] | None:
    """Output -> input maps of result ``result_index`` of a counted loop (module
    docstring), one list per operand, and why they over-approximate ('' when exact:
    :data:`MIXED`, :data:`CAPPED`); None when the loop is not of the handled form.
    ``inductions`` and ``count`` are the loop's :class:`~hlo_indexing.ops.loops.Counted`."""
    op, context, regions = info.op.operation, info.context, info.regions
    if regions is None:
        return None
    loop = regions.memo(("counted loop", op), lambda: _CountedLoop(info, regions, inductions, count))
    try:
        order = _order(loop.load, result_index, loop.fixed, info.num_operands, loop.doomed)
    except _NotHandled:
        return None
    if order is None:
        return None
    notes: list[str] = []
    for c in order:
        notes.extend(note for note in loop.settle(c) if note not in notes)
    shape = info.result(result_index)
    d = dims(len(shape), context)
    final = make_map(context, shape, d + [ax.constant(count, context)])
    result_maps = [
        list({eliminate_equal_symbols(_compose(final, m)) for m in loop.reads[result_index][b] if not m.is_known_empty()})
        for b in range(info.num_operands)
    ]
    return result_maps, "; ".join(notes)


class _CountedLoop:
    """What the results of one counted loop share: the body's maps of each carry
    (``maps``, loaded for the carries some result depends on), their modes, and
    ``R[c]`` (``reads``) with the notes it made, computed once per carry whichever
    result asks first (``R[c]`` depends on the carries ``c`` reads, not on the result)."""

    def __init__(self, info: OpInfo, regions: RegionIndexing, inductions: tuple[tuple[int, int, int], ...], count: int):
        op = info.op.operation
        self.info, self.regions, self.inductions, self.count = info, regions, inductions, count
        self.body = op.regions[1]
        carries = info.num_operands
        terminator = self.body.blocks[0].operations[-1]
        passing = {a for a in range(carries) if terminator.operands[a] == self.body.blocks[0].arguments[a]}
        self.fixed = passing | {k for k, _start, _step in inductions}
        self.maps: dict[int, MapSets] = {}
        self.modes: dict[int, str] = {}
        self.updates: dict[int, set] = {}  # a KEEPS carry's own maps besides the identity
        self.reads: dict[int, list[set]] = {}
        self.notes: dict[int, tuple[str, ...]] = {}
        self.doomed: set[int] = set()  # carries from which every order search fails (:func:`_order`)
        for a in self.fixed:
            self.reads[a] = [set() for _ in range(carries)]
            self.reads[a][a] = {_identity(info.context, info.operand(a), count)}

    def load(self, c: int, stop: frozenset[int] = frozenset()) -> MapSets | None:
        """The body's maps of carry ``c`` (computed once); raises ``_NotHandled``. None,
        without them, as soon as the body's walk finds that carry ``c`` reads one of
        ``stop`` (its maps of it are not known empty)."""
        if c not in self.maps:
            info, context, n = self.info, self.info.context, self.count
            try:
                per = self.regions.iteration_output_to_input(self.body, c, self.inductions, n, stop)
            except ArgumentReached:
                return None
            except HloIndexingError:  # e.g. tuples in the body: the caller's closure copes
                raise _NotHandled from None
            if any(m.is_undefined or m.runtime_vars for ms in per for m in ms):
                raise _NotHandled
            own = {m for m in per[c] if not m.is_known_empty()}
            shape = info.result(c)
            identity = make_map(context, list(shape) + [n], dims(len(shape), context))
            self.maps[c], self.modes[c] = per, REWRITES if not own else KEEPS if identity in own else MIXES
            self.updates[c] = own - {identity}
        return self.maps[c]

    def settle(self, c: int) -> tuple[str, ...]:
        """Compute ``R[c]`` once (the carries it reads settled before: :func:`_order`);
        the notes it made (:data:`MIXED`, :data:`CAPPED`)."""
        if c not in self.notes:
            info, n, mode = self.info, self.count, self.modes[c]
            mixed = mode == MIXES
            found = _carry_reads(info, c, mode, self.maps[c], self.reads, n)
            if mode == KEEPS and self.updates[c]:
                settled = _with_updates(found, [_lift(m, n, KEEPS) for m in self.updates[c]])
                # when the carry's updates of itself do not settle, it is read as mixed
                mixed = settled is None
                found = settled if settled is not None else _carry_reads(info, c, MIXES, self.maps[c], self.reads, n)
            shape = info.result(c)
            self.reads[c] = [_capped(info.context, shape, n, info.operand(b), s) for b, s in enumerate(found)]
            capped = any(len({m for m in s if not m.is_known_empty()}) > MAX_MAPS for s in found)
            self.notes[c] = tuple(note for note, made in ((MIXED, mixed), (CAPPED, capped)) if made)
        return self.notes[c]


def _carry_reads(info: OpInfo, c: int, mode: str, per: tuple, reads: dict, n: int) -> list[set]:
    """What carry ``c`` at boundary ``tau`` reads of each init, from its init and from
    what iterations read into it from the other carries (module docstring)."""
    context, shape = info.context, info.result(c)
    found: list[set] = [set() for _ in range(info.num_operands)]
    start = _identity(context, shape, n)
    if mode == REWRITES:
        start = start.add_constraint(dims(len(shape) + 1, context)[len(shape)], Interval(0, 0))
    elif mode == MIXES:
        start = make_map(context, list(shape) + [n + 1], syms(len(shape), context), shape)
    found[c].add(start)
    for a, per_a in enumerate(per):
        if a == c:
            continue
        for m in per_a:
            if m.is_known_empty():
                continue
            lifts = [_lift(m, n, mode)] + ([_lift(m, n, REWRITES)] if mode == MIXES else [])
            for lifted in lifts:
                for b, inner in enumerate(reads[a]):
                    found[b].update(_compose(lifted, then) for then in inner)
    return found


#: Rounds of a carry's updates of itself (``v.at[i].set(f(v[i]))``) composed before
#: giving up on their fixed point.
MAX_UPDATE_ROUNDS = 4


def _with_updates(base: list[set], updates: list[IndexingMap]) -> list[set] | None:
    """The least fixed point of ``R = base | updates o R`` (an iteration ``t < tau``
    updating elements of the carry from its own value at boundary ``t``), or None."""
    current = [set(s) for s in base]
    for _ in range(MAX_UPDATE_ROUNDS):
        following = [set(s) for s in base]
        for update in updates:
            for b, inner in enumerate(current):
                composed = (eliminate_equal_symbols(_compose(update, then)) for then in inner)
                following[b].update(m for m in composed if not m.is_known_empty())
        if following == current:
            return current
        current = following
    return None


def _capped(context: ir.Context, shape: tuple, n: int, target: tuple, maps: set) -> set:
    maps = {m for m in maps if not m.is_known_empty()}
    if len(maps) <= MAX_MAPS:
        return maps
    return {make_map(context, list(shape) + [n + 1], syms(len(target), context), target)}


class _NotHandled(Exception):
    """The body's maps of a carry are not of the handled form."""


def _order(
    load: Callable[[int, frozenset[int]], MapSets | None], start: int, fixed: set, carries: int, doomed: set[int]
) -> list[int] | None:
    """The carries ``start`` depends on (itself included, ``fixed`` ones left out), each
    after those it reads; None on a cycle. ``load(c, stop)`` gives carry ``c``'s body
    maps, or None as soon as they read one of the carries ``stop``.

    ``doomed`` (kept by the caller for the results of one loop, and added to here) holds
    carries from which a cycle is reached: the search from any of them ends with None
    (or ``load`` raising), so a carry that reads one is not searched further, nor
    are its maps made when their walk meets one (``load`` with ``stop=doomed``)."""
    order: list[int] = []
    state: dict[int, str] = {}

    def visit(c: int) -> bool:
        if state.get(c) == "done":
            return True
        if state.get(c) == "active" or c in doomed:
            doomed.add(c)  # on a cycle through the carries being searched
            return False
        state[c] = "active"
        per = load(c, frozenset(doomed))
        if per is None:  # c reads a doomed carry
            doomed.add(c)
            return False
        for a in range(carries):
            if a != c and a not in fixed and any(not m.is_known_empty() for m in per[a]):
                if not visit(a):
                    doomed.add(c)
                    return False
        state[c] = "done"
        order.append(c)
        return True

    return order if start in fixed or visit(start) else None
