"""Run hlo-indexing passes inside MLIR's own ``PassManager``, alone or mixed with
upstream passes.

MLIR's textual pipelines cannot name Python passes, so pipelines are parsed by
:mod:`hlo_indexing.passes.pipeline_text`; each top-level element is then added to an
``ir.PassManager``: upstream ones as text (``pm.add("cse")``), ours as Python passes
(``pm.add(callable, name=..., argument=...)``, never with ``op_name=``). Inside the
pipeline an error of one of our passes becomes an MLIR error diagnostic at its location
plus ``signal_pass_failure()``, so ``pm.run`` raises ``ir.MLIRError`` carrying it (an
error emitted without signalling failure would be silently lost). Remarks, warnings and
notes, which Python cannot emit through MLIR, are collected into a
:class:`~hlo_indexing.passes.base.Diagnostics` the caller may pass in.

Example::

    pm = ir.PassManager("builtin.module")
    pm.add("canonicalize")
    add_to(pm, "hlo-simplify-indexing-maps")
    pm.run(module.operation)          # raises ir.MLIRError if a pass fails

    remarks = run_pipeline(module, "builtin.module(cse, hlo-simplify-indexing-maps)")
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from typing import Iterator

from hlo_indexing.dialect_glue.bindings import ir, passmanager
from hlo_indexing.dialect_glue.context import current_or_default_context, register_passes
from hlo_indexing.passes import registry
from hlo_indexing.passes.base import Diagnostic, Diagnostics, ModulePass, PassOptionError
from hlo_indexing.passes.pipeline_text import (
    PipelineElement,
    PipelineError,
    parse_element_list,
    parse_options,
    parse_pipeline,
)

MODULE_ANCHOR = "builtin.module"
_MLIR_PIPELINE_ERROR = re.compile(r"^MLIR Textual PassPipeline Parser:1:(\d+): error: (.*)$")
#: MLIR's refusal of an op-specific pass on another op's pass manager (explicit nesting)
_RESTRICTED = re.compile(r"Can't add pass '[^']*' restricted to '([^']+)' on a PassManager intended to run on")


class PythonPass:
    """The callable MLIR runs for one of our passes: ``(op, pass_handle) -> None``.

    Runs ``pass_.run(op, diagnostics)``; an exception raised by the pass counts as an
    error (at the op the :class:`HloIndexingError` is about, else at the pass's op): the
    pass fails, and nothing is raised through the caller's ``PassManager``. Every diagnostic is emitted to ``sink`` as it comes
    (when given); errors are also emitted through MLIR and fail the pass. ``alias`` is
    the old name the pipeline called the pass by, if it did: a note at the op says so."""

    def __init__(self, pass_: ModulePass, sink: Diagnostics | None = None, alias: str | None = None):
        self.pass_ = pass_
        self.sink = sink
        self.alias = alias

    def _forward(self, diagnostic: Diagnostic) -> None:
        """Hand a diagnostic to the sink as it is emitted (its own listener sees it then)."""
        assert self.sink is not None
        self.sink.emit(diagnostic.severity, diagnostic.location, diagnostic.message)

    def __call__(self, op: "ir.Operation", pass_handle) -> None:
        diagnostics = Diagnostics(listener=self._forward if self.sink is not None else None)
        if self.alias is not None:
            diagnostics.note(op.location, registry.alias_note(self.alias))
        try:
            self.pass_.run(op, diagnostics)
        except Exception as exc:  # noqa: BLE001 - a failed pass, never an exception through the user's PassManager
            diagnostics.failure(op.location, exc, f"in pass '{self.pass_.name}'")
        errors = [d for d in diagnostics.items if d.severity == "error"]
        for error in errors:
            assert error.location is not None, "errors are located"
            error.location.emit_error(error.message)
        if errors:
            pass_handle.signal_pass_failure()


def instantiate(element: PipelineElement) -> ModulePass | None:
    """Our pass for a pipeline element (options applied), or None if it is not ours.
    Raises :class:`PipelineError` for bad options or a nested use of our passes."""
    if element.nested is not None:
        for inner in element.nested:
            if inner.nested is not None or registry.is_ours(inner.name):
                _reject_nested_python_pass(inner, element.name)
        return None
    cls = registry.lookup(element.name)
    if cls is None:
        return None
    options_column = element.column + len(element.name) + 1
    try:
        return cls.from_options(parse_options(element.options or "", options_column))
    except PassOptionError as exc:
        raise PipelineError(str(exc), options_column) from None


def _reject_nested_python_pass(element: PipelineElement, anchor: str) -> None:
    if element.nested is not None:
        for inner in element.nested:
            _reject_nested_python_pass(inner, element.name)
    elif registry.is_ours(element.name):
        raise PipelineError(
            f"pass '{element.name}' is a Python pass of hlo-indexing: it runs on "
            f"'{MODULE_ANCHOR}' and cannot be nested under '{anchor}'",
            element.column,
        )


def add_elements(
    pm: "passmanager.PassManager",
    elements: tuple[PipelineElement, ...],
    diagnostics: Diagnostics | None = None,
) -> None:
    """Add parsed pipeline elements to ``pm`` in order (see :func:`add_to`).

    An upstream pass restricted to an operation other than the pipeline's (a function
    pass such as ``chlo-legalize-to-stablehlo`` at the module level) is nested under that
    operation, as mlir-opt's implicit nesting does for ``--<pass>`` flags and pipelines:
    it runs on each such op directly inside the anchor. Every element is validated
    before ``pm`` is touched, so a bad pipeline leaves it unchanged."""
    register_passes()
    planned: list[tuple[ModulePass, str | None] | str] = []
    for element in elements:
        ours = instantiate(element)
        if ours is None:
            planned.append(upstream_text(element))
        else:
            planned.append((ours, element.name if element.name in registry.ALIASES else None))
    for item in planned:
        if isinstance(item, str):
            pm.add(item)
        else:
            ours, alias = item
            pm.add(
                PythonPass(ours, diagnostics, alias),
                name=type(ours).__name__,
                argument=ours.name,
                description=ours.description,
            )


def add_to(pm: "passmanager.PassManager", pipeline: str, diagnostics: Diagnostics | None = None) -> None:
    """Add the comma-separated pipeline elements ``pipeline`` (ours and upstream, no
    anchor, e.g. ``"hlo-simplify-indexing-maps, cse"``) to the user's ``pm``.

    Remarks, warnings and notes of our passes are appended to ``diagnostics`` when given.
    Raises :class:`PipelineError` (``pm`` unchanged) for unknown passes or bad options."""
    add_elements(pm, parse_element_list(pipeline), diagnostics)


def build_pass_manager(
    pipeline: str, context: "ir.Context", diagnostics: Diagnostics | None = None
) -> "passmanager.PassManager":
    """A ``PassManager`` anchored on ``builtin.module`` for ``builtin.module(...)`` text."""
    parsed = parse_pipeline(pipeline)
    if parsed.anchor != MODULE_ANCHOR:
        raise PipelineError(
            f"hlo-indexing pipelines run on '{MODULE_ANCHOR}', not '{parsed.anchor}'",
            len(pipeline) - len(pipeline.lstrip()) + 1,
        )
    pm = passmanager.PassManager(MODULE_ANCHOR, context=context)
    add_elements(pm, parsed.elements, diagnostics)
    return pm


def run_pipeline(module: "ir.Module | ir.Operation", pipeline: str) -> Diagnostics:
    """Run the mixed pipeline ``builtin.module(...)`` on ``module`` in place.

    Returns the diagnostics our passes reported (remarks, warnings, notes). Raises
    ``ir.MLIRError`` when a pass fails (its ``error_diagnostics`` carry the messages and
    locations), :class:`PipelineError` for a malformed pipeline. Example::

        run_pipeline(module, "builtin.module(canonicalize, hlo-simplify-indexing-maps)")
    """
    operation = module.operation
    diagnostics = Diagnostics()
    pm = build_pass_manager(pipeline, operation.context, diagnostics)
    pm.run(operation)
    return diagnostics


def upstream_text(element: PipelineElement) -> str:
    """The pipeline text MLIR accepts for the upstream ``element`` on a module: its own
    text, or ``op(text)`` for a pass restricted to ``op`` (implicit nesting, see
    :func:`add_elements`). Raises :class:`PipelineError` with MLIR's message otherwise.

    Pass names are registered per process, so a scratch ``PassManager`` in any context
    tells; it absorbs the partial additions MLIR makes before failing."""
    message, native = _try_upstream(element.text)
    if message is None:
        return element.text
    restricted = _RESTRICTED.search(message)
    if restricted is not None and element.nested is None:
        nested = f"{restricted.group(1)}({element.text})"
        if _try_upstream(nested)[0] is None:
            return nested
    raise _upstream_error(element, message, native)


def _try_upstream(text: str) -> tuple[str | None, str]:
    """(None, "") when a module ``PassManager`` accepts ``text``, else MLIR's message and
    what it wrote to stderr."""
    scratch = passmanager.PassManager(MODULE_ANCHOR, context=current_or_default_context())
    with captured_native_stderr() as native:
        try:
            scratch.add(text)
            return None, ""
        except ValueError as exc:
            message = str(exc)
    return message, "".join(native)


def _upstream_error(element: PipelineElement, message: str, native: str) -> PipelineError:
    first = message.strip().splitlines()[0] if message.strip() else "invalid pass"
    match = _MLIR_PIPELINE_ERROR.match(first)
    if match:
        text = match.group(2)
        if "does not refer to a registered pass" in text:
            close = registry.suggestion(element.name)
            text += f"; did you mean '{close}'?" if close is not None else ""
        return PipelineError(text, element.column + int(match.group(1)) - 1)
    details = " ".join(line.strip(" :") for line in (native + "\n" + message).splitlines() if line.strip(" :"))
    return PipelineError(details, element.column)


@contextlib.contextmanager
def captured_native_stderr() -> Iterator[list[str]]:
    """Capture what C++ writes to file descriptor 2 (LLVM's option parser reports
    there); the text is appended to the yielded list on exit."""
    sys.stderr.flush()
    captured: list[str] = []
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+b") as handle:
        os.dup2(handle.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            handle.seek(0)
            captured.append(handle.read().decode(errors="replace"))
