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
from typing import TypeVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import clear_context_memos, context_memo

#: Number of results remembered per context (the oldest entry is dropped).
MEMO_SIZE = 8192
#: The name of the memo's table in :func:`~hlo_indexing.dialect_glue.context.context_memo`.
MEMO_TABLE = "indexing-maps"

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


def clear_memo() -> None:
    """Forget every remembered result (e.g. to time a cold run)."""
    clear_context_memos(MEMO_TABLE)
