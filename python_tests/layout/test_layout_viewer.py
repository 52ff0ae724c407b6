"""The layout viewer (``hlo-indexing-layout``), in process: every printed cell is the
element's offset (checked against the brute-force oracle of the property suite), padding
is marked, SVG output is well-formed, and errors exit 1 without writing ``-o``."""

from __future__ import annotations

import re
import xml.dom.minidom
from pathlib import Path

import pytest

from hlo_indexing.tools.show_layout import main
from helpers import load_module


oracle_offsets = load_module(Path(__file__).with_name("test_layout_property.py")).oracle_offsets


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "text, dims, m2m, tiles",
    [
        ("f32[3,5]{1,0:T(2,2)}", [3, 5], [1, 0], [(2, 2)]),
        ("f32[4,8]{1,0:T(2,4)(2,1)}", [4, 8], [1, 0], [(2, 4), (2, 1)]),
        ("f32[3,7]{0,1:T(2,4)}", [3, 7], [0, 1], [(2, 4)]),
        ("f32[5]{0:T(2)}", [5], [0], [(2,)]),
    ],
)
def test_cells_are_offsets(capsys, text, dims, m2m, tiles):
    code, out, _ = run(capsys, text)
    assert code == 0
    rows = [line.split(":", 1)[1] for line in out.splitlines()[1:] if line.startswith("row")]
    expected, size = oracle_offsets(dims, m2m, tiles)
    expected = expected.reshape(-1, dims[-1])
    padding_seen = set()
    for r, row in enumerate(rows):
        cells = re.findall(r"\(?\d+\)?", row)
        for c, cell in enumerate(cells):
            if cell.startswith("("):
                padding_seen.add(int(cell[1:-1]))
                assert r >= expected.shape[0] or c >= expected.shape[1]
            else:
                assert int(cell) == expected[r, c]
    data = set(expected.reshape(-1).tolist())
    assert padding_seen.isdisjoint(data) and all(p < size for p in padding_seen)
    assert f"{size} slots" in out.splitlines()[0]


def test_svg_written_only_on_success(capsys, tmp_path):
    good, bad = tmp_path / "good.svg", tmp_path / "bad.svg"
    assert run(capsys, "--format=svg", "-o", str(good), "f32[3,5]{1,0:T(2,2)}")[0] == 0
    document = xml.dom.minidom.parse(str(good))
    titles = [t.firstChild.data for t in document.getElementsByTagName("title")]
    assert "(2, 3) -> 17" in titles and sum("(padding)" in t for t in titles) == 9
    code, out, err = run(capsys, "--format=svg", "-o", str(bad), "f32[3,5]{1,0:T(2,*)}")
    assert code == 1 and not bad.exists() and out == ""
    assert err.startswith("<layout>:1:18: error: '*' cannot be the last")


def _overview_cells(out: str) -> dict[tuple[int, int], str]:
    """(block row, block column) -> cell text of a 2-D overview (rows ``i:``, the column
    header the line above the first row)."""
    lines = out.splitlines()
    first = next(k for k, line in enumerate(lines) if re.match(r"^ *0:", line))
    columns = [int(c) for c in lines[first - 1].split() if c != "..."]
    cells = {}
    for line in lines[first:]:
        label, sep, rest = line.partition(":")
        if sep and label.strip().isdigit():
            values = [v for v in rest.split() if v != "..."]
            cells.update({(int(label), j): v for j, v in zip(columns, values)})
    return cells


def test_too_wide_grid_is_an_overview_of_tiles_checked_by_the_oracle(capsys, monkeypatch):
    # issue #30: a grid wider than the terminal gets an overview by tiles, not 32,805-character lines
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "f32[40,300]{1,0:T(8,128)}")
    assert code == 0 and err == ""
    assert all(len(line) <= 80 for line in out.splitlines())
    offsets, _ = oracle_offsets([40, 300], [1, 0], [(8, 128)])
    cells = _overview_cells(out)
    assert sorted(cells) == [(i, j) for i in range(5) for j in range(3)]  # 40x300 in 8x128 tiles: 5x3
    for (i, j), text in cells.items():
        assert int(text.rstrip("*")) == offsets[8 * i, 128 * j] // 1024  # the memory tile of the tile's first element
        assert text.endswith("*") == (128 * (j + 1) > 300)  # the last tile column holds padding
