"""Batch mode of ``hlo-indexing-opt``: the same flags over many input files.

Batch mode starts when the command line names more than one input, or a directory
(which stands for its ``*.mlir`` and ``*.hlo`` files and the ``*.txt`` files that hold HLO
text, as XLA's ``--xla_dump_to`` writes them; sorted, not recursive). The contract:

* each file is processed exactly as ``hlo-indexing-opt <flags> <file>`` would, by a pool
  of ``-j N`` worker processes (default 1: in this process; ``-j 0``: one per CPU);
* with ``-o DIR`` each input's output, MLIR, goes to ``DIR/<input stem>.mlir``
  (``step.hlo`` -> ``DIR/step.mlir``, which reads back as MLIR; ``DIR`` is created; two
  inputs with the same stem are a usage error); without ``-o`` the
  outputs go to stdout in input order, separated by the output split marker
  (``// -----``), so the result reads back with ``-split-input-file``;
* a file that fails writes no output (no file under ``DIR``, nothing on stdout); its
  diagnostics are printed on stderr in input order;
* the JSON reports of the print passes (``format=json``) go, with ``-o DIR`` or
  ``--report-file``, to stdout or that file as JSON Lines, one line per report naming
  its input, in input order (:mod:`~hlo_indexing.tools.reports`); without, among the
  diagnostics on stderr;
* a progress bar is drawn on stderr only when stderr is a terminal;
* at the end stderr gets a summary, ``N files, M failed``, then the first
  ``file:line:col: error: ...`` line of each failed file, then the files of the given
  directories that were skipped (neither ``.mlir``/``.hlo`` nor HLO text) and why; the
  exit code is 1 if any file failed.

MLIR's own stderr output (``--mlir-timing``, IR dumps) is not buffered per file: with
``-j`` above 1 it may interleave. Example::

    hlo-indexing-opt dumps/ --hlo-print-fused-indexing-maps -j 0 -o annotated/
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import signal
import sys
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence, TextIO

from hlo_indexing.dialect_glue.hlo_text import looks_like_hlo_text
from hlo_indexing.errors import HloIndexingError, SourceLocation
from hlo_indexing.tools import driver, output, reports
from hlo_indexing.tools import options as opt_options
from hlo_indexing.tools.reports import Report

INPUT_SUFFIXES = (".mlir", ".hlo")
_HLO_DUMP_SUFFIX = ".txt"
_BAR_WIDTH = 30


@dataclass(frozen=True)
class FileResult:
    """The outcome of one input: ``output`` is None when it failed; ``stderr`` holds its
    diagnostics as the single-file driver prints them; ``reports`` its JSON reports
    when they are collected apart (:mod:`~hlo_indexing.tools.reports`)."""

    path: str
    failed: bool
    output: str | None
    stderr: str
    reports: tuple[Report, ...] = ()

    @property
    def first_error(self) -> str:
        """The first ``...: error: ...`` line of ``stderr`` (or a generic line)."""
        for line in self.stderr.splitlines():
            if ": error: " in line:
                return line
        return f"{self.path}: error: failed"


def is_batch(options: "opt_options.Options") -> bool:
    """True when the inputs are several files or include a directory."""
    return len(options.inputs) > 1 or any(os.path.isdir(path) for path in options.inputs)


def expand_inputs(inputs: Iterable[str], columns: dict[str, int], skipped: list[str] | None = None) -> list[str]:
    """The input files: files as given, directories replaced by their inputs (sorted);
    the other files of those directories are appended to ``skipped``."""
    files: list[str] = []
    for path in inputs:
        column = columns.get(f"input {path}", 1)
        if path == "-":
            raise opt_options.UsageError("'-' (stdin) cannot be combined with other inputs", _at(column))
        if not os.path.isdir(path):
            files.append(path)
            continue
        entries = sorted(entry.path for entry in os.scandir(path) if entry.is_file())
        found = [entry for entry in entries if _is_input(entry)]
        if skipped is not None:
            skipped.extend(entry for entry in entries if entry not in found)
        if not found:
            raise opt_options.UsageError(f"no .mlir, .hlo or HLO .txt files in directory '{path}'", _at(column))
        files.extend(found)
    return files


def _is_input(path: str) -> bool:
    if path.endswith(INPUT_SUFFIXES):
        return True
    if not path.endswith(_HLO_DUMP_SUFFIX):
        return False
    try:
        with open(path, "rb") as handle:
            return looks_like_hlo_text(handle.read(4096))
    except OSError:
        return False


def _at(column: int) -> SourceLocation:
    return SourceLocation(opt_options.COMMAND_LINE, 1, column)


def job_count(options: "opt_options.Options") -> int:
    """``-j N`` as a number of workers (``0``: the CPU count)."""
    value = options.get("j", "1")
    try:
        jobs = int(str(value))
    except ValueError:
        jobs = -1
    if jobs < 0:
        raise opt_options.UsageError(f"invalid value '{value}' for -j: expected a number >= 0", _at(options.columns["j"]))
    return jobs or os.cpu_count() or 1


def output_paths(files: list[str], options: "opt_options.Options") -> list[str] | None:
    """``DIR/<stem>.mlir`` for each file with ``-o DIR`` (None without ``-o``)."""
    directory = options.get("o")
    if directory is None or directory == "-":
        return None
    directory = str(directory)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise opt_options.UsageError(
            f"with several inputs, -o names an output directory; '{directory}' is a file", _at(options.columns["o"])
        )
    targets: dict[str, str] = {}
    for path in files:
        base = output_name(path)
        if base in targets:
            raise opt_options.UsageError(
                f"inputs '{targets[base]}' and '{path}' would both be written to '{os.path.join(directory, base)}'",
                _at(options.columns["o"]),
            )
        targets[base] = path
    return [os.path.join(directory, output_name(path)) for path in files]


def output_name(path: str) -> str:
    """The name of an input's output file: its stem with ``.mlir`` (the output is MLIR)."""
    return os.path.splitext(os.path.basename(path))[0] + ".mlir"


def process_file(options: "opt_options.Options", path: str) -> FileResult:
    """Run the single-file driver on ``path``, capturing its stderr and, when they go
    apart, its reports (worker entry point)."""
    captured = io.StringIO()
    made: list[Report] | None = None if reports.destination(options) is None else []
    with contextlib.redirect_stderr(captured):
        try:
            failed, text = driver.process_input(options, path, made)
        except HloIndexingError as exc:
            print(f"{exc.location}: error: {exc.message}", file=sys.stderr)
            failed, text = True, ""
        except Exception as exc:  # a bug in one file must not hide the others' results
            print(f"{path}:1:1: error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed, text = True, ""
    kept = tuple(made or ()) if not failed else ()
    return FileResult(path, failed, None if failed else text, captured.getvalue(), kept)


def run_batch(options: "opt_options.Options") -> int:
    """Process every input (see the module docstring); return the exit code."""
    jobs = job_count(options)
    skipped: list[str] = []
    files = expand_inputs(options.inputs, options.columns, skipped)
    targets = output_paths(files, options)
    driver.check_pipeline(options)  # usage errors once, before any file
    if targets is not None:
        os.makedirs(str(options.get("o")), exist_ok=True)
    progress = Progress(sys.stderr, len(files)) if sys.stderr.isatty() else None
    outputs: list[str] = []
    failures: list[FileResult] = []
    report_destination = reports.destination(options)
    report_file: list[Report] = []  # reports for --report-file, written at the end
    try:
        for index, result in enumerate(_results(options, files, jobs)):
            if progress is not None:
                progress.clear()
            sys.stdout.flush()
            sys.stderr.write(result.stderr)
            sys.stderr.flush()
            if result.failed:
                failures.append(result)
            elif targets is not None:
                output.write_output(targets[index], result.output or "")
            else:
                outputs.append(result.output or "")
            if report_destination == "-":  # streamed in input order, a line per report
                output.write_output("-", reports.render(result.reports, lines=True))
            report_file.extend(result.reports)
            if progress is not None:
                progress.show(index + 1, result.path)
    finally:  # also on Ctrl-C: no bar left on the terminal
        if progress is not None:
            progress.clear()
    if targets is None:
        marker = options.get("output-split-marker", opt_options.DEFAULT_SPLIT_MARKER)
        sys.stdout.write((marker + "\n").join(outputs) if marker else "".join(outputs))
        sys.stdout.flush()
    if report_destination not in (None, "-"):
        output.write_output(str(report_destination), reports.render(report_file, lines=True))
    print(summary(len(files), failures, skipped), file=sys.stderr, flush=True)
    return 1 if failures else 0


def _results(options: "opt_options.Options", files: list[str], jobs: int) -> Iterator[FileResult]:
    """Each file's result, in input order. With a pool, Ctrl-C (a ``KeyboardInterrupt``
    here) ends the workers at once: they ignore SIGINT themselves, which a terminal sends
    to the whole process group, so that only this process reports it (quietly)."""
    if jobs == 1 or len(files) == 1:
        for path in files:
            yield process_file(options, path)
        return
    from multiprocessing import get_context  # start-up: ~15 ms, only for -j > 1

    # spawn: workers start clean (no MLIR state inherited from this process)
    pool = get_context("spawn").Pool(min(jobs, len(files)), initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    try:
        yield from pool.imap(functools.partial(process_file, options), files)
    finally:  # every result is in (or Ctrl-C): the idle or interrupted workers end
        pool.terminate()
        pool.join()


def summary(total: int, failures: list[FileResult], skipped: Sequence[str] = ()) -> str:
    """``N files, M failed``, one ``file:line:col: error: ...`` line per failure, and the
    skipped files of the input directories."""
    lines = [f"{total} file{'s' if total != 1 else ''}, {len(failures)} failed"]
    lines += [f"  {result.first_error}" for result in failures]
    if skipped:
        lines.append(f"skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} (not .mlir, .hlo or HLO text):")
        lines += [f"  {path}" for path in skipped]
    return "\n".join(lines)


class Progress:
    """A one-line progress bar redrawn in place (``\\r``) on a terminal stream."""

    def __init__(self, stream: TextIO, total: int):
        self.stream = stream
        self.total = total
        self.width = 0

    def show(self, done: int, name: str) -> None:
        """Redraw the bar: ``done`` of the files finished, ``name`` the last one."""
        line = progress_line(done, self.total, name)
        self.width = len(line)
        self.stream.write("\r" + line)
        self.stream.flush()

    def clear(self) -> None:
        """Erase the bar (nothing when none is drawn)."""
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def progress_line(done: int, total: int, name: str) -> str:
    """E.g. ``[###############               ] 5/10 dumps/f.hlo``."""
    filled = _BAR_WIDTH * done // max(total, 1)
    return f"[{'#' * filled}{' ' * (_BAR_WIDTH - filled)}] {done}/{total} {os.path.basename(name)}"
