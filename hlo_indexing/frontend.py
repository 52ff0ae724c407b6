"""One call from a program (JAX, MLIR, HLO) to its indexing maps: :func:`analyze`.

The top of the library: it parses what it is given and, for ``annotate=True``, runs the
passes, so it sits above :mod:`hlo_indexing.analysis` and :mod:`hlo_indexing.passes`.

``analyze(obj)`` accepts:

* a ``jax.jit(f).lower(*args)`` object (``jax.stages.Lowered``, recognised by its
  ``compiler_ir`` method: ``jax`` itself is never imported here): JAX's StableHLO
  module, whose argument and result names (``params['w']``, ``result['loss']``) name
  the fused maps (:mod:`~hlo_indexing.analysis.jax_names`);
* its ``.compile()`` (``jax.stages.Compiled``, recognised by ``runtime_executable``):
  XLA's optimised HLO (``compiled.as_text()``), with its fusions as ``mhlo.fusion``;
  the entry's arguments are named after their HLO metadata, its results after the
  object's ``out_info`` (JAX's pytree paths, read with the ``jax`` the object came
  from);
* an ``ir.Module`` / ``ir.Operation`` of the bindings hlo-indexing uses (jaxlib's), in
  any context, e.g. JAX's own ``lowered.compiler_ir('stablehlo')``; StableHLO, MHLO or
  CHLO;
* a module or operation of another MLIR Python binding (the upstream ``mlir`` wheels,
  ``iree.compiler.ir``): objects never cross bindings, so it is printed (locations
  kept) and re-parsed into hlo-indexing's default context;
* MLIR or XLA HLO text (``str``/``bytes``) or a path (``os.PathLike``, or a ``str``
  that names an existing file; a one-line ``str`` that looks like a file name but names
  none is an :class:`~hlo_indexing.errors.InputNotFoundError`).

It returns a :class:`~hlo_indexing.analysis.results.ModuleIndexing` (its ``source`` says
what was read, e.g. ``XLA's optimised HLO of a jax Compiled (compiled.as_text())``): the fused maps of every ``func.func`` with a body
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
    @main result -> x: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
"""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, cast, runtime_checkable

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS
from hlo_indexing.analysis.jax_names import entry_parameter_names, name_arguments, name_results, result_names
from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.analysis.results import ModuleIndexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.direction import Direction
from hlo_indexing.errors import InputNotFoundError, InvalidArgumentError
from hlo_indexing.passes.pass_manager import run_pipeline


@runtime_checkable
class _JaxLowered(Protocol):
    """What :func:`analyze` reads of a ``jax.stages.Lowered`` (jax is not imported here)."""

    def compiler_ir(self, dialect: str) -> object: ...


@runtime_checkable
class _JaxCompiled(Protocol):
    """What :func:`analyze` reads of a ``jax.stages.Compiled``."""

    def runtime_executable(self) -> object: ...

    def as_text(self) -> str: ...


def analyze(
    obj: object,
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
    module, owned, buffer, source = _module_of(obj, filename)
    if annotate and clone and not owned:
        module = module.operation.clone()
    module = module.operation
    with gc_paused():
        result = module_indexing(module, direction, fused=fused, per_op=per_op, max_maps=max_maps, buffer=buffer)
    result = dataclasses.replace(result, source=source)
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


def _module_of(obj: object, filename: str | None) -> tuple[ir.Module | ir.Operation | ir.OpView, bool, str | None, str]:
    """(module in our bindings, whether it is ours alone (not the caller's), the name of
    the text buffer it was parsed from, which MLIR calls ``-``, and what was read, in
    words); ``filename`` names program text."""
    is_text = isinstance(obj, bytes) or (isinstance(obj, str) and not _names_a_file(obj))
    if filename is not None and not is_text:
        raise InvalidArgumentError(
            f"analyze: filename= names program text (str or bytes), not a {type(obj).__name__} (a path or module "
            "carries its own name)"
        )
    if isinstance(obj, (ir.Module, ir.Operation, ir.OpView)):
        return obj, False, None, f"the {type(obj).__name__} given"
    if isinstance(obj, _JaxLowered):
        return cast(ir.Module, obj.compiler_ir("stablehlo")), False, None, "JAX's StableHLO of a jax Lowered (lowered.compiler_ir('stablehlo'))"
    if isinstance(obj, _JaxCompiled):
        return _compiled_module(obj), True, COMPILED_BUFFER, "XLA's optimised HLO of a jax Compiled (compiled.as_text())"
    if isinstance(obj, str) and _names_a_file(obj):
        if not os.path.isfile(obj):
            raise InputNotFoundError(
                f"analyze: no such file: {obj!r} (a str is read as a path when it names an existing file, "
                "otherwise as MLIR or HLO text, which it does not look like)"
            )
        return parse_module(Path(obj)), True, obj, f"the file {obj}"
    if isinstance(obj, (str, bytes)):
        name = filename or "<string>"
        return parse_module(obj, filename=name), True, name, f"program text ({name})"
    if isinstance(obj, os.PathLike):
        return parse_module(obj), True, os.fspath(obj), f"the file {os.fspath(obj)}"
    operation = getattr(obj, "operation", None)
    if operation is not None and callable(getattr(operation, "get_asm", None)):  # another binding
        text = operation.get_asm(enable_debug_info=True)
        binding = type(obj).__module__
        return parse_module(text, filename=f"<{binding}>"), True, None, f"a module of {binding} (copied through its text)"
    raise InvalidArgumentError(
        f"analyze: cannot analyse a {type(obj).__name__}: expected a jax Lowered or Compiled object, an MLIR "
        "module or operation, MLIR or HLO text, or a path"
    )


#: The name the optimised HLO of a ``jax.stages.Compiled`` gets in locations and errors.
COMPILED_BUFFER = "<compiled HLO>"


def _compiled_module(compiled: _JaxCompiled) -> ir.Module | ir.Operation | ir.OpView:
    """The module of ``compiled.as_text()``, its entry function's arguments and results
    named as JAX names them (:mod:`~hlo_indexing.analysis.jax_names`)."""
    text = compiled.as_text()
    module = parse_module(text, filename=COMPILED_BUFFER)
    functions = module.operation.regions[0].blocks[0].operations
    entry = next((op for op in functions if op.operation.name == "func.func" and "sym_visibility" not in op.attributes), None)
    if entry is not None:
        name_arguments(entry, entry_parameter_names(text))
        names = _result_paths(compiled)
        if names is not None and len(names) == len(result_names(entry)):
            name_results(entry, names)
    return module


def _result_paths(compiled: _JaxCompiled) -> list[str] | None:
    """``result`` and the pytree path of each output of ``compiled`` (``result['loss']``,
    as JAX writes ``jax.result_info``), read with the ``jax`` module the object came from
    (loaded, since the object exists; not imported here); None without one."""
    jax = sys.modules.get("jax")
    out_info = getattr(compiled, "out_info", None)
    if jax is None or out_info is None:
        return None
    leaves, _ = jax.tree_util.tree_flatten_with_path(out_info)
    return ["result" + jax.tree_util.keystr(path) for path, _ in leaves]


def _names_a_file(text: str) -> bool:
    """A ``str`` that is a path rather than program text: an existing file, or one line
    without the characters every MLIR/HLO program has (braces, ``=``, ``%``)."""
    if "\n" in text or not text.strip():
        return False
    if os.path.isfile(text):
        return True
    return not any(c in text for c in "{}=%(") and not text.lstrip().startswith("HloModule")
