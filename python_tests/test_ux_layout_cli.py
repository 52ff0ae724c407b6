"""Issue #20, item 5: ``hlo-indexing-layout SHAPE --maps`` prints the layout's maps, and
a large shape gets a picture, not a refusal: since issue #30 an overview by tiles that
fits the terminal (``--window`` draws elements).
The printed maps and offsets are checked point by point against
``hlo_indexing.layout.linear_index`` / ``physical_shape`` (the numeric placement)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlo_indexing.layout import linear_index, parse_shape
from hlo_indexing.maps.indexing_map import IndexingMap

LAYOUT = Path(sys.executable).parent / "hlo-indexing-layout"
BIG = "bf16[100,200]{1,0:T(8,128)(2,1)}"


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(LAYOUT), *argv], capture_output=True, text=True, timeout=120)


def test_maps_print_offset_and_tiled_coordinates_that_agree_with_the_placement():
    done = _run(BIG, "--maps")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{BIG}: physical shape 13x2x4x128x2x1, 26624 slots"
    offset = IndexingMap.parse(lines[1].removeprefix("offset: "))
    coordinates = IndexingMap.parse(lines[2].removeprefix("tiled coordinates: "))
    shape = parse_shape(BIG)
    points, images = offset.enumerate()
    assert len(points) == 100 * 200
    expected = [linear_index(shape, tuple(p)) for p in points.tolist()]
    assert images[:, 0].tolist() == expected
    # tiled coordinates, flattened row-major over the physical shape, give the offset
    points_c, coords = coordinates.enumerate()
    assert np.array_equal(points_c, points)
    physical = [13, 2, 4, 128, 2, 1]
    strides = [int(np.prod(physical[k + 1 :])) for k in range(len(physical))]
    assert (coords @ np.array(strides)).tolist() == expected


def test_large_shape_is_an_overview_not_refused():
    done = _run(BIG)
    assert done.returncode == 0, done.stderr
    shape = parse_shape(BIG)
    rows = [line for line in done.stdout.splitlines() if re.match(r"^ *\d+:", line)]
    assert len(rows) == 10  # 13 tile rows: the first and last five
    for line in rows:
        i, cells = int(line.split(":")[0]), line.split(":")[1].split()
        for j, cell in enumerate(c for c in cells if c != "..."):
            assert int(cell.rstrip("*")) == linear_index(shape, (8 * i, 128 * j)) // 1024


@pytest.mark.parametrize(
    "layout, tile_of",
    [
        # row-major 8x128 tiles of a 4096x4096 array: 32 tiles a row, in order
        ("{1,0:T(8,128)}", lambda i, j: 32 * i + j),
        # column-major: the tiles are 128x8 (logical), 32 down a column, in order down the columns
        ("{0,1:T(8,128)}", lambda i, j: 32 * j + i),
    ],
)
def test_a_4096_square_tiled_layout_is_a_bounded_overview_by_tiles(layout, tile_of):
    done = subprocess.run(
        [str(LAYOUT), f"f32[4096,4096]{layout}"], capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "80"}
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= 24 and max(map(len, lines)) <= 80  # fits an 80x24 terminal
    assert "--window=" in done.stdout  # how to see elements
    cells = [line for line in lines if re.match(r"^ *\d+:", line)]
    header = [int(c) for c in lines[lines.index(cells[0]) - 1].split() if c != "..."]
    assert header[0] == 0 and header[-1] in (31, 511)  # first and last tile columns
    for line in cells:
        i, values = int(line.split(":")[0]), [int(v) for v in line.split(":")[1].split() if v != "..."]
        assert values == [tile_of(i, j) for j in header]


def test_window_and_max_cells():
    done = _run("f32[3,5]{1,0:T(2,2)}", "--window=1:3,:")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:] == ["row 1:    2    3     6    7    10 (11)", "", "row 2:   12   13    16   17    20 (21)"]
    done = _run("f32[3,5]{1,0:T(2,2)}", "--max-cells=6")  # more cells than allowed: the overview by 2x2 tiles
    assert "a 2x3 grid of tiles of 2x2 elements" in done.stdout
    done = _run("f32[3,5]{1,0:T(2,2)}", "--max-cells=6", "--window=0:2,0:3")
    assert "showing cells [0:2, 0:3] of the 4x6 grid" in done.stdout
    for bad, message in (("--window=1:9,:", "outside [0, 4]"), ("--window=1", "expected 2 comma-separated"),
                         ("--max-cells=0", "at least 1")):
        done = _run("f32[3,5]{1,0:T(2,2)}", bad)
        assert done.returncode == 1 and message in done.stderr, (bad, done.stderr)
