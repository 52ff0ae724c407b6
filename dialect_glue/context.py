"""Context factory: one function that makes an ``ir.Context`` able to hold any
StableHLO/MHLO/CHLO program that JAX or XLA produces (builtin, func, arith, tensor,
shape, sdy, ... plus the three HLO dialects), without importing ``jax``.
"""

from __future__ import annotations

import functools

from hlo_indexing.dialect_glue.bindings import PROVIDER, chlo, ir, mhlo, sdy, stablehlo


@functools.cache
def register_passes() -> None:
    """Register the stablehlo and mhlo passes with the process (once)."""
    if stablehlo is not None and hasattr(stablehlo, "register_stablehlo_passes"):
        stablehlo.register_stablehlo_passes()
    if mhlo is not None and hasattr(mhlo, "register_mhlo_passes"):
        mhlo.register_mhlo_passes()


def _upstream_registry() -> ir.DialectRegistry | None:
    """A registry with every dialect the provider ships, or None if it has no such hook."""
    if PROVIDER == "jaxlib":
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext  # optional (jaxlib provider only); private: kept here

        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        return registry
    return None


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
