"""What XLA proved of a ``while`` loop, as written in its ``backend_config``.

XLA's compiler analyses each loop and writes what it found into the while's
``backend_config`` (kept by the HLO import as ``hlo_indexing.backend_config``)::

    backend_config={"known_trip_count":{"n":"8"},"known_init_step":{"init":"0","step":"1"},
                    "known_induction_variable":{"tuple_index":"0"}}

(integers as strings, as protobuf's JSON writes 64-bit integers). In compiled HLO the
loop's condition compares inside a fusion and the carries' inits come from the caller,
so this is often the only place the trip count can be read.
:func:`known_loop` reads and checks it; :mod:`hlo_indexing.ops.loops` decides what to
trust.

``tuple_index`` counts the top-level elements of the carry tuple; XLA's translator
flattens nested tuples into one operand per array, and the import then records the
arrays per element (``hlo_indexing.tuple_arrays``), through which the index is mapped.

Example::

    known_loop(while_op)   # KnownLoop(trip_count=8, induction=0, init=0, step=1)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.hlo_import import BACKEND_CONFIG_ATTR, TUPLE_ARRAYS_ATTR
from hlo_indexing.dialect_glue.op_attrs import invalid

#: The fields of a while's ``backend_config`` read here.
KNOWN_FIELDS = ("known_trip_count", "known_induction_variable", "known_init_step")

_INTEGER = re.compile(r"-?\d{1,19}")


@dataclass(frozen=True)
class KnownLoop:
    """What a while's ``backend_config`` says: the trip count, the operand index of the
    induction carry (flattened as the op's operands are) and that carry's init and
    step; each None when not written."""

    trip_count: int | None
    induction: int | None
    init: int | None
    step: int | None


def known_loop(op: OpLike) -> KnownLoop | None:
    """The :class:`KnownLoop` of ``op`` (a ``while``), or None when it has no
    ``backend_config`` or one with none of :data:`KNOWN_FIELDS`. Raises
    :class:`~hlo_indexing.errors.InvalidAttributeError` naming the attribute when the
    config is not a JSON object, a field is not an object of integers (numbers or
    decimal strings), the trip count is negative, the step zero, or the induction
    variable is not a top-level element of the carries that is a scalar integer."""
    operation = op.operation
    if BACKEND_CONFIG_ATTR not in operation.attributes:
        return None
    attribute = operation.attributes[BACKEND_CONFIG_ATTR]
    if not isinstance(attribute, ir.StringAttr):
        raise invalid(operation, BACKEND_CONFIG_ATTR, "is not a string")
    try:
        config = json.loads(attribute.value)
    except ValueError as exc:
        raise invalid(operation, BACKEND_CONFIG_ATTR, f"is not JSON ({exc})") from None
    if not isinstance(config, dict) or not any(field in config for field in KNOWN_FIELDS):
        return None
    trip_count = _field(operation, config, "known_trip_count", "n")
    index = _field(operation, config, "known_induction_variable", "tuple_index")
    init = _field(operation, config, "known_init_step", "init")
    step = _field(operation, config, "known_init_step", "step")
    if trip_count is not None and trip_count < 0:
        raise invalid(operation, BACKEND_CONFIG_ATTR, f"has a negative known_trip_count ({trip_count})")
    if step == 0:
        raise invalid(operation, BACKEND_CONFIG_ATTR, "has a known_init_step whose step is 0")
    induction = None if index is None else _induction_operand(operation, index)
    return KnownLoop(trip_count, induction, init, step)


def _field(operation: ir.Operation, config: dict, name: str, key: str) -> int | None:
    """Integer ``config[name][key]``; None when ``name`` is absent."""
    if name not in config:
        return None
    value = config[name].get(key) if isinstance(config[name], dict) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    raise invalid(operation, BACKEND_CONFIG_ATTR, f"has a {name} without an integer {key!r} ({config[name]!r})")


def _induction_operand(operation: ir.Operation, index: int) -> int:
    """The operand index of top-level carry element ``index``, checked to be one scalar
    integer."""
    operands = list(operation.operands)
    if TUPLE_ARRAYS_ATTR in operation.attributes:
        arrays = list(ir.DenseI64ArrayAttr(operation.attributes[TUPLE_ARRAYS_ATTR]))
    else:
        arrays = [1] * len(operands)
    if not 0 <= index < len(arrays):
        raise invalid(
            operation, BACKEND_CONFIG_ATTR,
            f"has a known_induction_variable tuple_index {index} out of the {len(arrays)} carries",
        )
    position = sum(arrays[:index])
    value_type = operands[position].type if arrays[index] == 1 and position < len(operands) else None
    if not (
        isinstance(value_type, ir.RankedTensorType)
        and value_type.rank == 0
        and isinstance(value_type.element_type, ir.IntegerType)
        and ir.IntegerType(value_type.element_type).width > 1
    ):
        what = value_type if value_type is not None else f"{arrays[index]} arrays"
        raise invalid(
            operation, BACKEND_CONFIG_ATTR,
            f"has a known_induction_variable tuple_index {index} whose carry is not a scalar integer ({what})",
        )
    return position
