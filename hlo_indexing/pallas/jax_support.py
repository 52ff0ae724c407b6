"""The one place that imports jax for the Pallas checker.

jax is an optional dependency of hlo-indexing (the library needs only jaxlib's MLIR
bindings): this module imports it when it is itself imported (the checker's modules are
reached through ``hlo_indexing``'s lazy exports, so ``import hlo_indexing`` does not load
jax), and :func:`load_jax` turns its absence into an
:class:`~hlo_indexing.errors.UnsupportedError` that says how to install it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from hlo_indexing.errors import UnsupportedError

_MISSING = ""
try:  # jax is optional: only checking Pallas kernels needs it
    import jax
    import jax.extend.core as jax_core
    from jax._src.state.discharge import discharge_state
    from jax.experimental import pallas
except ImportError as error:
    _MISSING = str(error)


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


def load_jax() -> Jax:
    """The jax modules; :class:`UnsupportedError` when jax is not installed."""
    if _MISSING:
        raise UnsupportedError(
            f"checking Pallas kernels needs jax ({_MISSING}); install it with `pip install jax` "
            "or the project's 'test' extra"
        )
    return Jax(jax, jax_core, pallas, discharge_state)
