"""Parser of MLIR's textual pass pipelines, e.g.
``builtin.module(canonicalize, hlo-simplify-indexing-maps{max-iterations=4}, func.func(cse))``.

MLIR's own parser (``PassManager.parse``) cannot name Python passes, so hlo-indexing
parses the pipeline itself: :func:`parse_pipeline` returns the anchor and the list of
top-level :class:`PipelineElement` s, each keeping its source text and column so that
errors point at it. Which names are our passes and which are upstream MLIR passes is
decided by :mod:`hlo_indexing.passes.pass_manager`, not here (pure syntax, no MLIR).

Errors raise :class:`PipelineError` with a 1-based column; ``str(error)`` reads like
MLIR's ``MLIR Textual PassPipeline Parser:1:12: error: ...``.

Example::

    >>> p = parse_pipeline("builtin.module(cse, hlo-simplify-indexing-maps{a=1 b=x})")
    >>> [e.name for e in p.elements], p.elements[1].options
    (['cse', 'hlo-simplify-indexing-maps'], 'a=1 b=x')
"""

from __future__ import annotations

from dataclasses import dataclass

from hlo_indexing.errors import ParseError, SourceLocation

PIPELINE_BUFFER = "MLIR Textual PassPipeline Parser"
ANCHOR_ERROR = (
    "expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.$")
_CLOSING = {"{": "}", "(": ")", "[": "]", "<": ">"}


class PipelineError(ParseError):
    """A malformed pipeline; ``location`` is ``MLIR Textual PassPipeline Parser:1:<col>``."""

    def __init__(self, message: str, column: int):
        super().__init__(message, SourceLocation(PIPELINE_BUFFER, 1, column))
        self.column = column


@dataclass(frozen=True)
class PipelineElement:
    """One pass (``name{options}``) or a nested pipeline (``func.func(...)``).

    ``options`` is the raw text between the braces (None without braces); ``nested``
    the elements of a nested pipeline (None for a pass); ``text`` the element's source
    text and ``column`` its 1-based position in the whole pipeline."""

    name: str
    options: str | None
    nested: tuple["PipelineElement", ...] | None
    text: str
    column: int


@dataclass(frozen=True)
class Pipeline:
    """``anchor(elements...)``; ``anchor`` is an operation name such as ``builtin.module``."""

    anchor: str
    elements: tuple[PipelineElement, ...]


def parse_pipeline(text: str) -> Pipeline:
    """Parse ``anchor(element, ...)``; raise :class:`PipelineError` naming the column."""
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    open_paren = stripped.find("(")
    if open_paren <= 0 or not stripped.endswith(")"):
        raise PipelineError(ANCHOR_ERROR, lead + 1)
    anchor = stripped[:open_paren].strip()
    if not anchor or any(ch not in _NAME_CHARS for ch in anchor):
        raise PipelineError(f"invalid anchor operation name '{anchor}'", lead + 1)
    parser = _Parser(text, lead + open_paren + 1, lead + len(stripped) - 1)
    return Pipeline(anchor, parser.element_list())


def parse_element_list(text: str) -> tuple[PipelineElement, ...]:
    """Parse a comma-separated element list without anchor, e.g. ``cse, my-pass{a=1}``."""
    return _Parser(text, 0, len(text)).element_list()


def parse_options(text: str, column: int = 1) -> dict[str, str]:
    """Split pass options ``key=value key2='v w' flag`` into a dict.

    Values may be quoted with ``'`` or ``"`` or wrapped in ``{...}``; a key without
    ``=value`` maps to ``""`` (a boolean flag set to true). ``column`` is where the text
    starts in the pipeline, for error positions."""
    options: dict[str, str] = {}
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return options
        start = pos
        while pos < len(text) and not text[pos].isspace() and text[pos] != "=":
            pos += 1
        key = text[start:pos]
        if not key:
            raise PipelineError("expected an option name before '='", column + start)
        value = ""
        if pos < len(text) and text[pos] == "=":
            pos += 1
            value_start = pos
            pos = _skip_value(text, pos, column)
            value = _unquote(text[value_start:pos])
        if key in options:
            raise PipelineError(f"option '{key}' given more than once", column + start)
        options[key] = value


def _skip_value(text: str, pos: int, column: int) -> int:
    if pos < len(text) and text[pos] in "'\"":
        end = text.find(text[pos], pos + 1)
        if end < 0:
            raise PipelineError("unterminated quoted option value", column + pos)
        return end + 1
    depth = 0
    while pos < len(text) and (depth > 0 or not text[pos].isspace()):
        if text[pos] in _CLOSING:
            depth += 1
        elif text[pos] in _CLOSING.values() and depth > 0:
            depth -= 1
        pos += 1
    return pos


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if len(value) >= 2 and value[0] == "{" and value[-1] == "}":
        return value[1:-1]
    return value


class _Parser:
    """Recursive-descent parser over ``text[start:end]``; columns refer to ``text``."""

    def __init__(self, text: str, start: int, end: int):
        self.text = text
        self.pos = start
        self.end = end

    def element_list(self) -> tuple[PipelineElement, ...]:
        elements: list[PipelineElement] = []
        self._skip_spaces()
        if self.pos >= self.end:
            return ()
        while True:
            elements.append(self._element())
            self._skip_spaces()
            if self.pos >= self.end:
                return tuple(elements)
            if self.text[self.pos] != ",":
                raise PipelineError(f"expected ',' after parsing pipeline, found '{self.text[self.pos]}'", self.pos + 1)
            self.pos += 1
            self._skip_spaces()
            if self.pos >= self.end:
                raise PipelineError("expected pass name after ','", self.pos + 1)

    def _element(self) -> PipelineElement:
        start = self.pos
        while self.pos < self.end and self.text[self.pos] in _NAME_CHARS:
            self.pos += 1
        name = self.text[start : self.pos]
        if not name:
            found = self.text[self.pos] if self.pos < self.end else "end of pipeline"
            raise PipelineError(f"expected pass pipeline element name, found '{found}'", start + 1)
        options = nested = None
        if self.pos < self.end and self.text[self.pos] == "{":
            close = self._matching(self.pos, "{", "}")
            options = self.text[self.pos + 1 : close]
            parse_options(options, self.pos + 2)
            self.pos = close + 1
        elif self.pos < self.end and self.text[self.pos] == "(":
            close = self._matching(self.pos, "(", ")")
            nested = _Parser(self.text, self.pos + 1, close).element_list()
            self.pos = close + 1
        return PipelineElement(name, options, nested, self.text[start : self.pos], start + 1)

    def _matching(self, pos: int, opening: str, closing: str) -> int:
        depth = 0
        quote = None
        for index in range(pos, self.end):
            char = self.text[index]
            if quote is not None:
                quote = None if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == opening:
                depth += 1
            elif char == closing:
                depth -= 1
                if depth == 0:
                    return index
        raise PipelineError(f"missing '{closing}' to match '{opening}'", pos + 1)

    def _skip_spaces(self) -> None:
        while self.pos < self.end and self.text[self.pos].isspace():
            self.pos += 1
