"""Context factory: one function that makes an ``ir.Context`` able to hold any
StableHLO/MHLO/CHLO program that JAX or XLA produces (builtin, func, arith, tensor,
shape, sdy, ... plus the three HLO dialects), without importing ``jax``; and the memo
tables of the package, kept per context (:func:`context_memo`).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any

from hlo_indexing.dialect_glue.bindings import chlo, dialect_registrar, ir, mhlo, sdy, stablehlo


@functools.cache
def register_passes() -> None:
    """Register the stablehlo and mhlo passes with the process (once)."""
    if stablehlo is not None and hasattr(stablehlo, "register_stablehlo_passes"):
        stablehlo.register_stablehlo_passes()
    if mhlo is not None and hasattr(mhlo, "register_mhlo_passes"):
        mhlo.register_mhlo_passes()


def _upstream_registry() -> ir.DialectRegistry | None:
    """A registry with every dialect the provider ships, or None if it has no such hook."""
    if dialect_registrar is None:
        return None
    registry = ir.DialectRegistry()
    dialect_registrar.register_dialects(registry)
    return registry


def make_context(*, allow_unregistered_dialects: bool = False) -> ir.Context:
    """Return a new context with every dialect of a JAX/XLA program loaded.

    Example::

        ctx = make_context()
        with ctx:
            module = ir.Module.parse("func.func @f() { return }")
    """
    register_passes()
    context = ir.Context()
    registry = _upstream_registry()
    if registry is not None:
        context.append_dialect_registry(registry)
    if stablehlo is not None:
        stablehlo.register_dialect(context)
    if mhlo is not None:
        mhlo.register_mhlo_dialect(context)
    if chlo is not None:
        chlo.register_dialect(context)
    if sdy is not None:
        sdy.register_dialect(context)
    context.load_all_available_dialects()
    context.allow_unregistered_dialects = allow_unregistered_dialects
    return context


@functools.cache
def default_context() -> ir.Context:
    """The process-wide context used when the caller supplies none."""
    return make_context()


def current_or_default_context() -> ir.Context:
    """The innermost active ``with ctx:`` context, else :func:`default_context`."""
    try:
        current = ir.Context.current
    except ValueError:
        current = None
    return current if current is not None else default_context()


#: Number of contexts whose memo tables (:func:`context_memo`) are kept; those of the
#: least recently used context are dropped first.
MAX_MEMO_CONTEXTS = 4

#: id(context) -> (the context, its tables by name), least recently used first.
_MEMO_TABLES: "OrderedDict[int, tuple[ir.Context, dict[str, dict[Any, Any]]]]" = OrderedDict()
#: (id, tables) of the last entry of :data:`_MEMO_TABLES` (most calls are for it).
_last_used: tuple[int, dict[str, dict[Any, Any]]] | None = None


def context_memo(context: ir.Context, name: str) -> dict[Any, Any]:
    """The memo table ``name`` of ``context`` (a dict, created empty on first use).

    The package's memos (per-op maps, compose/simplify results, affine variables) hold
    objects of a context, which keep that context alive, and must never hand an object
    of one context to a caller working in another (an MLIR object built from parts of
    two contexts points into the first one's memory, which is freed with it). So every
    memo lives in a table of its context, and tables are kept for the
    :data:`MAX_MEMO_CONTEXTS` most recently used contexts only: a process that makes a
    context per input (the CLI, a fuzz worker, a notebook) keeps a bounded number of
    contexts (each with its thread pool) alive instead of one per memo entry. Example::

        table = context_memo(module.context, "per-op")
        table.setdefault(key, value)
    """
    global _last_used
    key = id(context)
    if _last_used is not None and _last_used[0] == key:
        tables = _last_used[1]  # the most recently used context (never the one dropped)
    else:
        entry = _MEMO_TABLES.get(key)  # the entry holds the context: its id is not reused meanwhile
        if entry is None:
            entry = _MEMO_TABLES[key] = (context, {})
            while len(_MEMO_TABLES) > MAX_MEMO_CONTEXTS:
                _MEMO_TABLES.popitem(last=False)
        else:
            _MEMO_TABLES.move_to_end(key)
        tables = entry[1]
        _last_used = (key, tables)
    table = tables.get(name)
    if table is None:
        table = tables[name] = {}
    return table


def clear_context_memos(name: str) -> None:
    """Empty the memo table ``name`` of every context."""
    for _context, tables in _MEMO_TABLES.values():
        tables.pop(name, None)
