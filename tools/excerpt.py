"""Source excerpts under diagnostics (errors, warnings, remarks and notes), as mlir-opt
prints them: the line a diagnostic points at and a caret under its column::

    in.mlir:2:3: error: custom op 'retur' is unknown
      retur %a : tensor<4xf32>
      ^

The texts diagnostics point into are registered by name (:func:`register`: an input
file, ``<command line>``, the ``--pass-pipeline`` text); :func:`render` adds the excerpt
to an error or warning whose location names one of them.
"""

from __future__ import annotations

import json
import re

from hlo_indexing.errors import SourceLocation

# "... at column N, found 'x' (in NAME = "TEXT")": an error inside an attribute's text
_IN_ATTRIBUTE = re.compile(r'at column (\d+), found .* \(in [\w.]+ = ("(?:[^"\\]|\\.)*")\)$')
#: how many lines after the op's own a located attribute's text is looked for
ATTRIBUTE_SEARCH_LINES = 200

#: name -> lines of the buffers diagnostics may point into (this process only), split
#: once: a module's remarks (tens of thousands for a compiled training step) each read one
_SOURCES: dict[str, list[str]] = {}


def register(name: str, text: str) -> None:
    """Make ``text`` the buffer called ``name`` in locations."""
    _SOURCES[name] = text.splitlines()


def forget_all() -> None:
    """Drop every registered buffer: a tool run in-process many times (a fuzz worker, a
    notebook) starts each invocation with none, instead of keeping every input it read."""
    _SOURCES.clear()


def excerpt(location: SourceLocation | None) -> list[str]:
    """The source line of ``location`` and a caret under its column ([] when the buffer
    or the line is unknown)."""
    if location is None or location.line < 1:
        return []
    lines = _SOURCES.get(location.filename)
    if lines is None or location.line > len(lines):
        return []
    line = lines[location.line - 1]
    if "\t" in line:
        line = line.expandtabs(1)
    column = min(max(location.column, 1), len(line) + 1)
    return [line, " " * (column - 1) + "^"]


def refine(location: SourceLocation | None, message: str) -> SourceLocation | None:
    """For an error inside an attribute's text (the message ends ``at column N, found
    ... (in NAME = "TEXT")``, e.g. a layout), the position of that column in the source:
    the first occurrence of TEXT from the op's line on. Otherwise ``location``."""
    match = _IN_ATTRIBUTE.search(message)
    if location is None or match is None or location.filename not in _SOURCES:
        return location
    column, text = int(match.group(1)), json.loads(match.group(2))
    lines = _SOURCES[location.filename]
    for number in range(max(location.line, 1), min(len(lines), location.line + ATTRIBUTE_SEARCH_LINES) + 1):
        start = lines[number - 1].find(text)
        if start >= 0:
            return SourceLocation(location.filename, number, start + column)
    return location


def render(location: SourceLocation | None, severity: str, message: str) -> str:
    """``file:line:col: severity: message`` followed by the excerpt of its location,
    whatever the severity, as mlir-opt (LLVM's ``SourceMgr``) prints every located
    diagnostic."""
    where = str(location) if location is not None else "<unknown>:0:0"
    return "\n".join([f"{where}: {severity}: {message}", *excerpt(location)])
