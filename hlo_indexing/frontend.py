"""One call from a program (JAX, MLIR, HLO) to its indexing maps: :func:`analyze`.

The top of the library: it parses what it is given and, for ``annotate=True``, runs the
passes, so it sits above :mod:`hlo_indexing.analysis` and :mod:`hlo_indexing.passes`.

``analyze(obj)`` accepts:

* a ``jax.jit(f).lower(*args)`` object (``jax.stages.Lowered``, recognised by its
  ``compiler_ir`` method: ``jax`` itself is never imported here);
* an ``ir.Module`` / ``ir.Operation`` of the bindings hlo-indexing uses (jaxlib's), in
  any context, e.g. JAX's own ``lowered.compiler_ir('stablehlo')``; StableHLO, MHLO or
  CHLO;
* a module or operation of another MLIR Python binding (the upstream ``mlir`` wheels,
  ``iree.compiler.ir``): objects never cross bindings, so it is printed (locations
  kept) and re-parsed into hlo-indexing's default context;
* MLIR or XLA HLO text (``str``/``bytes``) or a path (``os.PathLike``, or a ``str``
  that names an existing file; a one-line ``str`` that looks like a file name but names
  none is an :class:`~hlo_indexing.errors.InputNotFoundError`).

It returns a :class:`~hlo_indexing.analysis.module_analysis.ModuleIndexing`: the fused maps of every ``func.func`` with a body
and every ``mhlo.fusion`` (:class:`ComputationMaps`, one :class:`~hlo_indexing.analysis.fusion.FusionIndexing`
per result, or per argument for ``direction="input-to-output"``), and the per-op maps of
every HLO op (:class:`OpMaps`), with a readable ``str()``.

The caller's module is never modified: the analysis only reads it, and with
``annotate=True`` (attach the maps as ``hlo_indexing.*`` attributes, as the passes
``hlo-attach-indexing-maps`` and ``hlo-attach-fused-indexing-maps`` do) it works on a clone
unless ``clone=False`` (then the caller's own module, e.g. JAX's live one, is
annotated). ``result.module`` is the module that was analysed (and annotated).

Example::

    >>> import jax, jax.numpy as jnp
    >>> lowered = jax.jit(lambda x: jnp.exp(x).T).lower(jnp.zeros((2, 3)))
    >>> print(analyze(lowered, per_op=False))
    @main result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS
from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.analysis.results import ModuleIndexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.direction import Direction
from hlo_indexing.errors import InputNotFoundError, InvalidArgumentError
from hlo_indexing.passes.pass_manager import run_pipeline


def analyze(
    obj: Any,
    *,
    direction: str = Direction.OUTPUT_TO_INPUT,
    fused: bool = True,
    per_op: bool = True,
    annotate: bool = False,
    clone: bool = True,
    max_maps: int = DEFAULT_MAX_MAPS,
    filename: str | None = None,
) -> ModuleIndexing:
    """Indexing maps of ``obj`` (see the module docstring for what it accepts).

    ``direction``: ``"output-to-input"`` (default) or ``"input-to-output"``; ``fused`` /
    ``per_op`` choose the parts computed; ``annotate`` attaches them as attributes to
    ``result.module``, a clone of a caller's module unless ``clone=False``;
    ``max_maps`` caps each fused map set; ``filename`` names program text (``str`` or
    ``bytes``) in errors and op locations (``<string>`` when not given). Raises
    :class:`~hlo_indexing.errors.InvalidArgumentError` (a ``ValueError`` and a
    ``TypeError``) for bad arguments or an object of the wrong type,
    :class:`~hlo_indexing.errors.InputNotFoundError` (a ``FileNotFoundError``) for a
    missing file, :class:`~hlo_indexing.errors.ParseError` for text that does not parse;
    all are :class:`~hlo_indexing.errors.HloIndexingError`."""
    if direction not in tuple(Direction):
        raise InvalidArgumentError(f"analyze: direction must be one of {tuple(d.value for d in Direction)}, not {direction!r}")
    module, owned, buffer = _module_of(obj, filename)
    if annotate and clone and not owned:
        module = module.operation.clone()
    module = module.operation
    with gc_paused():
        result = module_indexing(module, direction, fused=fused, per_op=per_op, max_maps=max_maps, buffer=buffer)
    if annotate:
        run_pipeline(
            module,
            f"builtin.module(hlo-attach-indexing-maps{{direction={direction}}}, hlo-attach-fused-indexing-maps{{max-maps={max_maps}}})",
        )
    return result


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (back on after it, if it was
    on). The analysis allocates many containers that live until it returns (its tables
    and memos) and makes no garbage cycles of note; each collection would traverse all
    of them again, a cost that grows faster than the module (~15% of the analysis of an
    8-layer training step)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _module_of(obj: Any, filename: str | None) -> tuple[Any, bool, str | None]:
    """(module in our bindings, whether it is ours alone (not the caller's), the name of
    the text buffer it was parsed from, which MLIR calls ``-``); ``filename`` names
    program text."""
    is_text = isinstance(obj, bytes) or (isinstance(obj, str) and not _names_a_file(obj))
    if filename is not None and not is_text:
        raise InvalidArgumentError(
            f"analyze: filename= names program text (str or bytes), not a {type(obj).__name__} (a path or module "
            "carries its own name)"
        )
    if isinstance(obj, (ir.Module, ir.Operation, ir.OpView)):
        return obj, False, None
    if callable(getattr(obj, "compiler_ir", None)):  # jax.stages.Lowered
        return obj.compiler_ir("stablehlo"), False, None
    if isinstance(obj, str) and _names_a_file(obj):
        if not os.path.isfile(obj):
            raise InputNotFoundError(
                f"analyze: no such file: {obj!r} (a str is read as a path when it names an existing file, "
                "otherwise as MLIR or HLO text, which it does not look like)"
            )
        return parse_module(Path(obj)), True, obj
    if isinstance(obj, (str, bytes)):
        name = filename or "<string>"
        return parse_module(obj, filename=name), True, name
    if isinstance(obj, os.PathLike):
        return parse_module(obj), True, os.fspath(obj)
    operation = getattr(obj, "operation", None)
    if operation is not None and callable(getattr(operation, "get_asm", None)):  # another binding
        text = operation.get_asm(enable_debug_info=True)
        return parse_module(text, filename=f"<{type(obj).__module__}>"), True, None
    raise InvalidArgumentError(
        f"analyze: cannot analyse a {type(obj).__name__}: expected a jax Lowered object, an MLIR module or "
        "operation, MLIR or HLO text, or a path"
    )


def _names_a_file(text: str) -> bool:
    """A ``str`` that is a path rather than program text: an existing file, or one line
    without the characters every MLIR/HLO program has (braces, ``=``, ``%``)."""
    if "\n" in text or not text.strip():
        return False
    if os.path.isfile(text):
        return True
    return not any(c in text for c in "{}=%(") and not text.lstrip().startswith("HloModule")
