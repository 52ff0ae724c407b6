"""Property-based tests (hypothesis) of tiled layouts: ``linear_index`` is a bijection from
the logical indices onto the non-padding slots of ``[0, padded_size)``, inverted by
``logical_index``; the lowered maps denote the same placement (enumerated); a layout
survives print/parse; any text parses or raises an ``HloIndexingError``, and an index
out of range raises ``IndexOutOfRangeError`` (an ``IndexError``). Small budget; the
long campaign is ``python3 dev/run.py fuzz``."""

from __future__ import annotations

import itertools

import pytest

hypothesis = pytest.importorskip("hypothesis")  # the test extra installs it
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hlo_indexing.errors import HloIndexingError, IndexOutOfRangeError  # noqa: E402
from hlo_indexing.layout import lowering, tiling  # noqa: E402
from hlo_indexing.layout.types import COMBINE, Layout, Shape  # noqa: E402

BUDGET = settings(max_examples=80, deadline=None)


@st.composite
def shapes(draw) -> Shape:
    rank = draw(st.integers(0, 3))
    dims = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    order = tuple(draw(st.permutations(range(rank))))
    tiles = []
    for _ in range(draw(st.integers(0, 2))):
        size = draw(st.integers(1, 3))
        tile = [draw(st.sampled_from([1, 2, 3, 4, COMBINE])) for _ in range(size)]
        if tile[-1] == COMBINE:
            tile[-1] = draw(st.integers(1, 4))
        tiles.append(tuple(tile))
    alignment = draw(st.sampled_from([1, 1, 2, 3]))
    dtype = draw(st.sampled_from(["f32", "bf16", "s8", "pred"]))
    layout = Layout(order, tuple(tiles), alignment)
    braces = str(layout) if rank or tiles or alignment != 1 else ""  # an untiled scalar has none
    return Shape.parse(f"{dtype}[{','.join(map(str, dims))}]{braces}")


@BUDGET
@given(shapes())
def test_linear_index_is_a_bijection_inverted_by_logical_index(shape: Shape) -> None:
    size = tiling.padded_size(shape)
    offsets = {}
    for index in itertools.product(*(range(d) for d in shape.dims)):
        offset = tiling.linear_index(shape, index)
        assert 0 <= offset < size and offset not in offsets
        offsets[offset] = index
        assert tiling.logical_index(shape, offset) == index
    for offset in range(size):
        if offset not in offsets:
            assert tiling.logical_index(shape, offset) is tiling.PADDING


@BUDGET
@given(shapes())
def test_lowered_maps_denote_the_placement(shape: Shape) -> None:
    placement = {
        (tuple(index), (tiling.linear_index(shape, index),))
        for index in itertools.product(*(range(d) for d in shape.dims))
    }
    forward = lowering.linear_offset_map(shape)
    if 0 not in shape.dims:
        assert forward.relation(50_000) == placement
    backward = lowering.logical_index_map(shape)
    assert backward.relation(50_000) == {(offset, index) for index, offset in placement}


@BUDGET
@given(shapes())
def test_layout_survives_print_and_parse(shape: Shape) -> None:
    assert Shape.parse(str(shape)) == shape
    assert Layout.parse(str(shape.layout)) == shape.layout


@BUDGET
@given(shapes(), st.lists(st.integers(-2, 7), max_size=4), st.integers(-3, 3))
def test_out_of_range_is_index_out_of_range_error(shape: Shape, index: list[int], beyond: int) -> None:
    inside = len(index) == len(shape.dims) and all(0 <= i < d for i, d in zip(index, shape.dims))
    if inside:
        assert tiling.logical_index(shape, tiling.linear_index(shape, index)) == tuple(index)
    else:
        with pytest.raises(IndexOutOfRangeError):
            tiling.linear_index(shape, index)
    offset = tiling.padded_size(shape) + abs(beyond) if beyond >= 0 else beyond
    with pytest.raises(IndexError):  # IndexOutOfRangeError is one
        tiling.logical_index(shape, offset)


_LAYOUT_ALPHABET = st.sampled_from(
    list("{}[](),:*0123TLES") + ["f32", "bf16", "2147483648", "9223372036854775808", "T(", "L(", "E(", "-1"]
)


@BUDGET
@given(st.one_of(st.text(max_size=40), st.lists(_LAYOUT_ALPHABET, max_size=30).map("".join)))
def test_any_text_parses_or_raises_a_located_hierarchy_error(text: str) -> None:
    try:
        shape = Shape.parse(text)
    except HloIndexingError as exc:
        assert exc.location is not None, str(exc)
        return
    tiling.physical_shape(shape)
