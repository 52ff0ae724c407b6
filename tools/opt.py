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

import importlib.util
import sys
import traceback

from hlo_indexing.errors import HloIndexingError, SourceLocation
from hlo_indexing.tools import console, excerpt, output, reports
from hlo_indexing.tools.options import (
    COMMAND_LINE,
    Options,
    UsageError,
    check_show_layout_usage,
    check_usage,
    help_text,
    list_passes_text,
    parse_command_line,
    version_text,
)


def main(argv: list[str] | None = None) -> int:
    """Run the driver on ``argv`` (without the program name); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or "-debug" in argv
    excerpt.forget_all()
    excerpt.register(COMMAND_LINE, " ".join(argv))
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
    """Console-script entry point (Ctrl-C: a quiet end, see :mod:`~hlo_indexing.tools.console`)."""
    console.run(main)


def _print_error(location: SourceLocation | None, message: str) -> None:
    where = location if location is not None else SourceLocation(COMMAND_LINE, 1, 1)
    sys.stdout.flush()
    print(excerpt.render(where, "error", message), file=sys.stderr, flush=True)


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
    if importlib.util.find_spec("hlo_indexing.tools.show_layout") is None:
        raise UsageError(
            "--show-layout is not available: hlo_indexing.tools.show_layout is not installed",
            SourceLocation(COMMAND_LINE, 1, options.columns["show-layout"]),
        )
    from hlo_indexing.tools import show_layout  # start-up: loaded only for --show-layout

    check_show_layout_usage(options)
    if options.get("format", "text") not in ("text", "svg"):
        raise UsageError(
            f"invalid value '{options.get('format')}' for --format: expected text or svg",
            SourceLocation(COMMAND_LINE, 1, options.columns["format"]),
        )
    args = [str(options.get("show-layout")), f"--format={options.get('format', 'text')}"]
    if options.get("o", "-") != "-":
        args += ["-o", str(options.get("o"))]
    return show_layout.main(args)


def _process(options: Options) -> int:
    from hlo_indexing.tools import batch, driver  # start-up: --help/--version/--list-passes load no bindings

    check_usage(options)
    if batch.is_batch(options):
        return batch.run_batch(options)
    report_destination = reports.destination(options)
    made: list[reports.Report] | None = None if report_destination is None else []
    failed, result = driver.process_input(options, options.inputs[0] if options.inputs else "-", made)
    destination = str(options.get("o", "-"))
    # like mlir-opt: stdout shows the chunks that succeeded, a file stays untouched
    if not failed or destination == "-":
        output.write_output(destination, result)
    if report_destination is not None and made is not None and (not failed or report_destination == "-"):
        output.write_output(report_destination, reports.render(made, reports.as_lines(options, batch=False)))
    return 1 if failed else 0


if __name__ == "__main__":
    cli_main()
