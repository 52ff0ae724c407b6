"""Control flow: ``while`` loops and ``case``/``if``.

``while`` (carries ``c0..cN``; ``cond`` and ``body`` take the carries, ``body`` returns
the new ones; the body's maps come from the region hook, :mod:`hlo_indexing.ops.regions`):

- a *pass-through* carry (the body returns its own argument) is its init: identity;
- a *counted* loop (an induction carry with a constant init, a constant step added by
  the body and a ``compare`` against a constant in ``cond``: how JAX lowers ``scan``
  and ``fori_loop``; or, in compiled HLO, the trip count XLA wrote in the loop's
  ``backend_config``: :mod:`hlo_indexing.ops.counted_loops`) is composed over its iterations with the iteration number as a
  variable (:mod:`hlo_indexing.ops.loop_iterations`): a stacked output written by
  ``dynamic_update_slice`` at the induction variable reads iteration ``i`` of the
  inputs sliced at ``i``, a carry reads every earlier iteration;
- otherwise one iteration maps new carry ``r`` to carry ``a`` through ``M[r][a]`` (runtime
  variables read as range variables over every value they may take), and result ``r``
  reads init ``a`` through ``S_n[a]``, ``S_0 = {identity on r}``, ``S_(k+1)[a] = union
  over b of S_k[b] composed with M[b][a]``: after the trip count ``n`` when it is known,
  else for every ``k`` up to the fixed point plus, because whether the loop stops
  depends on them, every element of the carries ``cond`` reads (and of what they read)
  at every result element: a sound answer, not unknown. A set growing past
  ``MAX_MAPS`` maps, or not settling within ``MAX_STEPS`` steps, reads the whole carry.
  A counted loop's steps end when its maps settle or repeat (then the step ``n`` lands
  on is known); past ``MAX_COUNTED_STEPS`` steps without either, it reads every carry
  it may depend on, whole.

Input -> output maps are the exact inverses of the output -> input ones.

``case``/``if``: a result reads the branch index (predicate) at every element and, in
each value the branches capture (JAX's ``lax.cond`` branches read the values defined
before the op directly; they are the op's operands after its own,
:func:`~hlo_indexing.dialect_glue.call_like.operand_values`), the union of the
branches' maps (runtime offsets read as every value they may take). A ``while`` whose
regions capture values is *unknown* with that reason, as is every op with a body
without the region hook.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import captured_values
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.algebra import compose, eliminate_equal_symbols, remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.memo import memoized
from hlo_indexing.ops.counted_loops import loop_form, terminator
from hlo_indexing.ops.inversion import invert_direct
from hlo_indexing.ops.map_builders import dims, make_map, scalar_map, syms
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, UnknownIndexing
from hlo_indexing.ops.loop_iterations import iterated_maps
from hlo_indexing.ops.regions import RegionIndexing

#: Cap on the maps kept per carry, and on the steps composed, before the whole carry.
MAX_MAPS = 16
MAX_STEPS = 64
#: Cap on the steps of a counted loop composed one by one (its maps settling or repeating
#: end it sooner; a count of 10**9 must not take 10**9 steps).
MAX_COUNTED_STEPS = 1024


def _whole(context: ir.Context, space: tuple, target: tuple) -> IndexingMap:
    return make_map(context, space, syms(len(target), context), target)


class _Iteration:
    """One iteration of a loop's body, shared by the loop's results: ``M[r][a]`` (new
    carry ``r`` -> carry ``a``, runtime variables read as range variables, computed for a
    carry the first time it is asked for), the carries read whole (``whole``: without a
    trip count, those the condition reads and every carry they are computed from) and,
    per carry ``b`` and map ``f`` to it, what one more iteration makes of ``f``: ``f``
    composed with ``M[b][a]`` for every other carry ``a`` (results of the same shape
    reach the same maps, and a fixed point meets its maps again at every step)."""

    def __init__(self, info: OpInfo, regions: RegionIndexing, counted: bool):
        op = info.op.operation
        self.body = op.regions[1]
        self.regions = regions
        self.maps: dict[int, list[frozenset[IndexingMap]]] = {}
        self.after: dict[tuple[int, tuple[object, ...]], tuple[tuple[int, frozenset[IndexingMap]], ...]] = {}
        self.whole: frozenset[int] = frozenset()
        if not counted:
            whole: set[int] = set()
            for a, maps in enumerate(regions.output_to_input(op.regions[0], 0)):
                if a not in whole and any(not m.is_known_empty() for m in maps):
                    whole |= _reaching(self, a)
            self.whole = frozenset(whole)

    def __getitem__(self, r: int) -> list[frozenset[IndexingMap]]:
        if r not in self.maps:
            per = []
            for maps in self.regions.output_to_input(self.body, r):
                if any(m.is_undefined for m in maps):
                    raise UnknownIndexing(f"the loop body's maps of carry {r} are unknown")
                per.append(frozenset(f for f in (_without_runtime(m) for m in maps) if not f.is_known_empty()))
            self.maps[r] = per
        return self.maps[r]

    def step(self, b: int, first: IndexingMap) -> tuple[tuple[int, frozenset[IndexingMap]], ...]:
        """``(a, {first then m for m in M[b][a]})`` for each carry ``a`` not read whole
        that new carry ``b`` reads."""
        key = (b, first.memo_key())
        found = self.after.get(key)
        if found is None:
            found = self.after[key] = tuple(
                (a, frozenset(_compose(first, then) for then in then_maps))
                for a, then_maps in enumerate(self[b])
                if then_maps and a not in self.whole
            )
        return found


def _without_runtime(m: IndexingMap) -> IndexingMap:
    """``m`` with its runtime variables read as range variables: every value they may
    take (an over-approximation; e.g. a ``dynamic_slice`` at the induction variable
    reads any slice)."""
    if not m.runtime_vars:
        return m
    return eliminate_equal_symbols(m.replace(ranges=list(m.range_vars) + list(m.runtime_vars), runtimes=[]).simplify())


def _compose(first: IndexingMap, then: IndexingMap) -> IndexingMap:
    """``first`` then ``then``, with the range variables a constraint fixes replaced by
    their value (equal relations get equal maps, so that the iteration settles). One entry
    of the maps' memo for the chain (iterations ask for the same pairs again and again)."""
    if first.is_undefined:
        return first
    key = ("loop-compose", first.memo_key(), then.memo_key())
    return memoized(first.context, key, lambda: eliminate_equal_symbols(remove_unused_symbols(compose(first, then).simplify())))


def _capped(info: OpInfo, space: tuple, a: int, maps: set) -> frozenset[IndexingMap]:
    return frozenset({_whole(info.context, space, info.operand(a))}) if len(maps) > MAX_MAPS else frozenset(maps)


#: Why a loop's maps over-approximate (the ``note`` of its entries).
NOT_COUNTED = (
    "the trip count depends on data: every iteration count is covered, and the carries the condition "
    "reads are read whole"
)
UNSETTLED = f"the loop's maps did not settle within {MAX_STEPS} iterations: the carries reached are read whole"
BRANCH_RUNTIME = "runtime offsets in a branch read as every value"
LONG = (
    f"the loop's maps neither settled nor repeated within {MAX_COUNTED_STEPS} of its iterations: the carries "
    "it may read are read whole"
)
UNORDERED = "iterations composed without their number: runtime offsets in the body read as every value"


def _while_maps(info: OpInfo, result_index: int) -> tuple[list[list[IndexingMap]], str]:
    """The maps of result ``result_index`` per operand, and why they over-approximate
    (''), computed once per analysis (both directions ask for every result)."""
    regions = info.regions
    if regions is None:
        raise UnknownIndexing("the maps of a loop are its body's: ask hlo_indexing.analysis.per_op")
    op = info.op.operation
    if regions.memo(("while captures", op), lambda: bool(captured_values(op))):
        raise UnknownIndexing("the loop's regions read values defined outside it (not operands)")
    return regions.memo(("while", op, result_index), lambda: _with_body_notes(info, regions, result_index))


def _with_body_notes(info: OpInfo, regions: RegionIndexing, result_index: int) -> tuple[list[list[IndexingMap]], str]:
    """:func:`_solve_while`'s maps, its note followed by the notes of the ops of the
    loop's regions (:meth:`~hlo_indexing.ops.regions.RegionIndexing.notes`: a host
    callback or an rng's new state in the body over-approximates the loop's maps too),
    unless the result passes its init through."""
    maps, note = _solve_while(info, regions, result_index)
    op = info.op.operation
    body = op.regions[1]
    if terminator(body).operands[result_index] == body.blocks[0].arguments[result_index]:
        return maps, note
    notes = [note, *regions.notes(body), *regions.notes(op.regions[0])]
    return maps, "; ".join(dict.fromkeys(n for n in notes if n))


def _solve_while(info: OpInfo, regions: RegionIndexing, result_index: int) -> tuple[list[list[IndexingMap]], str]:
    op, context = info.op.operation, info.context
    space = info.result(result_index)
    n = info.num_operands
    body = op.regions[1]
    if terminator(body).operands[result_index] == body.blocks[0].arguments[result_index]:
        identity = make_map(context, space, dims(len(space), context))
        return [[identity] if a == result_index else [] for a in range(n)], ""
    form = regions.memo(("counted loop form", op), lambda: loop_form(op))  # read once for every result
    counted = form.counted
    steps = None if counted is None else counted.count
    if counted is not None and counted.count > 0:
        iterated = iterated_maps(info, result_index, counted.inductions, counted.count)
        if iterated is not None:
            return iterated
    iteration = regions.memo(("while iteration", op), lambda: _Iteration(info, regions, steps is not None))
    whole_carries = iteration.whole
    current = [frozenset({make_map(context, space, dims(len(space), context))}) if a == result_index else frozenset()
               for a in range(n)]
    seen = [set(s) for s in current]
    history = [tuple(current)]  # a counted loop's maps after each number of steps
    after = {history[0]: 0}
    for _ in range(min(steps, MAX_COUNTED_STEPS) if steps is not None else MAX_STEPS):
        composed: list[set[IndexingMap]] = [set() for _ in range(n)]
        for b in range(n):
            if b in whole_carries:
                continue
            for first in current[b]:
                for a, contributed in iteration.step(b, first):
                    composed[a] |= contributed
        following = [_capped(info, space, a, s) for a, s in enumerate(composed)]
        if following == current:
            break
        current = following
        if steps is not None:  # a counted loop's result is what its last step reads, not every step's
            state = tuple(current)
            if state in after:  # the maps repeat from step `start` on, every `period` steps
                start, period = after[state], len(history) - after[state]
                current = list(history[start + (steps - start) % period])
                break
            after[state] = len(history)
            history.append(state)
            continue
        for a in range(n):
            seen[a].update(current[a])
            if len(seen[a]) > MAX_MAPS:
                seen[a] = {_whole(context, space, info.operand(a))}
    else:
        if steps is None:  # not settled: everything reached may be read
            reached_whole = [bool(seen[a]) or a in whole_carries for a in range(n)]
            unsettled = _with_config_note(UNSETTLED, form.config_note)
            return [[_whole(context, space, info.operand(a))] if reached_whole[a] else [] for a in range(n)], unsettled
        if steps > MAX_COUNTED_STEPS:  # neither settled nor repeating: every carry it may read, whole
            reaching = _reaching(iteration, result_index)
            return [[_whole(context, space, info.operand(a))] if a in reaching else [] for a in range(n)], LONG
    if steps is not None:
        return [list(s) for s in current], UNORDERED if steps else ""
    reached = [{_whole(context, space, info.operand(a))} if a in whole_carries else seen[a] for a in range(n)]
    return [list(s) for s in reached], _with_config_note(NOT_COUNTED, form.config_note)


def _with_config_note(note: str, config_note: str) -> str:
    """``note`` followed by why XLA's trip count was not used, if it was not."""
    return f"{note}; {config_note}" if config_note else note


def _reaching(iteration: _Iteration, start: int) -> set[int]:
    """Carries whose inits the value of carry ``start`` may depend on (itself included)."""
    found, todo = {start}, [start]
    while todo:
        b = todo.pop()
        for a, maps in enumerate(iteration[b]):
            if maps and a not in found:
                found.add(a)
                todo.append(a)
    return found


def while_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> input maps of a ``while`` result (see the module docstring)."""
    maps, note = _while_maps(info, result_index)
    return [Entry(tuple(per_operand), note=note) for per_operand in maps]


def while_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Input -> output: the inverses of every result's output -> input maps."""
    target = info.operand(operand_index)
    out = []
    for r in range(info.num_results):
        maps, note = _while_maps(info, r)
        out.append(Entry(tuple(invert_direct(m, target) for m in maps[operand_index]), note=note))
    return out


def case_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """A result reads the branch index (predicate) and, in each captured value, the
    union of what the branches read (module docstring)."""
    return _case_entries(info, result_index)


def _case_entries(info: OpInfo, result_index: int) -> list[Entry]:
    """:func:`case_output_to_input`'s entries, each with the notes of the branches' ops."""
    op = info.op.operation
    captured = captured_values(op)
    maps: list[set[IndexingMap]] = [set() for _ in captured]
    notes: list[str] = []
    if captured:
        if info.regions is None:
            raise UnknownIndexing("the maps of a branch are its body's: ask hlo_indexing.analysis.per_op")
        for region in op.regions:
            try:
                found_per_value = info.regions.values_output_to_input(region, result_index, captured)
            except HloIndexingError as exc:
                raise UnknownIndexing(f"a branch cannot be followed: {exc}") from None
            for k, found in enumerate(found_per_value):
                maps[k].update(_without_runtime(m) for m in found if not m.is_undefined)
                if BRANCH_RUNTIME not in notes and any(m.runtime_vars for m in found):
                    notes.append(BRANCH_RUNTIME)
                unknown = sorted(m.reason for m in found if m.is_undefined)
                if unknown:
                    raise UnknownIndexing(f"a branch's maps are unknown: {unknown[0]}")
    own = len(op.operands)
    if info.regions is not None:
        notes += [n for region in op.regions for n in info.regions.notes(region)]
    note = "; ".join(dict.fromkeys(notes))
    entries = [[scalar_map(info.context, info.result(result_index))]] + [[]] * (own - 1) + [list(m) for m in maps]
    return [Entry(tuple(maps_of), note=note) for maps_of in entries]


def case_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """The branch index reaches every result element; a captured value the inverses of
    :func:`case_output_to_input`'s maps."""
    if operand_index == 0:
        return [[_whole(info.context, (), info.result(r))] for r in range(info.num_results)]
    target = info.operand(operand_index)
    out = []
    for r in range(info.num_results):
        entry = _case_entries(info, r)[operand_index]
        out.append(Entry(tuple(invert_direct(m, target) for m in entry.maps), note=entry.note))
    return out
