"""The one place that imports jax for the Pallas checker.

jax is an optional dependency of hlo-indexing (the library needs only jaxlib's MLIR
bindings): it is imported on first use, and its absence is an
:class:`~hlo_indexing.errors.UnsupportedError` that says how to install it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from hlo_indexing.errors import UnsupportedError


@dataclass(frozen=True)
class Jax:
    """The jax modules the checker uses: ``jax``, ``jax.extend.core`` (jaxpr types) and
    ``jax.experimental.pallas``, and ``discharge_state`` (turns the reads of refs in an
    index map into plain operations, to evaluate it outside a kernel: a private jax
    function, as Pallas's own interpreter uses it)."""

    jax: ModuleType
    core: ModuleType
    pallas: ModuleType
    discharge_state: Callable[..., Any]


@functools.cache
def load_jax() -> Jax:
    """The jax modules; :class:`UnsupportedError` when jax is not installed."""
    try:
        # Deferred: jax is an optional dependency, needed only to check Pallas kernels.
        import jax
        import jax.extend.core as core
        from jax._src.state.discharge import discharge_state
        from jax.experimental import pallas
    except ImportError as error:
        raise UnsupportedError(
            f"checking Pallas kernels needs jax ({error}); install it with `pip install jax` "
            "or the project's 'test' extra"
        ) from None
    return Jax(jax, core, pallas, discharge_state)
