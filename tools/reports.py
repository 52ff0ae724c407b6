"""Where the JSON reports of the print passes (``format=json``: one document per module
and pass) go, and in what shape.

Where: ``--report-file=FILE`` names a file (``-``: stdout); without it they go to
stdout when ``-o`` sends the IR elsewhere (a file, a directory, ``/dev/null``), else to
stderr among the diagnostics, where mlir-opt's reporting passes (``-print-op-stats=json``)
print. On stdout or in a file they are apart from the diagnostics and the batch summary
(which stay on stderr).

Shape, on stdout or in a file: a run with one input, without ``-split-input-file``, that
makes one report gets the document as it is (``json.load`` reads it); any other run
(several inputs or a directory, ``-split-input-file``, several reporting passes) gets
JSON Lines, one line per report, ``{"input": "a.mlir", "chunk": 0, "report": {...}}``
(``chunk``: the ``-split-input-file`` chunk, 0 without), in input order. A report goes
with its module's output: the reports of a chunk or file that failed are left out, as
its IR is. A report file is written when the run ends (atomically, as ``-o``): with one
input only on success, in batch mode with the reports of the files that succeeded.

Example::

    hlo-indexing-opt dumps/ --hlo-print-fused-indexing-maps=format=json -o annotated/ > maps.jsonl
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from hlo_indexing.tools.options import Options


@dataclass(frozen=True)
class Report:
    """One JSON document a pass made for one module: the input's display name, the
    ``-split-input-file`` chunk (from 0) and the document's text."""

    input: str
    chunk: int
    text: str

    def line(self) -> str:
        """The report as a line of JSON Lines (see the module docstring), newline included."""
        return json.dumps({"input": self.input, "chunk": self.chunk, "report": json.loads(self.text)}) + "\n"


def destination(options: Options) -> str | None:
    """Where reports go: a file, ``-`` for stdout, or None for stderr among the
    diagnostics (see the module docstring)."""
    named = options.get("report-file")
    if named is not None:
        return str(named)
    return "-" if options.get("o", "-") != "-" else None


def as_lines(options: Options, batch: bool) -> bool:
    """Whether this run writes JSON Lines whatever the number of reports (several inputs,
    or ``-split-input-file``)."""
    return batch or bool(options.get("split-input-file"))


def render(reports: Sequence[Report], lines: bool) -> str:
    """The text of ``reports``: the one document as it is, or JSON Lines when ``lines``
    or there are several."""
    if len(reports) == 1 and not lines:
        text = reports[0].text
        return text if text.endswith("\n") else text + "\n"
    return "".join(report.line() for report in reports)
