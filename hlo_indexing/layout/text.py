"""XLA's layout notation: the parser of layout and shape text, below the values it
describes (:mod:`hlo_indexing.layout.types`, whose ``Layout.parse`` and ``Shape.parse``
are built on it): it gives a layout's minor-to-major order and keyword fields, and a
shape's element type and dimensions.

Grammar (XLA's printer and parser agree; fields are optional but must come in this order)::

    layout := '{' [int (',' int)*] [':' ['D' paren] ['T' tile+] ['L(' n ')'] ['#(' type ')']
              ['*(' type ')'] ['E(' n ')'] ['S(' n ')'] ['SC' ('(' n ':' n,... ')')+]
              ['P(' shape ')'] ['M(' n ')']] '}'
    tile   := '(' dim (',' dim)* ')'     dim := positive int | '*'
    shape  := dtype '[' [int (',' int)*] ']' [layout]

``D(...)`` (legacy dim level types) is parsed and dropped, as XLA does. ``*`` in a tile
(combine with the next more-minor dimension) is stored as :data:`COMBINE` (-1).

Example::

    >>> parse_shape_text("bf16[16,256]{1,0:T(8,128)(2,1)}")
    ShapeText(dtype='bf16', dims=(16, 256), layout=LayoutText(minor_to_major=(1, 0), fields={'tiles': ((8, 128), (2, 1))}), layout_column=12)

Malformed text raises :class:`LayoutParseError` naming the offending token and its column.
"""

from __future__ import annotations

import re
from typing import NamedTuple, TypedDict

from hlo_indexing.errors import ParseError, SourceLocation
from hlo_indexing.layout.tiling import COMBINE
from hlo_indexing.limits import INT64_MAX


class LayoutParseError(ParseError):
    """Malformed or invalid layout/shape text; ``location.column`` is the 1-based column
    of the offending token."""

    def __init__(self, message: str, text: str, column: int):
        super().__init__(message, SourceLocation("<layout>", 1, column))
        self.text = text
        self.column = column


class LayoutFields(TypedDict, total=False):
    """The fields of a layout besides its order, as written (absent: ``Layout``'s default)."""

    tiles: tuple[tuple[int, ...], ...]
    tail_padding_alignment: int
    index_type: str
    pointer_type: str
    element_size_bits: int
    memory_space: int
    split_configs: tuple[tuple[int, tuple[int, ...]], ...]
    sparse_physical_shape: str
    dynamic_metadata_bytes: int


class LayoutText(NamedTuple):
    """A layout as written: its minor-to-major order and its other fields, keyed by the
    keyword of ``Layout`` (``tiles``, ``tail_padding_alignment``, ...; absent: default)."""

    minor_to_major: tuple[int, ...]
    fields: LayoutFields


class ShapeText(NamedTuple):
    """A shape as written: element type (lower case), dimensions, layout (None: none
    written, row-major) and the column where errors about the layout point (its ``{``, or
    the element type without one)."""

    dtype: str
    dims: tuple[int, ...]
    layout: LayoutText | None
    layout_column: int


_TOKEN = re.compile(r"\s*(?:(?P<int>-?\d+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>\S))")


class _Parser:
    """A tokenizer + recursive-descent parser that remembers token columns for errors."""

    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, 1-based column)
        pos = 0
        while True:
            match = _TOKEN.match(text, pos)
            if match is None:
                break
            kind = match.lastgroup
            assert kind is not None  # every alternative of _TOKEN is a named group
            self.tokens.append((kind, match.group(kind), match.start(kind) + 1))
            pos = match.end()
        self.tokens.append(("end", "end of text", len(text) + 1))
        self.i = 0

    # -- token helpers

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def error(self, message: str, token: tuple[str, str, int] | None = None) -> LayoutParseError:
        kind, value, column = token or self.peek()
        shown = value if kind == "end" else f"'{value}'"
        return LayoutParseError(f"{message} at column {column}, found {shown}", self.text, column)

    def take(self, value: str, closing: str = "") -> tuple[str, str, int]:
        token = self.peek()
        if token[1] != value or token[0] == "end":
            also = f" or '{closing}'" if closing else ""  # a list separator: the list may end here too
            raise self.error(f"expected '{value}'{also}")
        self.i += 1
        return token

    def accept(self, value: str) -> bool:
        if self.peek()[1] == value and self.peek()[0] != "end":
            self.i += 1
            return True
        return False

    def integer(self, what: str, minimum: int = 0) -> int:
        token = self.peek()
        if token[0] != "int":
            raise self.error(f"expected {what}")
        value = int(token[1])
        if value < minimum or value > INT64_MAX:
            raise self.error(f"{what} must be in [{minimum}, {INT64_MAX}]")
        self.i += 1
        return value

    def end(self) -> None:
        if self.peek()[0] != "end":
            raise self.error("unexpected trailing text")

    def balanced(self) -> str:
        """The text inside a parenthesised group (nested parens allowed), consumed."""
        start = self.take("(")
        depth = 1
        while depth:
            token = self.peek()
            if token[0] == "end":
                raise self.error("unbalanced '('", start)
            depth += {"(": 1, ")": -1}.get(token[1], 0) if token[0] == "punct" else 0
            self.i += 1
        return self.text[start[2] : self.tokens[self.i - 1][2] - 1].strip()

    # -- grammar

    def shape(self) -> ShapeText:
        kind, dtype, _ = self.peek()
        if kind != "word":
            raise self.error("expected an element type")
        self.i += 1
        self.take("[")
        dims: list[int] = []
        if not self.accept("]"):
            while True:
                dims.append(self.integer("a dimension size"))
                if self.accept("]"):
                    break
                self.take(",", "]")
        brace = self.peek()
        explicit = brace[1] == "{" and brace[0] == "punct"
        layout = None
        if explicit:
            if not dims and self.tokens[self.i + 1][1] == "}":
                raise self.error("an untiled scalar has no layout braces ('f32[]')", brace)
            layout = self.layout(rank=len(dims))
        return ShapeText(dtype.lower(), tuple(dims), layout, (brace if explicit else self.tokens[0])[2])

    def layout(self, rank: int | None) -> LayoutText:
        open_brace = self.take("{")
        m2m: list[int] = []
        if self.peek()[0] == "int":
            while True:
                token = self.peek()
                value = self.integer("a dimension number")
                if value in m2m:
                    raise self.error("repeated dimension in minor_to_major", token)
                m2m.append(value)
                if not self.accept(","):
                    break
        bad = [d for d in m2m if d >= len(m2m)]
        if bad or (rank is not None and len(m2m) != rank):
            expected = len(m2m) if rank is None else rank
            raise self.error(
                f"minor_to_major {{{','.join(map(str, m2m))}}} is not a permutation of 0..{expected - 1}", open_brace
            )
        values: LayoutFields = {}  # Layout's keyword arguments
        if self.accept(":"):
            self.fields(values)
        self.take("}")
        return LayoutText(tuple(m2m), values)

    # fields in XLA's fixed order; each key is the field's introducer
    _ORDER = ("D", "T", "L", "#", "*", "E", "S", "SC", "P", "M")

    def fields(self, values: LayoutFields) -> None:
        last = -1
        while self.peek()[1] != "}" and self.peek()[0] != "end":
            token = self.peek()
            name = token[1]
            if name not in self._ORDER:
                raise self.error(f"unknown layout field (expected one of {' '.join(self._ORDER)})")
            position = self._ORDER.index(name)
            if position <= last:
                raise self.error(f"layout field '{name}' is repeated or out of order (order is {' '.join(self._ORDER)})")
            last = position
            self.i += 1
            if name == "D":
                self.balanced()
            elif name == "T":
                values["tiles"] = self.tiles()
            elif name == "L":
                values["tail_padding_alignment"] = self.paren_int("an L(n) alignment", 1)
            elif name == "#":
                values["index_type"] = self.balanced()
            elif name == "*":
                values["pointer_type"] = self.balanced()
            elif name == "E":
                values["element_size_bits"] = self.paren_int("an element size in bits", 0)
            elif name == "S":
                values["memory_space"] = self.paren_int("a memory space", 0)
            elif name == "SC":
                values["split_configs"] = self.split_configs()
            elif name == "P":
                values["sparse_physical_shape"] = self.balanced()
            else:
                values["dynamic_metadata_bytes"] = self.paren_int("a metadata size in bytes", 0)

    def paren_int(self, what: str, minimum: int) -> int:
        self.take("(")
        value = self.integer(what, minimum)
        self.take(")")
        return value

    def tiles(self) -> tuple[tuple[int, ...], ...]:
        tiles = []
        while self.peek()[1] == "(":
            self.i += 1
            tile: list[int] = []
            while True:
                token = self.peek()
                if token[1] == "*" and token[0] == "punct":
                    self.i += 1
                    tile.append(COMBINE)
                else:
                    tile.append(self.integer("a tile size (a positive integer or '*')", 1))
                if self.accept(")"):
                    break
                self.take(",", ")")
            if tile[-1] == COMBINE:
                raise self.error("'*' cannot be the last (most minor) entry of a tile", token)
            tiles.append(tuple(tile))
        if not tiles:
            raise self.error("expected '(' starting a tile after 'T'")
        return tuple(tiles)

    def split_configs(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        configs = []
        while self.accept("("):
            dimension = self.integer("a split dimension")
            self.take(":")
            indices = [self.integer("a split index")]
            while self.accept(","):
                indices.append(self.integer("a split index"))
            self.take(")")
            configs.append((dimension, tuple(indices)))
        if not configs:
            raise self.error("expected '(' starting a split config after 'SC'")
        return tuple(configs)


def parse_layout_text(text: str) -> LayoutText:
    """A layout alone (``{1,0:T(2,2)}``); :class:`LayoutParseError` when malformed."""
    parser = _Parser(text)
    layout = parser.layout(rank=None)
    parser.end()
    return layout


def parse_shape_text(text: str) -> ShapeText:
    """``dtype[d0,...]{layout}`` (the layout, if written, a permutation of the dims);
    :class:`LayoutParseError` when malformed."""
    parser = _Parser(text)
    shape = parser.shape()
    parser.end()
    return shape


def layout_error(text: str, message: str, column: int) -> LayoutParseError:
    """The error about ``text`` at ``column`` (1-based), worded as the parser's own."""
    parser = _Parser(text)
    token = next((t for t in parser.tokens if t[2] >= column), parser.tokens[-1])
    return parser.error(message, token)
