"""TPU default tilings and the 32-bit word holding each element of packed formats."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing.layout.tpu import element_bits, tpu_default_layout, word_position
from hlo_indexing.layout.types import Layout, Shape


@pytest.mark.parametrize(
    "dtype, dims, expected",
    [
        ("f32", (16, 256), "{1,0:T(8,128)}"),
        ("f32", (5, 7, 300), "{2,1,0:T(8,128)}"),
        ("f32", (1, 256), "{1,0:T(2,128)}"),
        ("s32", (2, 256), "{1,0:T(2,128)}"),
        ("f32", (3, 256), "{1,0:T(4,128)}"),
        ("f32", (4, 256), "{1,0:T(4,128)}"),
        ("bf16", (16, 256), "{1,0:T(8,128)(2,1)}"),
        ("bf16", (2, 256), "{1,0:T(2,128)(2,1)}"),
        ("s8", (16, 256), "{1,0:T(8,128)(4,1)}"),
        ("s4", (64, 256), "{1,0:T(8,128)(8,1)E(4)}"),
        ("f32", (), "{}"),
    ],
)
def test_default_layouts_follow_the_spec(dtype, dims, expected):
    assert str(tpu_default_layout(dtype, dims)) == expected


def test_one_bit_pred():
    assert str(tpu_default_layout("pred", (64, 256), bits=1)) == "{1,0:T(32,128)(32,1)E(1)}"
    assert element_bits("pred") == 8


@pytest.mark.parametrize(
    "text, per_word",
    [
        ("bf16[16,256]{1,0:T(8,128)(2,1)}", 2),
        ("s8[32,256]{1,0:T(8,128)(4,1)}", 4),
        ("pred[64,256]{1,0:T(32,128)(32,1)E(1)}", 32),
    ],
)
def test_packed_formats_put_a_column_of_rows_in_one_word(text, per_word):
    """Rows r..r+per_word-1 (r a multiple of per_word) of one column share a 32-bit word,
    at positions 0..per_word-1; distinct groups never share a word."""
    shape = Shape.parse(text)
    rows, cols = shape.dims
    seen = {}
    for r in range(rows):
        for c in range(0, cols, 37):
            word, position = word_position(shape, (r, c))
            assert position == r % per_word
            group = (r // per_word, c)
            assert seen.setdefault(word, group) == group
    assert len(seen) == len(range(0, cols, 37)) * rows // per_word


def test_wide_types_take_whole_words():
    shape = Shape.parse("f64[2,3]{1,0}")
    assert word_position(shape, (1, 2)) == (10, 0)
    assert word_position(Shape.parse("f32[2,3]{0,1}"), (1, 2)) == (5, 0)


def test_default_layouts_place_every_element_once():
    rng = np.random.default_rng(3)
    for _ in range(50):
        dims = tuple(int(v) for v in rng.integers(1, 12, size=int(rng.integers(1, 4))))
        dtype = str(rng.choice(["f32", "bf16", "s8", "s4"]))
        layout = tpu_default_layout(dtype, dims)
        shape = Shape(dtype, dims, layout)
        offsets = {layout.linear_index(shape, idx) for idx in np.ndindex(*dims)}
        assert len(offsets) == int(np.prod(dims)) and max(offsets) < layout.padded_size(shape)
        assert isinstance(layout, Layout)
