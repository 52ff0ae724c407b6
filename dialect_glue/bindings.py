"""Select the MLIR Python bindings provider.

Providers, chosen with the environment variable ``HLO_INDEXING_BINDINGS``:

``jaxlib`` (default, tested)
    ``jaxlib.mlir`` with the ``stablehlo``, ``mhlo`` and ``chlo`` dialects.
``mlir``
    the upstream ``mlir`` wheels (``mlir.ir``); StableHLO/MHLO must be registered by the
    user's build, otherwise only builtin/func/arith programs parse.
``iree``
    ``iree.compiler.ir`` from ``iree-base-compiler``.

Objects never cross providers: a module from another provider is exchanged as text
(see :func:`hlo_indexing.dialect_glue.parsing.parse_module`).
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING

from hlo_indexing.errors import UnsupportedError

PROVIDER = os.environ.get("HLO_INDEXING_BINDINGS", "jaxlib")

_ROOTS = {"jaxlib": "jaxlib.mlir", "mlir": "mlir", "iree": "iree.compiler"}


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UnsupportedError(
            f"MLIR bindings provider {PROVIDER!r} is not usable: cannot import {name} ({exc})"
        ) from exc


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


if PROVIDER not in _ROOTS:
    raise UnsupportedError(
        f"unknown HLO_INDEXING_BINDINGS={PROVIDER!r}; expected one of {sorted(_ROOTS)}"
    )

_root = _ROOTS[PROVIDER]
if TYPE_CHECKING:
    # The type checker's static view: the default provider's modules and their stubs
    # (every provider ships the same upstream ``ir`` API).
    from jaxlib.mlir import ir, passmanager
else:
    ir = _import(f"{_root}.ir")
    passmanager = _import(f"{_root}.passmanager")
#: Where each dialect's registration functions and attribute classes are. jaxlib's
#: dialect modules (``jaxlib.mlir.dialects.mhlo``) re-export a native extension and add
#: the generated op classes, which take ~30 ms per dialect to import and which
#: hlo-indexing does not use (it reads ops through ``ir.Operation``): with jaxlib the
#: native extension alone is imported, so every dialect is registered at a fraction of
#: the start-up cost. (Typed op classes appear anyway once the caller imports a dialect
#: module, e.g. through ``jax``.)
_DIALECT_MODULES = {
    "stablehlo": ("_mlir_libs._stablehlo", "dialects.stablehlo"),
    "mhlo": ("_mlir_libs._mlirHlo", "dialects.mhlo"),
    "chlo": ("_mlir_libs._chlo", "dialects.chlo"),
    "sdy": ("_mlir_libs._sdy", "dialects.sdy"),
}


def _dialect(name: str) -> ModuleType | None:
    native, public = _DIALECT_MODULES[name]
    found = _optional(f"{_root}.{native}") if PROVIDER == "jaxlib" else None
    return found if found is not None else _optional(f"{_root}.{public}")


#: jaxlib's native extension that registers every dialect jaxlib ships
#: (``register_dialects(registry)``); None for the other providers, which have no such hook.
dialect_registrar = _optional(f"{_root}._mlir_libs._jax_mlir_ext") if PROVIDER == "jaxlib" else None

stablehlo = _dialect("stablehlo")
mhlo = _dialect("mhlo")
chlo = _dialect("chlo")
#: Shardy (``sdy.mesh``, ``#sdy.sharding``), which JAX puts in the programs it lowers.
sdy = _dialect("sdy")


@functools.cache
def tpu_dialect() -> ModuleType | None:
    """jaxlib's TPU (Mosaic) dialect extension (``register_dialect(context)``), whose
    attributes the kernels of Pallas TPU calls use; None without it. Imported on first
    use, not with the bindings: importing it registers Mosaic's passes, which would
    change the driver's table of upstream passes."""
    return _optional(f"{_root}._mlir_libs._tpu_ext") if PROVIDER == "jaxlib" else None


# Aliases for the binding types the package's signatures use (the chosen provider's
# classes at run time, jaxlib's for the type checker).
Context = ir.Context
Location = ir.Location
Module = ir.Module
Operation = ir.Operation
OpView = ir.OpView
Value = ir.Value
Type = ir.Type
Attribute = ir.Attribute
AffineExpr = ir.AffineExpr
AffineMap = ir.AffineMap
Region = ir.Region
Block = ir.Block
#: An SSA value of any type (generic in the bindings' stubs, not at run time).
if TYPE_CHECKING:
    SsaValue = ir.Value[ir.Type]
    SsaArgument = ir.BlockArgument[ir.Type]
else:
    SsaValue = ir.Value
    SsaArgument = ir.BlockArgument
#: An op as the bindings hand it out: an ``Operation``, or an ``OpView`` (a dialect's op class).
OpLike = ir.Operation | ir.OpView

__all__ = [
    "PROVIDER",
    "ir",
    "passmanager",
    "dialect_registrar",
    "stablehlo",
    "mhlo",
    "chlo",
    "sdy",
    "tpu_dialect",
    "Context",
    "Location",
    "Module",
    "Operation",
    "OpView",
    "Value",
    "Type",
    "Attribute",
    "AffineExpr",
    "AffineMap",
    "Region",
    "Block",
    "OpLike",
    "SsaValue",
    "SsaArgument",
]
