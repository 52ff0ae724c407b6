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

import sys
import traceback

from hlo_indexing.errors import HloIndexingError, SourceLocation
from hlo_indexing.tools import console, excerpt
from hlo_indexing.tools.options import (
    COMMAND_LINE,
    Options,
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
    return _work(options)


def _work(options: Options) -> int:
    """Everything but the help texts: load the bindings and the passes, then run."""
    from hlo_indexing.tools import opt_work  # start-up: --help/--version/--list-passes load no bindings

    if options.get("show-layout") is not None:
        return opt_work.show_layout(options)
    return opt_work.process(options)


if __name__ == "__main__":
    cli_main()
