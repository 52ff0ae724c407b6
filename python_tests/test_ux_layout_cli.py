"""Issue #20, item 5: ``hlo-indexing-layout SHAPE --maps`` prints the layout's maps, and
a large shape gets a cropped picture (``--window`` / ``--max-cells``), not a refusal.
The printed maps and offsets are checked point by point against
``hlo_indexing.layout.linear_index`` / ``physical_shape`` (the numeric placement)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

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


def test_large_shape_is_cropped_not_refused():
    done = _run(BIG)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == (
        "showing cells [0:78, 0:256] of the 104x256 grid (19968 of 26624 cells; --window, --max-cells to change)"
    )
    rows = [line for line in lines if line.startswith("row ")]
    assert len(rows) == 78
    shape = parse_shape(BIG)
    for line in rows[:10]:
        r = int(line.split(":")[0].removeprefix("row "))
        cells = [int(v) for v in re.findall(r"\(?(\d+)\)?", line.split(":", 1)[1])]
        assert cells[:200] == [linear_index(shape, (r, c)) for c in range(200)]


def test_window_and_max_cells():
    done = _run("f32[3,5]{1,0:T(2,2)}", "--window=1:3,:")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:] == ["row 1:    2    3     6    7    10 (11)", "", "row 2:   12   13    16   17    20 (21)"]
    done = _run("f32[3,5]{1,0:T(2,2)}", "--max-cells=6")
    assert "showing cells [0:1, 0:6] of the 4x6 grid" in done.stdout
    for bad, message in (("--window=1:9,:", "outside [0, 4]"), ("--window=1", "expected 2 comma-separated"),
                         ("--max-cells=0", "at least 1")):
        done = _run("f32[3,5]{1,0:T(2,2)}", bad)
        assert done.returncode == 1 and message in done.stderr, (bad, done.stderr)
