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
stablehlo = _optional(f"{_root}.dialects.stablehlo")
mhlo = _optional(f"{_root}.dialects.mhlo")
chlo = _optional(f"{_root}.dialects.chlo")
#: Shardy (``sdy.mesh``, ``#sdy.sharding``), which JAX puts in the programs it lowers.
sdy = _optional(f"{_root}.dialects.sdy")

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
#: An op as the bindings hand it out: an ``Operation``, or an ``OpView`` (a dialect's op class).
OpLike = ir.Operation | ir.OpView

__all__ = [
    "PROVIDER",
    "ir",
    "passmanager",
    "stablehlo",
    "mhlo",
    "chlo",
    "sdy",
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
]
