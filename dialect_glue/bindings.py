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
ir = _import(f"{_root}.ir")
passmanager = _import(f"{_root}.passmanager")
stablehlo = _optional(f"{_root}.dialects.stablehlo")
mhlo = _optional(f"{_root}.dialects.mhlo")
chlo = _optional(f"{_root}.dialects.chlo")
#: Shardy (``sdy.mesh``, ``#sdy.sharding``), which JAX puts in the programs it lowers.
sdy = _optional(f"{_root}.dialects.sdy")

__all__ = ["PROVIDER", "ir", "passmanager", "stablehlo", "mhlo", "chlo", "sdy"]
