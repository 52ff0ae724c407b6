"""Property suite: random shapes and layouts (ranks 1-5, permutations, 1-3 tiles, '*',
uneven sizes, size-1 dims), checked against a brute-force oracle written here,
independently of ``hlo_indexing.layout``: it builds the physical buffer of element ids
with numpy pad/reshape/transpose, one tile at a time, from ``spec/tiled-layout.md``."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing.layout.lowering import linear_offset_map, logical_index_map, tiled_coordinates_map
from hlo_indexing.layout.packing import pack, unpack
from hlo_indexing.layout.tiling import linear_index, logical_index, padded_size, physical_shape
from hlo_indexing.layout.types import Shape
from hlo_indexing.maps import affine_expr as ax

STAR = -1


# ------------------------------------------------------------------ oracle


def buffer_of_ids(dims, minor_to_major, tiles):
    """The physical buffer (1-D int64) holding id ``k+1`` for logical element ``k``
    (row-major numbering); 0 marks padding."""
    count = int(np.prod(dims, dtype=np.int64))
    a = np.arange(1, count + 1, dtype=np.int64).reshape(dims)
    a = a.transpose(list(reversed(minor_to_major)))
    for tile in tiles:
        shape = list(a.shape)
        while len(shape) < len(tile):
            shape.insert(0, 1)
        base = len(shape) - len(tile)
        new_shape, new_tile, carry = shape[:base], [], 1
        for extent, t in zip(shape[base:], tile):
            if t == STAR:
                carry *= extent
                continue
            new_shape.append(carry * extent)
            new_tile.append(t)
            carry = 1
        a = a.reshape(new_shape)
        k, n = len(new_tile), len(new_shape)
        a = np.pad(a, [(0, 0)] * (n - k) + [(0, (-e) % t) for e, t in zip(new_shape[n - k :], new_tile)])
        split = list(a.shape[: n - k])
        for e, t in zip(a.shape[n - k :], new_tile):
            split += [e // t, t]
        order = list(range(n - k)) + [n - k + 2 * i for i in range(k)] + [n - k + 2 * i + 1 for i in range(k)]
        a = a.reshape(split).transpose(order)
    return np.ascontiguousarray(a).reshape(-1)


def oracle_offsets(dims, minor_to_major, tiles):
    """(offset of each element as an array of shape ``dims``, buffer size)."""
    buffer = buffer_of_ids(dims, minor_to_major, tiles)
    positions = np.nonzero(buffer)[0]
    result = np.empty(int(np.prod(dims, dtype=np.int64)), np.int64)
    result[buffer[positions] - 1] = positions
    return result.reshape(dims), buffer.size


def random_layout(rng, max_slots=4000):
    while True:
        rank = int(rng.integers(1, 6))
        dims = [int(rng.choice([1, 1, 2, 3, 4, 5, 7])) for _ in range(rank)]
        m2m = [int(v) for v in rng.permutation(rank)]
        tiles = []
        for _ in range(int(rng.integers(1, 4))):
            tile = [int(rng.choice([1, 2, 3, 4, 8])) for _ in range(int(rng.integers(1, rank + 2)))]
            for j in range(len(tile) - 1):
                if rng.random() < 0.2:
                    tile[j] = STAR
            tiles.append(tuple(tile))
        if buffer_of_ids(dims, m2m, tiles).size <= max_slots:
            return dims, m2m, tiles


def text_of(dims, m2m, tiles):
    tile_text = "".join("(" + ",".join("*" if t == STAR else str(t) for t in tile) + ")" for tile in tiles)
    return f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}:T{tile_text}}}"


def cases(seed, count):
    rng = np.random.default_rng(seed)
    return [random_layout(rng) for _ in range(count)]


# ------------------------------------------------------------------ tests


@pytest.mark.parametrize("chunk", range(4))
def test_pack_unpack_and_placement_match_oracle(chunk):
    """2,000 random layouts: pack places every element where the oracle does, padding
    holds the fill value, unpack(pack(x)) == x; sizes and shapes agree."""
    rng = np.random.default_rng(1000 + chunk)
    for dims, m2m, tiles in cases(chunk, 500):
        shape = Shape.parse(text_of(dims, m2m, tiles))
        expected, size = oracle_offsets(dims, m2m, tiles)
        assert padded_size(shape) == size
        assert int(np.prod(physical_shape(shape))) == size
        x = rng.integers(1, 1000, size=dims).astype(np.int32)
        buffer = pack(x, shape.layout, fill=-7)
        assert buffer.shape == (size,) and buffer.dtype == x.dtype
        np.testing.assert_array_equal(buffer[expected], x)
        assert np.count_nonzero(buffer == -7) == size - x.size
        np.testing.assert_array_equal(unpack(buffer, shape), x)
        index = tuple(int(rng.integers(0, d)) for d in dims)
        assert linear_index(shape, index) == expected[index]
        offset = int(rng.integers(0, size))
        hit = np.argwhere(expected == offset)
        assert logical_index(shape, offset) == (tuple(hit[0].tolist()) if len(hit) else None)


def test_lowered_maps_match_oracle():
    """300 random layouts: the three lowered maps, enumerated, give the oracle's
    placement exactly (the inverse excludes every padding slot)."""
    for dims, m2m, tiles in cases(77, 300):
        shape = Shape.parse(text_of(dims, m2m, tiles))
        expected, size = oracle_offsets(dims, m2m, tiles)
        points, images = linear_offset_map(shape).enumerate()
        np.testing.assert_array_equal(images[:, 0], expected[tuple(points.T)])
        points, coords = tiled_coordinates_map(shape).enumerate()
        tiled = np.asarray(physical_shape(shape))
        assert (coords >= 0).all() and (coords < tiled).all()
        np.testing.assert_array_equal(np.ravel_multi_index(tuple(coords.T), tiled), expected[tuple(points.T)])
        points, logical = logical_index_map(shape).enumerate()
        assert len(points) == expected.size
        np.testing.assert_array_equal(expected[tuple(logical.T)], points[:, 0])


def _has_div_or_mod(m) -> bool:
    found = []
    for expr in m.results:
        ax.walk(expr, lambda e: found.append(isinstance(e, (ax.Mod, ax.FloorDiv, ax.CeilDiv))))
    return any(found)


def test_untiled_layouts_lower_to_plain_linearisation():
    rng = np.random.default_rng(5)
    for _ in range(100):
        rank = int(rng.integers(1, 6))
        dims = [int(v) for v in rng.integers(1, 9, size=rank)]
        m2m = [int(v) for v in rng.permutation(rank)]
        shape = Shape.parse(f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}}}")
        forward = linear_offset_map(shape)
        assert not _has_div_or_mod(forward), str(forward)
        assert not _has_div_or_mod(tiled_coordinates_map(shape))
        # the plain linearisation: sum of index * stride over the physical order
        strides, acc = [0] * rank, 1
        for d in m2m:
            strides[d], acc = acc, acc * dims[d]
        points, images = forward.enumerate()
        np.testing.assert_array_equal(images[:, 0], points @ np.array(strides))


def test_figure_one_maps():
    shape = Shape.parse("F32[3,5]{1,0:T(2,2)}")
    assert linear_offset_map(shape).evaluate((2, 3)) == (17,)
    coords = tiled_coordinates_map(shape)
    assert str(coords.affine_map) == "(d0, d1) -> (d0 floordiv 2, d1 floordiv 2, d0 mod 2, d1 mod 2)"
    assert logical_index_map(shape).evaluate((17,)) == (2, 3)
    assert not logical_index_map(shape).contains_point((9,))  # slot 9 is (0, 5) of tile (0, 2): padding


def test_simplification_tightens_size_one_tiles():
    """A 2-D tile on a 1-D array adds a size-1 major dim: no floordiv/mod survives."""
    m = linear_offset_map(Shape.parse("f32[3]{0:T(8,128)}"))
    assert str(m) == "(d0) -> (d0), domain: d0 in [0, 2]"
    assert str(logical_index_map(Shape.parse("f32[3]{0:T(8,128)}"))) == "(d0) -> (d0), domain: d0 in [0, 2]"
