"""MLIR's ``--verify-diagnostics``: match ``expected-*`` comments against diagnostics.

A comment ``// expected-error {{substring}}`` expects an error on its own line;
``@above``/``@below``/``@+N``/``@-N`` move the line, ``@unknown`` expects a diagnostic
without a file location. Kinds: ``error``, ``warning``, ``remark``, ``note``; the
``-re`` variants (``expected-error-re {{literal {{regex}} literal}}``) treat the text
inside inner ``{{ }}`` as regular expressions. Each expectation matches one diagnostic
of its kind on its line whose message contains the text (searched, not anchored).

:func:`verify` returns MLIR's failure messages: ``expected error "x" was not produced``
at the comment, and (in mode ``all``) ``unexpected error: msg`` at the diagnostic.

Example::

    expectations = parse_expectations(source, "in.mlir")
    failures = verify(expectations, [Reported("error", SourceLocation("in.mlir", 3, 5), "bad")])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hlo_indexing.errors import ParseError, SourceLocation
from hlo_indexing.tools import excerpt

MODES = ("all", "only-expected")
_EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}\s*$"
)


@dataclass(frozen=True)
class Reported:
    """A diagnostic that was produced; ``location`` is None when it has no file position;
    ``streamed``: already printed as it was emitted (see ``driver._process_chunk``)."""

    severity: str
    location: SourceLocation | None
    message: str
    streamed: bool = False

    def __str__(self) -> str:
        if self.severity == "output":  # a report (format=json): printed as it is
            return self.message
        return excerpt.render(self.location, self.severity, self.message)


@dataclass
class Expectation:
    """One ``expected-*`` comment. ``line`` is the line it targets (None for @unknown);
    ``comment`` is where the comment starts, for error messages."""

    kind: str
    line: int | None
    text: str
    pattern: re.Pattern | None
    comment: SourceLocation
    matched: bool = field(default=False)

    def matches(self, message: str) -> bool:
        """Whether ``message`` satisfies the expectation: the regex (``{{...}}``) matches, or
        the text is a substring."""
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _regex(text: str, where: SourceLocation) -> re.Pattern:
    """Literal text with ``{{regex}}`` pieces -> one compiled pattern."""
    pieces: list[str] = []
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            pieces.append(re.escape(text[pos:]))
            break
        end = text.find("}}", start + 2)
        if end < 0:
            raise ParseError("found start of regex with no end '}}'", where)
        pieces.append(re.escape(text[pos:start]))
        pieces.append(f"({text[start + 2 : end]})")
        pos = end + 2
    try:
        return re.compile("".join(pieces))
    except re.error as exc:
        raise ParseError(f"invalid regex: {exc}", where) from None


def parse_expectations(source: str, filename: str) -> list[Expectation]:
    """Every ``expected-*`` comment of ``source`` (line numbers of ``source`` itself)."""
    lines = source.split("\n")
    expectations: list[Expectation] = []
    for number, line in enumerate(lines, start=1):
        comment = line.find("//")
        if comment < 0:
            continue
        match = _EXPECTED.search(line, comment)
        if match is None:
            continue
        kind, is_regex, _, offset, text = match.groups()
        where = SourceLocation(filename, number, match.start() + 1)
        if offset is None:
            target: int | None = number
        elif offset == "unknown":
            target = None
        elif offset == "above":
            target = number - 1
        elif offset == "below":
            target = number + 1
        else:
            target = number + int(offset)
        if target is not None and not 1 <= target <= len(lines):
            raise ParseError(f"expected diagnostic line offset {offset} points outside the file", where)
        pattern = _regex(text, where) if is_regex else None
        expectations.append(Expectation(kind, target, text, pattern, where))
    return expectations


def verify(expectations: list[Expectation], reported: list[Reported], mode: str = "all") -> list[Reported]:
    """Match ``reported`` against ``expectations`` (marking them matched); return the
    failures as diagnostics to print, in MLIR's wording (empty list = success)."""
    if mode not in MODES:
        raise ValueError(f"verify-diagnostics mode must be one of {MODES}, got {mode!r}")
    failures: list[Reported] = []
    for diagnostic in reported:
        line = diagnostic.location.line if diagnostic.location is not None else None
        for expectation in expectations:
            if (
                not expectation.matched
                and expectation.kind == diagnostic.severity
                and expectation.line == line
                and expectation.matches(diagnostic.message)
            ):
                expectation.matched = True
                break
        else:
            if mode == "all":
                failures.append(
                    Reported("error", diagnostic.location, f"unexpected {diagnostic.severity}: {diagnostic.message}")
                )
    for expectation in expectations:
        if not expectation.matched:
            failures.append(
                Reported("error", expectation.comment, f'expected {expectation.kind} "{expectation.text}" was not produced')
            )
    return failures
