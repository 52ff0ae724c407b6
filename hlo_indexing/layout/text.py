"""XLA's layout notation: parsing :class:`Layout` and :class:`Shape` text (the values are in
:mod:`hlo_indexing.layout.types`).

Grammar (XLA's printer and parser agree; fields are optional but must come in this order)::

    layout := '{' [int (',' int)*] [':' ['D' paren] ['T' tile+] ['L(' n ')'] ['#(' type ')']
              ['*(' type ')'] ['E(' n ')'] ['S(' n ')'] ['SC' ('(' n ':' n,... ')')+]
              ['P(' shape ')'] ['M(' n ')']] '}'
    tile   := '(' dim (',' dim)* ')'     dim := positive int | '*'
    shape  := dtype '[' [int (',' int)*] ']' [layout]

``D(...)`` (legacy dim level types) is parsed and dropped, as XLA does. ``*`` in a tile
(combine with the next more-minor dimension) is stored as :data:`COMBINE` (-1).

Example::

    >>> s = Shape.parse("bf16[16,256]{1,0:T(8,128)(2,1)}")
    >>> s.dtype, s.dims, s.layout.tiles
    ('bf16', (16, 256), ((8, 128), (2, 1)))
    >>> str(Layout.parse("{1,0 : T(8, 128)(2,1)L(1024)}"))
    '{1,0:T(8,128)(2,1)L(1024)}'

Malformed text raises :class:`LayoutParseError` naming the offending token and its column.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from hlo_indexing.errors import ParseError, SourceLocation
from hlo_indexing.layout.tiling import check_padded_size
from hlo_indexing.layout.types import COMBINE, INT64_MAX, Layout, Shape


class LayoutParseError(ParseError):
    """Malformed or invalid layout/shape text; ``location.column`` is the 1-based column
    of the offending token."""

    def __init__(self, message: str, text: str, column: int):
        super().__init__(message, SourceLocation("<layout>", 1, column))
        self.text = text
        self.column = column


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

    def shape(self) -> Shape:
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
        if explicit:
            if not dims and self.tokens[self.i + 1][1] == "}":
                raise self.error("an untiled scalar has no layout braces ('f32[]')", brace)
            layout = self.layout(rank=len(dims))
        else:
            layout = Layout.row_major(len(dims))
        shape = Shape(dtype.lower(), tuple(dims), layout)
        try:
            check_padded_size(shape.dims, layout)
        except OverflowError as exc:
            raise self.error(f"{exc} for shape '{shape}'", brace if explicit else self.tokens[0]) from None
        return shape

    def layout(self, rank: int | None) -> Layout:
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
        values: dict[str, Any] = {}  # Layout's keyword arguments
        if self.accept(":"):
            self.fields(values)
        self.take("}")
        return Layout(tuple(m2m), **values)

    # fields in XLA's fixed order; each key is the field's introducer
    _ORDER = ("D", "T", "L", "#", "*", "E", "S", "SC", "P", "M")

    def fields(self, values: dict[str, object]) -> None:
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


@functools.lru_cache(maxsize=4096)
def parse_layout(text: str) -> Layout:
    """Parse a layout alone (``{1,0:T(2,2)}``) or the layout of a shape text
    (``f32[3,5]{1,0:T(2,2)}``). Layouts are immutable: a text parsed before gives the
    same object (the tiling ranking reads each operand's layout text per fusion)."""
    if text.strip().startswith("{"):
        parser = _Parser(text)
        layout = parser.layout(rank=None)
        parser.end()
        return layout
    return parse_shape(text).layout


def parse_shape(text: str) -> Shape:
    """Parse ``dtype[d0,...]{layout}``; the layout defaults to row-major. The layout is
    checked against the dims (a permutation of them, padded size within int64)."""
    parser = _Parser(text)
    shape = parser.shape()
    parser.end()
    return shape
