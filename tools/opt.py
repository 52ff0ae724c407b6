"""``hlo-indexing-opt``: an ``mlir-opt``-style driver for hlo-indexing's passes.

Flags keep MLIR's spellings (one or two leading dashes, ``--flag=value`` or
``--flag value``), so RUN lines copied from ``mlir-opt``/``stablehlo-opt``/``iree-opt``
work::

    hlo-indexing-opt in.mlir --pass-pipeline='builtin.module(canonicalize, hlo-simplify-indexing-maps)'
    hlo-indexing-opt in.mlir --hlo-simplify-indexing-maps='report=true' -split-input-file -verify-diagnostics

Every failure exits 1 with ``file:line:col: error: message`` on stderr (usage errors
point into ``<command line>``, pipeline errors into ``MLIR Textual PassPipeline
Parser``); ``-o`` is written only on success. Python tracebacks are shown only with
``--debug``. Passes run in one ``PassManager`` per invocation
(:mod:`hlo_indexing.passes.pass_manager`), so IR printing and timing are MLIR's own.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from typing import Iterator

from hlo_indexing.errors import HloIndexingError, SourceLocation

PROGRAM = "hlo-indexing-opt"
COMMAND_LINE = "<command line>"
DEFAULT_SPLIT_MARKER = "// -----"
STDIN_NAME = "<stdin>"
OP_NOTE = "see current operation"

# flag -> (kind, help). Kinds: "bool" (optionally =true/false), "value" (needs a value),
# "optional" (bare, or =value: the value's meaning is in the help).
FLAGS: dict[str, tuple[str, str]] = {
    "o": ("value", "Output filename (default: stdout), an output directory with several inputs; written only on success"),
    "j": ("value", "With several inputs or a directory: number of worker processes (default 1, 0 = one per CPU)"),
    "split-input-file": ("optional", "Split the input into chunks at '// -----' (or =MARKER) and process each"),
    "output-split-marker": ("value", "Marker between output chunks (default '// -----')"),
    "pass-pipeline": ("value", "A textual pipeline 'builtin.module(pass1, pass2{opt=v}, func.func(cse))'"),
    "verify-diagnostics": ("optional", "Check expected-* comments against diagnostics (=all or =only-expected)"),
    "mlir-print-op-generic": ("bool", "Print operations in the generic form"),
    "mlir-print-debuginfo": ("bool", "Print locations"),
    "mlir-print-local-scope": ("bool", "Print affine maps and types inline instead of as #aliases"),
    "allow-unregistered-dialect": ("bool", "Allow operations of unregistered dialects"),
    "mlir-print-ir-before-all": ("bool", "Print the IR before each pass (stderr)"),
    "mlir-print-ir-after-all": ("bool", "Print the IR after each pass (stderr)"),
    "mlir-print-ir-before": ("value", "Print the IR before the passes named (comma-separated pass arguments, stderr)"),
    "mlir-print-ir-after": ("value", "Print the IR after the passes named (comma-separated pass arguments, stderr)"),
    "mlir-print-ir-after-change": ("bool", "With --mlir-print-ir-after-all, print only when the pass changed the IR"),
    "mlir-print-ir-module-scope": ("bool", "Print the whole module when printing IR of nested passes"),
    "mlir-timing": ("bool", "Report the time of each pass (stderr)"),
    "dump-pass-pipeline": ("bool", "Print the pass pipeline before running it (stderr)"),
    "list-passes": ("bool", "List hlo-indexing's passes with their options"),
    "input-format": ("value", "Input format: mlir or hlo (default: by suffix .hlo / 'HloModule' header)"),
    "show-layout": ("value", "Show an XLA layout, e.g. 'f32[3,5]{1,0:T(2,2)}', as a grid of memory positions"),
    "format": ("value", "Format of --show-layout: text or svg"),
    "debug": ("bool", "Show Python tracebacks of internal errors"),
    "help": ("bool", "Show this help"),
    "version": ("bool", "Show the version"),
}
_ALIASES = {"h": "help"}


class UsageError(HloIndexingError):
    """A bad command line; ``location`` points into ``<command line>``."""


@dataclass
class PassFlag:
    """A ``--<pass-name>[=options]`` flag: its pipeline element text and its column."""

    element: str
    column: int
    spelling: str


@dataclass
class Options:
    inputs: list[str] = field(default_factory=list)
    flags: dict[str, str | bool] = field(default_factory=dict)
    pass_flags: list[PassFlag] = field(default_factory=list)
    columns: dict[str, int] = field(default_factory=dict)

    def get(self, name: str, default=None):
        return self.flags.get(name, default)


def parse_command_line(argv: list[str]) -> Options:
    """Split ``argv`` into flags, per-pass flags and input files (see :data:`FLAGS`)."""
    options = Options()
    column = 1
    columns = []
    for arg in argv:
        columns.append(column)
        column += len(arg) + 1
    index = 0
    while index < len(argv):
        arg, where = argv[index], columns[index]
        index += 1
        if arg == "-" or not arg.startswith("-"):
            options.inputs.append(arg)
            options.columns.setdefault("input", where)
            options.columns.setdefault(f"input {arg}", where)
            continue
        body = arg[2:] if arg.startswith("--") else arg[1:]
        name, has_value, value = body.partition("=")
        name = _ALIASES.get(name, name)
        if name not in FLAGS:
            options.pass_flags.append(PassFlag(f"{name}{{{value}}}" if has_value else name, where, arg))
            continue
        kind = FLAGS[name][0]
        if kind == "value" and not has_value:
            if index >= len(argv):
                raise UsageError(f"option '{arg}' requires a value", SourceLocation(COMMAND_LINE, 1, where))
            value, has_value = argv[index], True
            index += 1
        if kind == "bool" and has_value:
            if value not in ("true", "false", "1", "0"):
                raise UsageError(
                    f"'{value}' is invalid value for boolean argument! Try 0 or 1", SourceLocation(COMMAND_LINE, 1, where)
                )
            options.flags[name] = value in ("true", "1")
        else:
            options.flags[name] = value if has_value else True
        options.columns[name] = where
    return options


def main(argv: list[str] | None = None) -> int:
    """Run the driver on ``argv`` (without the program name); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or "-debug" in argv
    try:
        return _run(parse_command_line(argv))
    except HloIndexingError as exc:
        _print_error(exc.location, exc.message)
    except Exception as exc:  # a bug: say so, traceback only on request
        if debug:
            traceback.print_exc()
        _print_error(
            SourceLocation(COMMAND_LINE, 1, 1),
            f"internal error: {type(exc).__name__}: {exc}" + ("" if debug else " (run with --debug for the traceback)"),
        )
    return 1


def cli_main() -> None:
    """Console-script entry point."""
    sys.exit(main())


def _print_error(location: SourceLocation | None, message: str) -> None:
    where = location if location is not None else SourceLocation(COMMAND_LINE, 1, 1)
    sys.stdout.flush()
    print(f"{where}: error: {message}", file=sys.stderr, flush=True)


def _run(options: Options) -> int:
    if options.get("help"):
        print(help_text())
        return 0
    if options.get("version"):
        print(version_text())
        return 0
    if options.get("list-passes"):
        print(list_passes_text())
        return 0
    if options.get("show-layout") is not None:
        return _show_layout(options)
    return _process(options)


def _show_layout(options: Options) -> int:
    import importlib.util

    if importlib.util.find_spec("hlo_indexing.tools.show_layout") is None:
        raise UsageError(
            "--show-layout is not available: hlo_indexing.tools.show_layout is not installed",
            SourceLocation(COMMAND_LINE, 1, options.columns["show-layout"]),
        )
    from hlo_indexing.tools import show_layout

    if options.get("format", "text") not in ("text", "svg"):
        raise UsageError(
            f"invalid value '{options.get('format')}' for --format: expected text or svg",
            SourceLocation(COMMAND_LINE, 1, options.columns["format"]),
        )
    args = [str(options.get("show-layout")), f"--format={options.get('format', 'text')}"]
    if options.get("o", "-") != "-":
        args += ["-o", str(options.get("o"))]
    return show_layout.main(args)


def version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("hlo-indexing")
    except PackageNotFoundError:
        ours = "unknown"
    provider = os.environ.get("HLO_INDEXING_BINDINGS", "jaxlib")
    try:
        bindings = version(provider if provider != "iree" else "iree-base-compiler")
    except PackageNotFoundError:
        bindings = "unknown"
    return f"{PROGRAM} {ours}\n  MLIR Python bindings: {provider} {bindings}"


def help_text() -> str:
    lines = [
        "OVERVIEW: hlo-indexing optimizer driver (mlir-opt flag names)",
        "",
        f"USAGE: {PROGRAM} [options] <input file | - >",
        f"       {PROGRAM} [options] [-j N] [-o DIR] <input file | directory>...   (batch mode)",
        "",
        "OPTIONS:",
    ]
    for name, (kind, text) in FLAGS.items():
        spelling = f"-{name}" if name in ("o", "j") else f"--{name}"
        if kind == "value":
            spelling += "=<value>"
        elif kind == "optional":
            spelling += "[=<value>]"
        lines.append(f"  {spelling:<36} - {text}")
    lines += ["", list_passes_text()]
    return "\n".join(lines)


def list_passes_text() -> str:
    """Our passes and their options, from the registry's table: imports no pass module
    (nor the MLIR bindings)."""
    from hlo_indexing.passes import registry

    lines = ["Available Passes:"]
    for name in registry.pass_names():
        entry = registry.info(name)
        lines.append(f"  --{name:<34} - {entry.description}")
        for option in entry.options:
            default = option.default
            if isinstance(default, bool):
                default = "true" if default else "false"
            value = "|".join(option.choices) if option.choices else option.kind
            lines.append(f"    --{option.name}=<{value}>".ljust(38) + f" - {option.help} (default: {default})")
    lines += [
        "",
        "Upstream MLIR passes known to the bindings (canonicalize, cse, symbol-dce, loop passes,",
        "the stablehlo/mhlo/chlo conversions, ...) are accepted too, in --pass-pipeline and as",
        "--<pass-name> flags; see mlir-opt --help for their options.",
    ]
    return "\n".join(lines)


# -- processing inputs


def _process(options: Options) -> int:
    from hlo_indexing.tools import batch

    check_usage(options)
    if batch.is_batch(options):
        return batch.run_batch(options)
    failed, result = process_input(options, options.inputs[0] if options.inputs else "-")
    destination = str(options.get("o", "-"))
    if failed and destination != "-":
        return 1  # like mlir-opt: stdout shows the chunks that succeeded, a file stays untouched
    write_output(destination, result)
    return 1 if failed else 0


def check_usage(options: Options) -> None:
    """Raise :class:`UsageError` for flag values that are wrong whatever the input."""
    input_format = options.get("input-format")
    if input_format not in (None, "mlir", "hlo"):
        raise UsageError(
            f"invalid value '{input_format}' for --input-format: expected mlir or hlo",
            SourceLocation(COMMAND_LINE, 1, options.columns["input-format"]),
        )
    if _verify_mode(options) not in (None, "all", "only-expected"):
        raise UsageError(
            f"invalid value '{options.get('verify-diagnostics')}' for --verify-diagnostics: expected all or only-expected",
            SourceLocation(COMMAND_LINE, 1, options.columns["verify-diagnostics"]),
        )


def _verify_mode(options: Options):
    mode = options.get("verify-diagnostics")
    return "all" if mode is True else mode


def check_pipeline(options: Options) -> None:
    """Build the pass manager and IR-printing selection once, for their usage errors."""
    from hlo_indexing.dialect_glue.context import make_context
    from hlo_indexing.passes.base import Diagnostics

    with make_context() as context:
        _pass_manager(options, context, Diagnostics(), dump=False)
        _dump_filter(options)


def process_input(options: Options, path: str) -> tuple[bool, str]:
    """Run the pipeline on one input file (``-`` for stdin): (failed, output text).

    Diagnostics go to ``sys.stderr``; the output text holds the chunks that succeeded.
    Raises :class:`UsageError` when the file cannot be read or a flag is wrong."""
    from hlo_indexing.dialect_glue.context import make_context
    from hlo_indexing.passes.base import Diagnostics

    input_format = options.get("input-format")
    mode = _verify_mode(options)
    context = make_context(allow_unregistered_dialects=bool(options.get("allow-unregistered-dialect")))
    if options.get("mlir-print-ir-module-scope"):
        context.enable_multithreading(False)  # MLIR aborts otherwise, as mlir-opt documents
    sink = Diagnostics()
    with context:
        pm = _pass_manager(options, context, sink)
        keep = _dump_filter(options)
        _configure_instrumentation(pm, options, keep)
        name, text = _read_input(path, options)
        outputs: list[str] = []
        failed = False
        for chunk, start in _split(text, options.get("split-input-file")):
            output, reported = _process_chunk(chunk, start, name, input_format, pm, sink, options, keep)
            if mode is None:
                _print_diagnostics(reported)
                failed |= output is None or any(d.severity == "error" for d in reported)
            else:
                from hlo_indexing.tools.diagnostics_check import parse_expectations, verify

                # mlir-opt turns off the "see current operation" notes when verifying
                reported = [d for d in reported if not (d.severity == "note" and d.message.startswith(OP_NOTE))]
                failures = verify(parse_expectations(chunk, name), reported, mode)
                _print_diagnostics(failures)
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
    from hlo_indexing.dialect_glue.bindings import passmanager
    from hlo_indexing.passes.pass_manager import MODULE_ANCHOR, add_to, build_pass_manager
    from hlo_indexing.passes.pipeline_text import PipelineError

    pipeline = options.get("pass-pipeline")
    if pipeline is not None and options.pass_flags:
        raise UsageError(
            "'-pass-pipeline' option can't be used with individual pass options",
            SourceLocation(COMMAND_LINE, 1, options.pass_flags[0].column),
        )
    if pipeline is not None:
        pm = build_pass_manager(str(pipeline), context, sink)
    else:
        pm = passmanager.PassManager(MODULE_ANCHOR, context=context)
        for flag in options.pass_flags:
            try:
                add_to(pm, flag.element, sink)
            except PipelineError as exc:
                message = exc.message
                if "does not refer to a registered pass" in message:
                    message = f"Unknown command line argument '{flag.spelling}'.  Try: '{PROGRAM} --help'"
                raise UsageError(message, SourceLocation(COMMAND_LINE, 1, flag.column)) from None
    if dump and options.get("dump-pass-pipeline"):
        count = len(_top_level_passes(str(pm)))
        sys.stdout.flush()
        print(f"Pass Manager with {count} passes:\n{pm}\n", file=sys.stderr, flush=True)
    return pm


def _top_level_passes(pipeline: str) -> list[str]:
    from hlo_indexing.passes.pipeline_text import parse_pipeline

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
    from hlo_indexing.dialect_glue.bindings import passmanager
    from hlo_indexing.passes.pass_manager import MODULE_ANCHOR, add_to
    from hlo_indexing.passes.pipeline_text import PipelineError

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
    chunk: str, start: tuple[int, int] | None, name: str, input_format, pm, sink, options: Options, keep: DumpFilter | None
):
    """Parse, run the pipeline, print: (output text or None on failure, diagnostics)."""
    from hlo_indexing.dialect_glue.bindings import ir
    from hlo_indexing.dialect_glue.parsing import location_of, parse_module
    from hlo_indexing.errors import ParseError
    from hlo_indexing.tools.diagnostics_check import Reported

    try:
        module = parse_module(chunk, filename=name, input_format=input_format)
    except ParseError as exc:
        return None, [Reported("error", exc.location, exc.message)] + [Reported("note", *note) for note in exc.notes]
    sink.items.clear()
    mlir_error = None
    sys.stdout.flush()
    sys.stderr.flush()
    relocate = _Relocate(name, start) if options.get("mlir-print-debuginfo") else None
    with _native_ir_dumps(keep, relocate):
        try:
            pm.run(module.operation)
        except ir.MLIRError as exc:
            mlir_error = exc
    reported = [Reported(d.severity, location_of(d.location, name), d.message) for d in sink.items]
    if mlir_error is not None and not any(d.severity == "error" for d in sink.items):
        for diagnostic in mlir_error.error_diagnostics:
            reported.append(Reported("error", location_of(diagnostic.location, name), diagnostic.message))
            for note in diagnostic.notes:
                reported.append(Reported("note", location_of(note.location, name), note.message))
    if mlir_error is not None:
        return None, reported
    asm = module.operation.get_asm(
        enable_debug_info=bool(options.get("mlir-print-debuginfo")),
        print_generic_op_form=bool(options.get("mlir-print-op-generic")),
        use_local_scope=bool(options.get("mlir-print-local-scope")),
    )
    return (relocate(asm) if relocate is not None else asm), reported


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
    from hlo_indexing.passes.pass_manager import _captured_native_stderr

    with _captured_native_stderr() as captured:
        yield
    text = "".join(captured)
    if selective:
        text = filter_ir_dumps(text, keep)
    sys.stderr.write(relocate(text) if relocate is not None else text)
    sys.stderr.flush()


def _print_diagnostics(reported) -> None:
    sys.stdout.flush()
    for diagnostic in reported:
        print(str(diagnostic), file=sys.stderr)
    sys.stderr.flush()


def write_output(path: str, text: str) -> None:
    """Write to stdout, or atomically to the file ``path`` (temporary file + rename)."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    if os.path.exists(path) and not os.path.isfile(path):  # /dev/null, a pipe: no rename
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            return
        except OSError as exc:
            raise UsageError(f"cannot write output file '{path}': {exc.strerror or exc}", SourceLocation(COMMAND_LINE, 1, 1)) from None
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".hlo-indexing-opt-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        raise UsageError(f"cannot write output file '{path}': {exc.strerror or exc}", SourceLocation(COMMAND_LINE, 1, 1)) from None


if __name__ == "__main__":
    cli_main()
