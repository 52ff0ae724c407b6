"""Running ``hlo-indexing-opt`` on one input: read it, split it (``-split-input-file``),
parse each chunk, run the pass pipeline with MLIR's IR printing and timing, report or
verify diagnostics, and write the output only on success."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from hlo_indexing.analysis.verify_exact import verify_module
from hlo_indexing.dialect_glue.bindings import ir, passmanager
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.locations import ANONYMOUS_BUFFER, location_of
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError, ParseError, SourceLocation
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.pass_manager import MODULE_ANCHOR, add_to, build_pass_manager, captured_native_stderr
from hlo_indexing.passes.pipeline_text import PIPELINE_BUFFER, PipelineError, parse_pipeline
from hlo_indexing.tools import excerpt
from hlo_indexing.tools.diagnostics_check import Reported, parse_expectations, verify
from hlo_indexing.tools.options import (
    COMMAND_LINE,
    DEFAULT_SPLIT_MARKER,
    STDIN_NAME,
    Options,
    UsageError,
    unknown_argument_message,
    verify_mode,
)
from hlo_indexing.tools.reports import Report

#: A ``location`` field of a JSON report naming the anonymous buffer ``-``.
_ANONYMOUS_LOCATION = re.compile(r'("location"\s*:\s*")' + re.escape(ANONYMOUS_BUFFER) + ":")

OP_NOTE = "see current operation"


def check_pipeline(options: Options) -> None:
    """Build the pass manager and IR-printing selection once, for their usage errors."""
    with make_context() as context:
        _pass_manager(options, context, Diagnostics(), dump=False)
        _dump_filter(options)


def process_input(options: Options, path: str, reports: list[Report] | None = None) -> tuple[bool, str]:
    """Run the pipeline on one input file (``-`` for stdin): (failed, output text).

    Diagnostics go to ``sys.stderr``; the output text holds the chunks that succeeded.
    The JSON reports of the print passes are printed among the diagnostics, or, when
    ``reports`` is a list, appended to it for the chunks that succeeded (see
    :mod:`~hlo_indexing.tools.reports`). Raises :class:`UsageError` when the file
    cannot be read or a flag is wrong."""

    input_format = options.get("input-format")
    mode = verify_mode(options)
    context = make_context(allow_unregistered_dialects=bool(options.get("allow-unregistered-dialect")))
    if options.get("mlir-print-ir-module-scope"):
        context.enable_multithreading(False)  # MLIR aborts otherwise, as mlir-opt documents
    sink = Diagnostics()
    with context:
        pm = _pass_manager(options, context, sink)
        keep = _dump_filter(options)
        _configure_instrumentation(pm, options, keep)
        name, text = _read_input(path, options)
        excerpt.register(name, text)
        outputs: list[str] = []
        failed = False
        for index, (chunk, start) in enumerate(_split(text, options.get("split-input-file"))):
            # verifying compares them first, a caller's list collects them: printed after the run
            streamed = mode is None and reports is None
            output, reported = _process_chunk(chunk, start, name, input_format, pm, sink, options, keep, streamed)
            if reports is not None:
                if output is not None:
                    reports.extend(Report(name, index, d.message) for d in reported if d.severity == "output")
                reported = [d for d in reported if d.severity != "output"]
            if mode is None:
                _print_diagnostics(_located([d for d in reported if not d.streamed], name, start))
                failed |= output is None or any(d.severity == "error" for d in reported)
            else:
                # mlir-opt turns off the "see current operation" notes when verifying
                reported = [d for d in reported if not (d.severity == "note" and d.message.startswith(OP_NOTE))]
                _print_diagnostics([d for d in reported if d.severity == "output"])
                reported = [d for d in reported if d.severity != "output"]
                failures = verify(parse_expectations(chunk, name), reported, mode)
                # an unexpected diagnostic without a position is printed at the chunk, as in
                # the normal mode (mlir-opt prints "<unknown>:0: error:", which names no input)
                _print_diagnostics(_located(failures, name, start))
                failed |= bool(failures)
            if output is not None:
                outputs.append(output + "\n")  # mlir-opt ends each chunk's module with an empty line
        marker = options.get("output-split-marker", DEFAULT_SPLIT_MARKER)
        result = (marker + "\n").join(outputs) if marker else "".join(outputs)
        del pm  # MLIR prints the --mlir-timing report when the PassManager goes away
    return failed, result


def _pass_manager(options: Options, context, sink, dump: bool = True):
    """The PassManager for ``--pass-pipeline`` or the per-pass flags (empty without);
    ``--dump-pass-pipeline`` prints it when ``dump``."""
    pipeline = options.get("pass-pipeline")
    if pipeline is not None and options.pass_flags:
        raise UsageError(
            "'-pass-pipeline' option can't be used with individual pass options",
            SourceLocation(COMMAND_LINE, 1, options.pass_flags[0].column),
        )
    if pipeline is not None:
        excerpt.register(PIPELINE_BUFFER, str(pipeline))
        pm = build_pass_manager(str(pipeline), context, sink)
    else:
        pm = passmanager.PassManager(MODULE_ANCHOR, context=context)
        for flag in options.pass_flags:
            try:
                add_to(pm, flag.element, sink)
            except PipelineError as exc:
                message = exc.message
                if "does not refer to a registered pass" in message:
                    message = unknown_argument_message(flag.spelling)
                raise UsageError(message, SourceLocation(COMMAND_LINE, 1, flag.column)) from None
    if dump and options.get("dump-pass-pipeline"):
        count = len(_top_level_passes(str(pm)))
        sys.stdout.flush()
        print(f"Pass Manager with {count} passes:\n{pm}\n", file=sys.stderr, flush=True)
    return pm


def _top_level_passes(pipeline: str) -> list[str]:
    return [element.name for element in parse_pipeline(pipeline).elements]


@dataclass(frozen=True)
class DumpFilter:
    """Which IR dumps of MLIR's printer to keep: ``None`` keeps every dump of that kind
    (``--mlir-print-ir-before-all``), a set keeps the passes with those arguments
    (``--mlir-print-ir-before=cse,canonicalize``)."""

    before: frozenset[str] | None
    after: frozenset[str] | None


_DUMP_HEADER = re.compile(r"^// -----// IR Dump (Before|After) [^:]*: ([A-Za-z0-9_.$-]+)")
def filter_ir_dumps(text: str, keep: DumpFilter) -> str:
    """The dumps of ``text`` (MLIR's ``// -----// IR Dump After Name: arg{...} //----- //``
    blocks, each up to the next header) that ``keep`` selects; text before the first
    header is kept. Example: with ``DumpFilter(before=frozenset(), after=frozenset({"cse"}))``
    only the blocks headed ``IR Dump After CSEPass: cse`` remain."""
    kept: list[str] = []
    keeping = True
    for line in text.splitlines(keepends=True):
        header = _DUMP_HEADER.match(line)
        if header:
            wanted = keep.before if header.group(1) == "Before" else keep.after
            keeping = wanted is None or header.group(2) in wanted
        if keeping:
            kept.append(line)
    return "".join(kept)


def _dump_filter(options: Options) -> DumpFilter | None:
    """The selection of ``--mlir-print-ir-before/after[-all]``, None when nothing prints.
    Every named pass must be ours or known to MLIR (else a located usage error)."""

    def selection(kind: str) -> frozenset[str] | None:
        if options.get(f"mlir-print-ir-{kind}-all"):
            return None
        names = options.get(f"mlir-print-ir-{kind}")
        if names is None:
            return frozenset()
        chosen = frozenset(name.strip() for name in str(names).split(",") if name.strip())
        for name in sorted(chosen):
            _check_pass_name(name, f"mlir-print-ir-{kind}", options)
        return chosen

    keep = DumpFilter(selection("before"), selection("after"))
    return None if keep.before == frozenset() and keep.after == frozenset() else keep


def _check_pass_name(name: str, flag: str, options: Options) -> None:
    try:
        add_to(passmanager.PassManager(MODULE_ANCHOR), name)
    except PipelineError:
        raise UsageError(
            f"for the --{flag} option: Cannot find option named '{name}'!",
            SourceLocation(COMMAND_LINE, 1, options.columns[flag]),
        ) from None


def _configure_instrumentation(pm, options: Options, keep: DumpFilter | None) -> None:
    if keep is not None:
        before = keep.before is None or bool(keep.before)
        after = keep.after is None or bool(keep.after)
        pm.enable_ir_printing(
            print_before_all=before,
            print_after_all=after,
            print_module_scope=bool(options.get("mlir-print-ir-module-scope")),
            print_after_change=bool(options.get("mlir-print-ir-after-change")),
            enable_debug_info=bool(options.get("mlir-print-debuginfo")),
            print_generic_op_form=bool(options.get("mlir-print-op-generic")),
        )
    if options.get("mlir-timing"):
        pm.enable_timing()


def _read_input(path: str, options: Options) -> tuple[str, str]:
    """(display name, text) of the input file ``path``, or of stdin for ``-``."""
    if path == "-":
        return STDIN_NAME, sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return path, handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(
            f"could not open input file '{path}': {reason}", SourceLocation(COMMAND_LINE, 1, options.columns["input"])
        ) from None


def _split(text: str, marker) -> list[tuple[str, tuple[int, int] | None]]:
    """The chunks of ``text`` between marker lines, each prefixed with newlines so that
    its line numbers stay those of the whole file, with the (line, column) just after the
    marker that opens it (None for the first chunk): where ``mlir-opt`` locates the
    chunk's implicit module."""
    if not marker:
        return [(text, None)]
    marker = DEFAULT_SPLIT_MARKER if marker is True else str(marker)
    chunks: list[tuple[str, tuple[int, int] | None]] = []
    current: list[str] = []
    first_line, start = 0, None
    for number, line in enumerate(text.split("\n")):
        if line.strip() == marker:
            chunks.append(("\n" * first_line + "\n".join(current), start))
            current, first_line = [], number + 1
            start = (number + 1, line.index(marker) + len(marker) + 1)
        else:
            current.append(line)
    chunks.append(("\n" * first_line + "\n".join(current), start))
    return chunks


def _process_chunk(
    chunk: str, start: tuple[int, int] | None, name: str, input_format, pm, sink, options: Options, keep: DumpFilter | None,
    streamed: bool = False,
):
    """Parse, run the pipeline, print: (output text or None on failure, diagnostics).
    With ``streamed``, the passes' diagnostics are printed as they are emitted (and
    marked ``streamed``), so that a long module reports each computation when it is done."""

    try:
        module = parse_module(chunk, filename=name, input_format=input_format)
    except HloIndexingError as exc:  # a parse error, or a limit refused before parsing
        notes = exc.notes if isinstance(exc, ParseError) else ()
        return None, [Reported("error", exc.location, exc.message)] + [Reported("note", *note) for note in notes]
    sink.items.clear()
    mlir_error = None
    sys.stdout.flush()
    sys.stderr.flush()
    relocate = _Relocate(name, start) if options.get("mlir-print-debuginfo") else None

    def reported_of(d) -> Reported:
        if d.severity == "output":
            return Reported(d.severity, None, _name_buffer(d.message, name), streamed)
        return Reported(d.severity, excerpt.refine(location_of(d.location, name), d.message), d.message, streamed)

    if streamed:
        sink.listener = lambda d: _print_diagnostics(_located([reported_of(d)], name, start))
    with _native_ir_dumps(keep, relocate):
        try:
            pm.run(module.operation)
        except ir.MLIRError as exc:
            mlir_error = exc
        finally:
            sink.listener = None
    reported = [reported_of(d) for d in sink.items]
    if mlir_error is not None and not any(d.severity == "error" for d in sink.items):
        for diagnostic in mlir_error.error_diagnostics:
            reported.append(Reported("error", location_of(diagnostic.location, name), diagnostic.message))
            for note in diagnostic.notes:
                reported.append(Reported("note", location_of(note.location, name), note.message))
    if mlir_error is not None:
        return None, reported
    if options.get("hlo-verify-exact"):
        checks = verify_module(module.operation)
        reported += [Reported(c.severity, location_of(c.location, name), c.message) for c in checks]
        if any(c.severity == "error" for c in checks):
            return None, reported
    asm = module.operation.get_asm(
        enable_debug_info=bool(options.get("mlir-print-debuginfo")),
        print_generic_op_form=bool(options.get("mlir-print-op-generic")),
        use_local_scope=bool(options.get("mlir-print-local-scope")),
    )
    assert isinstance(asm, str)  # get_asm(binary=False) is text; the stubs say object
    return (relocate(asm) if relocate is not None else asm), reported


def _name_buffer(report: str, name: str) -> str:
    """A JSON report with MLIR's anonymous buffer ``-`` in its ``location`` fields named
    ``name``, as diagnostics are (other text is returned unchanged). A textual rewrite:
    inside a JSON string a quote is escaped, so ``"location": "-:`` only matches a
    ``location`` field (re-encoding the document cost seconds on a large report)."""
    if f'"{ANONYMOUS_BUFFER}:' not in report:
        return report
    named = json.dumps(name)[1:-1] + ":"
    return _ANONYMOUS_LOCATION.sub(lambda match: match.group(1) + named, report)


@dataclass(frozen=True)
class _Relocate:
    """Rewrite the locations of IR printed with ``--mlir-print-debuginfo`` (the output and
    MLIR's IR dumps): ``ir.Module.parse`` names the buffer ``"-"``, which becomes the
    input's name (``<stdin>`` for stdin, as in mlir-opt and our diagnostics), and the
    implicit module of a later split chunk, ``loc("-":0:0)``, is put just after its marker
    (``start``), as mlir-opt does. Example: ``_Relocate("a.mlir", (5, 9))`` turns
    ``loc("-":0:0)`` into ``loc("a.mlir":5:9)`` and ``loc("-":7:3)`` into ``loc("a.mlir":7:3)``."""

    name: str
    start: tuple[int, int] | None

    def __call__(self, text: str) -> str:
        if self.start is not None:
            text = text.replace('loc("-":0:0)', f'loc("-":{self.start[0]}:{self.start[1]})')
        return text.replace('loc("-":', f"loc({json.dumps(self.name)}:")


@contextlib.contextmanager
def _native_ir_dumps(keep: DumpFilter | None, relocate: _Relocate | None) -> Iterator[None]:
    """Pass MLIR's IR dumps (written by C++ to file descriptor 2) through :func:`filter_ir_dumps`
    when only some passes are selected and through ``relocate`` when given; otherwise (or
    when nothing is dumped) leave stderr alone."""
    selective = keep is not None and not (keep.before is None and keep.after is None)
    if keep is None or not (selective or relocate is not None):
        yield
        return
    with captured_native_stderr() as captured:
        yield
    text = "".join(captured)
    if selective:
        text = filter_ir_dumps(text, keep)
    sys.stderr.write(relocate(text) if relocate is not None else text)
    sys.stderr.flush()


def _located(reported: list, name: str, start: tuple[int, int] | None) -> list:
    """Diagnostics at an unknown location (an op written with ``loc(unknown)``) pointed at
    the start of their chunk, where ``mlir-opt`` locates the chunk's module, and said to
    be unlocated: every printed error names a file position."""
    line, column = start or (1, 1)
    return [
        d
        if d.location is not None or d.severity in ("note", "output")
        else Reported(d.severity, SourceLocation(name, line, column), f"{d.message} (at an unknown location in this input)")
        for d in reported
    ]


def _print_diagnostics(reported) -> None:
    sys.stdout.flush()
    for diagnostic in reported:
        print(str(diagnostic), file=sys.stderr)
    sys.stderr.flush()
