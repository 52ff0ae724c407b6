"""Late-bound operations of a data type (the one way a lower module calls up the stack).

A data type at the bottom of a layer (``IndexingMap``, ``Layout``) offers convenience
methods (``simplify()``, ``parse()``) whose work is done by modules above it, which import
the data type. Instead of importing upwards, the type keeps a :class:`Delegates` table
that its package's ``__init__`` fills when it is imported; Python imports a package before
any of its modules, so the table is complete whenever the type can be used.

Example::

    >>> ops = Delegates("hlo_indexing.example")
    >>> ops.install(double=lambda x: 2 * x)
    >>> ops.double(21)
    42
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Delegates:
    """A name -> function table filled by :meth:`install`; reading a missing name raises
    ``RuntimeError`` naming the package that should have installed it."""

    def __init__(self, package: str) -> None:
        self._package = package
        self._operations: dict[str, Callable[..., Any]] = {}

    def install(self, **operations: Callable[..., Any]) -> None:
        """Bind (or rebind) each keyword's function under its name."""
        self._operations.update(operations)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):  # introspection (help, pdoc, copy) asks for dunders
            raise AttributeError(name)
        try:
            return self._operations[name]
        except KeyError:
            raise RuntimeError(f"operation {name!r} is not installed: {self._package} installs it on import") from None
