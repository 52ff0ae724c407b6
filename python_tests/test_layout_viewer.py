"""The layout viewer (``hlo-indexing-layout``), in process: every printed cell is the
element's offset (checked against the brute-force oracle of the property suite), padding
is marked, SVG output is well-formed, and errors exit 1 without writing ``-o``."""

from __future__ import annotations

import importlib.util
import re
import xml.dom.minidom
from pathlib import Path

import pytest

from hlo_indexing.tools.show_layout import main


def _load_oracle():
    """The brute-force oracle of the property suite (pytest runs in importlib mode, so
    sibling test files are loaded by path)."""
    spec = importlib.util.spec_from_file_location("layout_property", Path(__file__).with_name("test_layout_property.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.oracle_offsets


oracle_offsets = _load_oracle()


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


def test_too_large_grid_is_cropped(capsys):
    # issue #20: a cropped picture (the first rows that fit in --max-cells), not a refusal
    code, out, err = run(capsys, "f32[3000,5000]")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[1] == "showing cells [0:4, 0:5000] of the 3000x5000 grid (20000 of 15000000 cells; --window, --max-cells to change)"
    rows = [line for line in lines if line.startswith("row ")]
    assert len(rows) == 4 and rows[1].split()[2:4] == ["5000", "5001"]  # row-major: row 1 starts at 5000
