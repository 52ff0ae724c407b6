"""Versions of installed distributions: hlo-indexing's own (``hlo_indexing.__version__``,
``hlo-indexing-opt --version``) and the MLIR bindings provider's.

Example::

    >>> distribution_version("no-such-distribution") is None
    True
"""

from __future__ import annotations

import functools


@functools.cache
def distribution_version(name: str) -> str | None:
    """The version in the metadata of the installed distribution ``name``; None when it
    is not installed (e.g. hlo-indexing run from a source tree never installed)."""
    from importlib import metadata  # start-up: importlib.metadata costs ~25 ms; only versions need it

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def installed_version() -> str | None:
    """hlo-indexing's version (:func:`distribution_version` of ``hlo-indexing``)."""
    return distribution_version("hlo-indexing")
