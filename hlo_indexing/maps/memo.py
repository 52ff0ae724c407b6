"""The one memo of the map algebra: results of composition, simplification and the
fused-map set operations, remembered per MLIR context (big modules compose and simplify
the same maps over and over; a result is only handed out in the context it was made in).

Example::

    >>> context = ir.Context()
    >>> memoized(context, ("answer",), lambda: 42), memoized(context, ("answer",), lambda: 0)
    (42, 42)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import clear_context_memos, context_memo

#: Number of results remembered per context (the oldest entry is dropped).
MEMO_SIZE = 8192
#: The name of the memo's table in :func:`~hlo_indexing.dialect_glue.context.context_memo`.
MEMO_TABLE = "indexing-maps"
#: The tables of :func:`bounded_table`: the outcomes of the simplifier's normalization
#: of constraints, the variables each expression uses (:func:`~hlo_indexing.maps.
#: affine_expr.remembered_variables`), the linear form of each expression
#: (:func:`remembered_linear_form`), and the verdicts on groups
#: of constraints over variables that no result uses (satisfiable or not).
NORMALIZED_CONSTRAINTS_TABLE = "normalized-constraints"
EXPRESSION_VARIABLES_TABLE = "expression-variables"
LINEAR_FORMS_TABLE = "linear-forms"
SATISFIABLE_TABLE = "satisfiable-constraints"
#: Most entries a :func:`bounded_table` keeps (it is emptied when full).
BOUNDED_TABLE_SIZE = 1 << 16

T = TypeVar("T")


def memoized(context: "ir.Context | None", key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    """``compute()``, remembered under ``key`` in ``context``'s memo (``key`` names the
    operation and its operands, variable names included: they are printed and carried
    into derived maps). Without a context (an undefined map has none) the result is
    computed and not remembered."""
    if context is None:
        return compute()
    memo = context_memo(context, MEMO_TABLE)
    found: T | None = memo.get(key)
    if found is None:
        found = compute()
        memo[key] = found
        if len(memo) > MEMO_SIZE:
            del memo[next(iter(memo))]
    return found


def bounded_table(context: "ir.Context", name: str) -> dict[Any, Any]:
    """The memo table ``name`` of ``context`` for facts of expressions (uniqued in the
    context) or small maps that many maps share, emptied when it reaches
    :data:`BOUNDED_TABLE_SIZE` entries and by :func:`clear_memo`."""
    table = context_memo(context, name)
    if len(table) >= BOUNDED_TABLE_SIZE:
        table.clear()
    return table


def clear_memo() -> None:
    """Forget every remembered result (e.g. to time a cold run)."""
    clear_context_memos(MEMO_TABLE)
    clear_context_memos(NORMALIZED_CONSTRAINTS_TABLE)
    clear_context_memos(EXPRESSION_VARIABLES_TABLE)
    clear_context_memos(LINEAR_FORMS_TABLE)
    clear_context_memos(SATISFIABLE_TABLE)
