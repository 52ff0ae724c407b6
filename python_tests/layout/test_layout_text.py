"""Layout/shape text: XLA's field order, canonical printing, round trips of every
conformance layout, and errors that name the offending token and column."""

from __future__ import annotations

import json

import pytest

import hlo_indexing
from hlo_indexing.errors import ParseError
from hlo_indexing.layout.text import LayoutParseError
from hlo_indexing.layout.types import COMBINE, Layout, Shape
from helpers import CONFORMANCE

VECTORS = CONFORMANCE / "tiled_layout" / "vectors.jsonl"  # ../shared beside the clone
LAYOUTS = (
    sorted({json.loads(line)["layout"] for line in VECTORS.read_text().splitlines() if line.strip()})
    if VECTORS.is_file()
    else []
)


@pytest.mark.skipif(not VECTORS.is_file(), reason=f"conformance vectors not found at {VECTORS}")
@pytest.mark.parametrize("text", LAYOUTS)
def test_every_conformance_layout_round_trips(text):
    assert str(Layout.parse(text)) == text


def test_fields_and_tiles():
    layout = hlo_indexing.Layout.parse("bf16[16,256]{1,0:T(8,128)(2,1)}")
    assert layout.minor_to_major == (1, 0)
    assert layout.tiles == ((8, 128), (2, 1))
    shape = Shape.parse("bf16[16,256]{1,0:T(8,128)(2,1)}")
    assert (shape.dtype, shape.dims, shape.layout) == ("bf16", (16, 256), layout)
    star = Layout.parse("{4,3,2,1,0:T(*,*,2,*,3)}")
    assert star.tiles == ((COMBINE, COMBINE, 2, COMBINE, 3),)


def test_all_fields_in_xla_order_round_trip():
    text = "{1,0:T(2,2)L(8)#(s32)*(s32)E(4)S(1)SC(0:1,2)(1:3)P(f32[3]{0})M(8)}"
    layout = Layout.parse(text)
    assert (layout.tail_padding_alignment, layout.element_size_bits, layout.memory_space) == (8, 4, 1)
    assert (layout.index_type, layout.pointer_type, layout.dynamic_metadata_bytes) == ("s32", "s32", 8)
    assert layout.split_configs == ((0, (1, 2)), (1, (3,)))
    assert str(layout) == text


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("{1, 0 : T( 8 , 128 )(2,1)}", "{1,0:T(8,128)(2,1)}"),
        ("{1,0:}", "{1,0}"),
        ("{1,0:D(D,C)T(2,2)}", "{1,0:T(2,2)}"),  # legacy dim level types are dropped
        ("F32[3,5]{1,0:T(2,2)}", "{1,0:T(2,2)}"),
    ],
)
def test_canonical_printing(text, canonical):
    assert str(Layout.parse(text)) == canonical


def test_scalars():
    assert str(Shape.parse("f32[]")) == "f32[]"
    assert str(Shape.parse("f32[]{:T(128)}")) == "f32[]{:T(128)}"
    assert Shape.parse("f32[]").layout == Layout()


@pytest.mark.parametrize(
    "text, column, words",
    [
        ("{1,0:T(0,2)}", 8, "tile size"),
        ("{1,0:T(2,-3)}", 10, "tile size"),
        ("{1,0:T(-1,2)}", 8, "tile size"),  # '*' must be written as '*'
        ("{1,0:T(2,*)}", 10, "'*' cannot be the last"),
        ("{1,0:T()}", 8, "tile size"),
        ("{1,1}", 4, "repeated dimension"),
        ("{0,2}", 1, "not a permutation"),
        ("f32[3,5]{0}", 9, "not a permutation"),
        ("{1,0:X(3)}", 6, "unknown layout field"),
        ("{1,0:E(4)T(2,2)}", 10, "out of order"),
        ("{1,0:T(2,2)T(2,2)}", 12, "repeated or out of order"),
        ("{1,0:T(2,2)", 12, "expected '}'"),
        ("{1,0:L(0)}", 8, "alignment"),
        ("f32[]{}", 6, "untiled scalar"),
        ("f32[?,3]", 5, "dimension size"),
        ("f32[3,5]{1,0} x", 15, "trailing"),
        ("f32[4294967296,4294967296]{1,0:T(3,3)}", 27, "overflows int64"),
        ("f32[4294967296,4294967296,4]", 1, "overflows int64"),
    ],
)
def test_errors_name_token_and_column(text, column, words):
    with pytest.raises(LayoutParseError) as info:
        Layout.parse(text) if text.startswith("{") else Shape.parse(text)
    error = info.value
    assert isinstance(error, ParseError)
    assert error.column == column and error.location.column == column
    assert words in error.message
    assert f"column {column}" in error.message
