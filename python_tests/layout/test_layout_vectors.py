"""The 300 conformance vectors of conformance/tiled_layout: placement, sizes, printing,
lowered maps and pack/unpack must reproduce every one."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hlo_indexing.layout.lowering import linear_offset_map, logical_index_map, tiled_coordinates_map
from hlo_indexing.layout.packing import pack, unpack
from hlo_indexing.layout.tiling import linear_index, logical_index, padded_size, physical_shape
from hlo_indexing.layout.types import Shape
from helpers import CONFORMANCE

VECTORS = CONFORMANCE / "tiled_layout" / "vectors.jsonl"  # ../shared beside the clone
CASES = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()] if VECTORS.is_file() else []

pytestmark = pytest.mark.skipif(not VECTORS.is_file(), reason=f"conformance vectors not found at {VECTORS}")


def shape_text(case: dict) -> str:
    layout = "" if case["layout"] == "{}" else case["layout"]
    return f"{case['dtype']}[{','.join(map(str, case['shape']))}]{layout}"


def test_all_vectors_loaded():
    assert len(CASES) == 300


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case):
    text = shape_text(case)
    shape = Shape.parse(text)
    assert str(shape) == text
    assert physical_shape(shape) == tuple(case["tiled_shape"])
    assert padded_size(shape) == case["padded_elements"]
    samples = np.array(case["samples"], dtype=np.int64).reshape(-1, len(case["shape"]) + 1)
    for *index, offset in samples.tolist():
        assert linear_index(shape, index) == offset
        assert logical_index(shape, offset) == tuple(index)
    if not samples.size:
        return
    # lowered maps, evaluated at every sample
    forward = linear_offset_map(shape)
    coords = tiled_coordinates_map(shape)
    inverse = logical_index_map(shape)
    strides = np.cumprod((case["tiled_shape"][1:] + [1])[::-1])[::-1]
    for *index, offset in samples.tolist():
        assert forward.evaluate(index) == (offset,)
        assert int(np.dot(coords.evaluate(index), strides)) == offset
        assert inverse.evaluate([offset]) == tuple(index)
        assert inverse.contains_point([offset])
    # pack puts each sampled element at its offset; unpack inverts it
    x = np.arange(1, math.prod(shape.dims) + 1, dtype=np.int64).reshape(shape.dims)
    buffer = pack(x, shape.layout, fill=0)
    assert buffer.size == case["padded_elements"]
    assert np.count_nonzero(buffer) == x.size
    for *index, offset in samples.tolist():
        assert buffer[offset] == x[tuple(index)]
    np.testing.assert_array_equal(unpack(buffer, shape), x)


@pytest.mark.parametrize("case", [c for c in CASES if 0 < math.prod(c["shape"]) <= 4096], ids=lambda c: c["id"])
def test_inverse_map_excludes_exactly_the_padding(case):
    shape = Shape.parse(shape_text(case))
    inverse = logical_index_map(shape)
    points, images = inverse.enumerate(max_points=10**6)
    assert len(points) == math.prod(shape.dims)
    for offset, index in zip(points[:, 0].tolist()[:50], images.tolist()[:50]):
        assert linear_index(shape, index) == offset
