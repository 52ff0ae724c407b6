"""The block index functions of a Mosaic kernel as piecewise-affine values of its grid.

:func:`block_indices` interprets an :class:`~hlo_indexing.dialect_glue.mosaic.IndexFunction`
(the ops Pallas emits for a ``BlockSpec``'s index map) over a
:class:`~hlo_indexing.maps.piecewise.Space`: grid index ``k`` is dimension ``d_k``, each
op maps the :data:`~hlo_indexing.maps.piecewise.Cases` of its operands to those of its
result. Followed exactly: integer constants and casts, ``addi subi muli``, ``divsi
remsi`` (rounding toward zero; ``jnp``'s ``//`` and ``%`` add a sign test, interpreted
like any other, so ``i // 2`` ends as ``d0 floordiv 2``), ``minsi maxsi``, ``math.absi``,
signed ``cmpi``, ``select``, and ``andi ori xori`` of truth values. Anything else (a
load from a scalar-prefetch ref, a product of two grid-dependent values, an unsigned
comparison, more cases than ``limits.MAX_INDEX_MAP_CASES``) becomes an unknown named
after the op: a map that needs it says why it cannot be exact.

Example: ``lambda i, j: (jnp.where(i > j, j, 0), i // 2)`` over a grid ``(4, 4)`` gives
``((d0 - d1 in [1, 3]: d1), (otherwise: 0))`` and ``(d0 floordiv 2)``.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue.mosaic import IndexFunction, IndexStep
from hlo_indexing.maps.piecewise import Cases, NotAffine, Space, TooManyCases, is_truth

_ARITHMETIC = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.divsi": "div", "arith.remsi": "rem",
    "arith.minsi": "min", "arith.maxsi": "max", "math.absi": "abs",
}
#: ``arith.cmpi`` predicates, signed ones only (grid indices are never negative, but
#: differences of them are).
_COMPARISONS = {0: "eq", 1: "ne", 2: "lt", 3: "le", 4: "gt", 5: "ge"}
_LOGIC = {"arith.andi": "and", "arith.ori": "or", "arith.xori": "xor"}
#: Integer casts: the value is unchanged (grid and block indices fit in 32 bits).
_CASTS = frozenset({"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"})


def block_indices(function: IndexFunction, space: Space) -> list[Cases]:
    """The block index of every block dimension as integer cases over ``space`` (whose
    dimensions are the grid indices, the function's first arguments); an argument past
    the grid (a scalar-prefetch ref) is read as an unknown."""
    grid_rank = len(space.dim_ranges)
    values: list[Cases | None] = [space.dim(k) if k < grid_rank else None for k in range(function.num_arguments)]
    for step in function.steps:
        values.append(_step(step, values, space, grid_rank))
    results = []
    for position, number in enumerate(function.results):
        value = values[number]
        results.append(space.unknown(f"block index {position}, a ref") if value is None else space.as_integer(value))
    return results


def _step(step: IndexStep, values: list[Cases | None], space: Space, grid_rank: int) -> Cases:
    """The cases of one op's result; an unknown named after the op when it cannot be followed."""
    refs = [number - grid_rank for number in step.operands if values[number] is None]
    if refs:
        return space.unknown(f"{step.name} of scalar-prefetch operand {refs[0]}")
    operands = [value for value in (values[number] for number in step.operands) if value is not None]
    try:
        return _rule(step, operands, space)
    except NotAffine as reason:
        return space.unknown(f"{step.name} ({reason})")
    except TooManyCases:
        return space.unknown(f"{step.name} (more cases than limits.MAX_INDEX_MAP_CASES)")


def _rule(step: IndexStep, operands: list[Cases], space: Space) -> Cases:
    name = step.name
    if name == "arith.constant":
        if step.attribute is None:
            raise NotAffine("not an integer constant")
        return space.constant(step.attribute)
    if name in _CASTS:
        return operands[0]
    if name in _ARITHMETIC:
        return space.arithmetic(_ARITHMETIC[name], [space.as_integer(v) for v in operands])
    if name == "arith.cmpi":
        kind = _COMPARISONS.get(int(step.attribute)) if step.attribute is not None else None
        if kind is None:
            raise NotAffine("an unsigned comparison")
        return space.compare(kind, operands[0], operands[1])
    if name == "arith.select":
        predicate, if_true, if_false = operands
        if not is_truth(predicate):
            raise NotAffine("a predicate that is not a truth value")
        return space.select(predicate, [if_false, if_true])
    if name in _LOGIC:
        if not all(is_truth(v) for v in operands):
            raise NotAffine("bitwise arithmetic")
        return space.logic(_LOGIC[name], operands)
    raise NotAffine("not an integer operation the analysis follows")
