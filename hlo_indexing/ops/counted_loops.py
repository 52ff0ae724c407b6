"""Which ``while`` loops are counted, and how many iterations they run.

A loop is *counted* when one carry (the induction variable) has a constant init, the
body adds a constant step to it, and the condition compares it with a constant (how
JAX lowers ``scan`` and ``fori_loop``); the comparison may sit inside a called
computation (XLA's compiled condition compares inside a fusion). The trip count then
follows from the init, the step, the bound and the direction (:func:`loop_form`).

In compiled HLO the inits come from the computation's caller, so the condition alone
does not give the count; XLA's ``backend_config`` says what XLA proved
(:mod:`hlo_indexing.dialect_glue.loop_config`). It is used when the condition cannot
be read, after checking it against what the loop shows: the init when the carry's init
is a constant, the step when the body adds a constant, and the count the condition's
bound gives with that init and step when the condition compares the same carry. A
condition that can be read is never overridden: when both give a count and they
disagree, neither is trusted (the loop is not counted, and its note says why), as when
the config is malformed or does not match the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import call_operands, callee_block
from hlo_indexing.dialect_glue.loop_config import KnownLoop, known_loop
from hlo_indexing.errors import InvalidAttributeError


def constant(value: ir.Value) -> int | None:
    """The integer of a scalar ``constant`` producing ``value``, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or not owner.name.endswith(".constant"):
        return None
    attribute = owner.attributes["value"]
    if not isinstance(attribute, ir.DenseIntElementsAttr) or not ir.DenseIntElementsAttr(attribute).is_splat:
        return None
    return ir.IntegerAttr(ir.DenseIntElementsAttr(attribute).get_splat_value()).value


def terminator(region: ir.Region) -> ir.OpView:
    """The last op of the region's block."""
    return region.blocks[0].operations[-1]


def _increment(value: ir.Value, argument: ir.Value) -> int | None:
    """The constant ``c`` when ``value`` is ``argument + c`` (also computed inside a
    called computation, as JAX's ``fori_loop`` bodies do), else None."""
    op = value.owner
    if isinstance(op, ir.Block):
        return None
    callee = callee_block(op)
    if callee is not None:
        returned = callee.operations[-1].operands[ir.OpResult(value).result_number]
        inner = [a for a, v in zip(callee.arguments, call_operands(op), strict=True) if v == argument]
        return next((c for a in inner if (c := _increment(returned, a)) is not None), None)
    if not op.name.endswith(".add"):
        return None
    lhs, rhs = op.operands
    if lhs == argument:
        return constant(rhs)
    if rhs == argument:
        return constant(lhs)
    return None


def _step(body: ir.Region, k: int) -> int | None:
    """The constant the body adds to carry ``k``, if it does exactly that."""
    return _increment(terminator(body).operands[k], body.blocks[0].arguments[k])


_HOLDS = {
    "LT": lambda i, b: i < b,
    "LE": lambda i, b: i <= b,
    "GT": lambda i, b: i > b,
    "GE": lambda i, b: i >= b,
    "NE": lambda i, b: i != b,
}
_SWAPPED = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "NE": "NE"}


@dataclass(frozen=True)
class Counted:
    """A counted loop of ``count`` iterations: carry ``k`` is ``start + step * t`` at
    iteration ``t`` for each ``(k, start, step)`` of ``inductions`` (the carry ``cond``
    compares first, then any other carry with a constant init that the body increments
    by a constant: JAX's ``fori_loop`` passes ``i`` to its body besides the counter)."""

    inductions: tuple[tuple[int, int, int], ...]
    count: int


@dataclass(frozen=True)
class LoopForm:
    """A loop's :class:`Counted` form (None: not counted) and, when XLA's
    ``backend_config`` gives a trip count that is not used, why (else '')."""

    counted: Counted | None
    config_note: str = ""


def _compare(value: ir.Value) -> tuple[str, ir.Value, ir.Value] | None:
    """``(direction, lhs, rhs)`` of the ``compare`` computing ``value``, also inside a
    called computation (its arguments then read as the call's operands), else None."""
    op = value.owner
    if isinstance(op, ir.Block):
        return None
    callee = callee_block(op)
    if callee is not None:
        found = _compare(callee.operations[-1].operands[ir.OpResult(value).result_number])
        if found is None:
            return None
        passed: dict[ir.Value, ir.Value] = dict(zip(callee.arguments, call_operands(op), strict=True))
        direction, lhs, rhs = found
        return direction, passed.get(lhs, lhs), passed.get(rhs, rhs)
    if not op.name.endswith(".compare"):
        return None
    lhs, rhs = op.operands
    return str(op.attributes["comparison_direction"]).rstrip(">").split()[-1], lhs, rhs


def _condition(op: ir.Operation) -> tuple[int, str, int] | None:
    """``(k, direction, bound)`` when the condition is ``carry k <direction> bound``
    for a constant ``bound``, else None."""
    cond = op.regions[0]
    found = _compare(terminator(cond).operands[0])
    if found is None:
        return None
    direction, lhs, rhs = found
    arguments = list(cond.blocks[0].arguments)
    if lhs in arguments and (bound := constant(rhs)) is not None:
        return arguments.index(lhs), direction, bound
    if rhs in arguments and (bound := constant(lhs)) is not None:
        return arguments.index(rhs), _SWAPPED.get(direction, ""), bound
    return None


def _count(direction: str, start: int, step: int, bound: int) -> int | None:
    """Iterations of ``i = start; while i <direction> bound: i += step``; None when it
    does not stop after a fixed count."""
    holds = _HOLDS.get(direction)
    if holds is None or not step:
        return None
    if not holds(start, bound):
        return 0
    if direction == "NE":
        count, rest = divmod(bound - start, step)
        return None if rest or count <= 0 else count
    last = bound - (1 if direction == "LT" else -1 if direction == "GT" else 0)
    count = (last - start) // step + 1
    if count <= 0 or holds(start + count * step, bound):
        return None  # the step runs away from the bound: no fixed trip count
    return count


def _other_inductions(op: ir.Operation, k: int) -> list[tuple[int, int, int]]:
    """``(j, start, step)`` of every carry ``j != k`` with a constant init that the body
    increments by a constant."""
    body = op.regions[1]
    return [
        (j, first, increment)
        for j, init in enumerate(op.operands)
        if j != k and (first := constant(init)) is not None and (increment := _step(body, j)) is not None
    ]


def counted_loop(op: OpLike) -> Counted | None:
    """The counted form the loop's condition and inits show (module docstring), else None."""
    operation = op.operation
    condition = _condition(operation)
    if condition is None:
        return None
    k, direction, bound = condition
    start, step = constant(operation.operands[k]), _step(operation.regions[1], k)
    if start is None or step is None:
        return None
    count = _count(direction, start, step, bound)
    if count is None:
        return None
    return Counted(((k, start, step), *_other_inductions(operation, k)), count)


def loop_form(op: OpLike) -> LoopForm:
    """The loop's counted form: read from its condition (:func:`counted_loop`), else
    from XLA's ``backend_config`` once checked against the loop (module docstring)."""
    operation = op.operation
    read = counted_loop(operation)
    try:
        known = known_loop(operation)
    except InvalidAttributeError as exc:
        return LoopForm(read, "" if read is not None else f"XLA's backend_config is not used: {exc.message}")
    if known is None or known.trip_count is None:
        return LoopForm(read)
    problem = _mismatch(operation, known, read)
    if problem:
        return LoopForm(None, f"XLA's backend_config is not used: {problem}")
    if read is not None:
        return LoopForm(read)
    inductions: list[tuple[int, int, int]] = []
    if known.induction is not None:
        k = known.induction
        start = known.init if known.init is not None else constant(operation.operands[k])
        step = known.step if known.step is not None else _step(operation.regions[1], k)
        if start is not None and step is not None:
            inductions.append((k, start, step))
        inductions += _other_inductions(operation, k)
    return LoopForm(Counted(tuple(inductions), known.trip_count))


def _mismatch(op: ir.Operation, known: KnownLoop, read: Counted | None) -> str:
    """Why ``known`` (with a trip count) does not match the loop: its init or step
    against the induction carry's constant init and the body's step, its count against
    the count read from the condition; '' when nothing disagrees."""
    n = known.trip_count
    k = known.induction
    if read is not None:
        if read.count != n:
            return f"its known_trip_count {n} is not the {read.count} iterations the condition gives (neither is trusted)"
        start_step = {j: (start, step) for j, start, step in read.inductions}
        if k is not None and k in start_step and (known.init, known.step) not in ((None, None), start_step[k]):
            return f"its known_init_step ({known.init}, {known.step}) of carry {k} is not the loop's {start_step[k]}"
        return ""
    if k is None:
        return ""
    init, step = constant(op.operands[k]), _step(op.regions[1], k)
    if known.init is not None and init is not None and known.init != init:
        return f"its known_init_step init {known.init} is not the constant init {init} of carry {k}"
    if known.step is not None and step is not None and known.step != step:
        return f"its known_init_step step {known.step} is not the step {step} the body adds to carry {k}"
    start, step = (known.init if known.init is not None else init), (known.step if known.step is not None else step)
    condition = _condition(op)
    if condition is not None and condition[0] == k and start is not None and step is not None:
        count = _count(condition[1], start, step, condition[2])
        if count != n:
            given = "no fixed count" if count is None else f"{count} iterations"
            return (
                f"its known_trip_count {n} is not what the condition gives from init {start} and step {step} "
                f"({given}; neither is trusted)"
            )
    return ""
