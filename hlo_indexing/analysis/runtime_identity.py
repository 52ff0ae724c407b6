"""Runtime variables that read one value: one variable in a fused map.

A scan step compiled by XLA reads row ``i`` of a carry and writes it back at row ``i``:
``dynamic_update_slice(x, f(dynamic_slice(x, i)), i)``. Each op's map has its own
runtime variable for ``i`` (``rt0`` for the slice's start, ``rt1`` for the update's), so
their composition reads "row ``rt0`` for output row ``d0 = rt1``": any row, where the
program reads row ``d0``. Both starts are the same scalar clamped to the same range,
hence the same value.

The fused walk tags the runtime variables of ``dynamic_slice`` and
``dynamic_update_slice`` with the value they read (:func:`tag_runtime_variables`; their
start indices are scalars), a composed map makes the variables with one tag and one
range a single variable (:func:`merge_runtime_variables`), and the tags are taken off
the maps handed out (:func:`untag_runtime_variables`). The tag is a suffix of the
variable's origin after :data:`TAG`, so a map's text and memo keys stay apart for
different values, and the origin (``operand 1``) comes back unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import remove_unused_symbols, substitute_symbols
from hlo_indexing.maps.indexing_map import IndexingMap, Variable

#: Separates a runtime variable's origin from the tag of the value it reads.
TAG = "\x00value "
#: The ops whose runtime variables are clamped scalar starts (tagged).
TAGGED_OPS = frozenset({"dynamic_slice", "dynamic_update_slice"})
_OPERAND = re.compile(r"operand (\d+)")


def tag_runtime_variables(m: IndexingMap, serial_of_operand: Callable[[int], int]) -> IndexingMap:
    """``m`` (a map of a ``dynamic_slice`` or ``dynamic_update_slice``) with each runtime
    variable read from ``operand k`` tagged with ``serial_of_operand(k)``, the number of
    the value that operand is (equal numbers: the same value)."""
    if not m.runtime_vars:
        return m
    tagged = []
    for variable in m.runtime_vars:
        match = _OPERAND.fullmatch(variable.origin)
        if match is None:
            return m  # not a start read from one operand: left alone
        serial = serial_of_operand(int(match.group(1)))
        tagged.append(Variable(variable.bounds, variable.name, f"{variable.origin}{TAG}{serial}"))
    return m.replace(runtimes=tagged)


def merge_runtime_variables(m: IndexingMap) -> IndexingMap:
    """``m`` with the runtime variables of one tag and one range made one (the first);
    ``m`` itself when no two are."""
    variables = m.runtime_vars
    if len(variables) < 2 or m.is_undefined:
        return m
    first: dict[tuple[str, int, int], int] = {}
    replaced: dict[int, int] = {}
    for j, variable in enumerate(variables):
        _, separator, tag = variable.origin.partition(TAG)
        if not separator:
            continue
        key = (tag, variable.bounds.lower, variable.bounds.upper)
        if key in first:
            replaced[j] = first[key]
        else:
            first[key] = j
    if not replaced:
        return m
    context = m.context
    offset = len(m.range_vars)
    symbols = [ax.symbol(k, context) for k in range(m.num_symbols)]
    for j, kept in replaced.items():
        symbols[offset + j] = symbols[offset + kept]
    return remove_unused_symbols(substitute_symbols(m, symbols).simplify(remember=False), remember=False)


def untag_runtime_variables(m: IndexingMap) -> IndexingMap:
    """``m`` with its runtime variables' origins as the ops gave them (tags removed)."""
    if not any(TAG in v.origin for v in m.runtime_vars):
        return m
    plain = [Variable(v.bounds, v.name, v.origin.partition(TAG)[0]) for v in m.runtime_vars]
    return m.replace(runtimes=plain)
