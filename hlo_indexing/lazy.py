"""Lazy public names for packages: ``import hlo_indexing`` (or a subpackage) stays cheap,
yet ``dir()``, ``help()`` and ``from ... import *`` see every public name.

A package lists ``name -> module`` in a table and installs the pair of module-level
hooks this returns (PEP 562)::

    __getattr__, __dir__ = lazy_exports(__name__, {"analyze": "hlo_indexing.frontend"})
    __all__ = sorted(_EXPORTS)

A name's module is imported on first access only.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``exports`` maps each lazy
    public name to the module defining it; a name equal to the module's last component
    (``"tools.opt"`` for ``opt``) is the module itself."""

    def __getattr__(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name)
        return module if module_name.rsplit(".", 1)[-1] == name and not hasattr(module, name) else getattr(module, name)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
