"""``hlo-indexing-tile-view`` and :func:`hlo_indexing.tools.tile_view.tile_picture`: the
cells a picture highlights are the elements the output tile needs, checked against

* an independent evaluation of the fused maps (a numpy evaluator of their affine
  expressions over the whole domain, filtered to the output tile), and
* brute force on the computation itself (numpy: an operand element is needed when
  changing it changes an element of the output tile);

the SVG parses as XML and shows exactly those cells (``class="needed"``); no needed cell
lies outside the tile boxes; errors exit 1 located, without writing ``-o``."""

from __future__ import annotations

import itertools
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hlo_indexing import IndexingMap, parse_module
from hlo_indexing.analysis.fusion import fusion_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import IndexOutOfRangeError
from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TilingError, analyze_fusion
from hlo_indexing.symbolic_tiling.tile_picture import Box, image, needed_elements
from hlo_indexing.tools.tile_view import main, render_tile_svg, select_computation, tile_picture
from helpers import REPO_ROOT, evaluate_affine

SVG = "{http://www.w3.org/2000/svg}"

SOFTMAX = """
func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<4x6xf32>
  %3 = stablehlo.exponential %2 : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}
"""

MATMUL = """
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""

# A tile of 4 elements of the flattened output is not a tile of %x.
RESHAPE = """
func.func @reshape(%x: tensor<4x6xf32>) -> tensor<24xf32> {
  %0 = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}
"""

# Rank 3, a transpose and a strided slice: operand tiles with strides, slices of rank 3.
STRIDED = """
func.func @strided(%x: tensor<3x4x16xf32>, %y: tensor<16x3x4xf32>) -> tensor<3x4x8xf32> {
  %0 = stablehlo.slice %x [0:3, 0:4, 0:16:2] : (tensor<3x4x16xf32>) -> tensor<3x4x8xf32>
  %1 = stablehlo.transpose %y, dims = [1, 2, 0] : (tensor<16x3x4xf32>) -> tensor<3x4x16xf32>
  %2 = stablehlo.slice %1 [0:3, 0:4, 1:16:2] : (tensor<3x4x16xf32>) -> tensor<3x4x8xf32>
  %3 = stablehlo.add %0, %2 : tensor<3x4x8xf32>
  return %3 : tensor<3x4x8xf32>
}
"""




def needed_by_maps(function: ir.Operation, parameter: int, tile: set[tuple[int, ...]], output: int = 0) -> set[tuple[int, ...]]:
    """Elements of ``parameter`` the fused maps of ``output`` read for its elements in ``tile``:
    every point of each map's domain box, its constraints checked, kept when its
    output index is in ``tile``."""
    found: set[tuple[int, ...]] = set()
    for m in fusion_indexing(function.regions[0], output).maps[parameter]:
        variables = list(m.dim_vars) + list(m.symbol_vars)
        axes = [np.arange(v.bounds.lower, v.bounds.upper + 1) for v in variables]
        grid = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")]
        dims, symbols = grid[: m.num_dims], grid[m.num_dims :]
        keep = np.ones(len(grid[0]), bool)
        for expr, interval in m.constraints.items():
            value = evaluate_affine(expr, dims, symbols)
            keep &= (value >= interval.lower) & (value <= interval.upper)
        images = [np.broadcast_to(evaluate_affine(e, dims, symbols), keep.shape) for e in m.results]
        for k in np.nonzero(keep)[0].tolist():
            if tuple(int(d[k]) for d in dims) in tile:
                found.add(tuple(int(i[k]) for i in images))
    return found


def needed_by_perturbation(f, operands: list[np.ndarray], which: int, tile: set[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """Elements of operand ``which`` whose change changes an output element in ``tile``."""
    base = f(*operands)
    found = set()
    for index in itertools.product(*(range(n) for n in operands[which].shape)):
        changed = [o.copy() for o in operands]
        changed[which][index] += 3.0
        diff = f(*changed) != base
        if any(diff[t] for t in tile):
            found.add(index)
    return found


def softmax_numpy(x: np.ndarray) -> np.ndarray:
    return np.exp(x - x.max(axis=1, keepdims=True))


_MODULES: list = []  # the parsed modules stay alive while their ops are used


def function_of(text: str, name: str) -> ir.Operation:
    module = parse_module(text)
    _MODULES.append(module)
    return select_computation(module.operation, name)[1]


def svg_cells(svg: str) -> dict[str, set[str]]:
    """``class -> data-index`` of every cell rect of an SVG (which must parse)."""
    root = ET.fromstring(svg)
    out: dict[str, set[str]] = {}
    for rect in root.iter(f"{SVG}rect"):
        if "data-index" in rect.attrib:
            out.setdefault(rect.attrib.get("class", ""), set()).add(rect.attrib["data-index"])
    return out


def indices_text(indices: set[tuple[int, ...]]) -> set[str]:
    return {",".join(map(str, i)) for i in indices}


@pytest.mark.parametrize("tile_id", [0, 1])
def test_softmax_tile_needs_its_rows(tile_id):
    function = function_of(SOFTMAX, "softmax")
    picture = tile_picture(function, [2, 6], tile_id)
    tile = {(r, c) for r in range(2 * tile_id, 2 * tile_id + 2) for c in range(6)}
    assert set(picture.output.needed) == tile
    (operand,) = picture.operands
    x = np.random.default_rng(0).normal(size=(4, 6))
    assert set(operand.needed) == needed_by_maps(function, 0, tile) == needed_by_perturbation(softmax_numpy, [x], 0, tile)
    cells = svg_cells(render_tile_svg(picture))
    assert cells["needed"] == indices_text(tile) | indices_text(set(operand.needed))
    assert "outside" not in cells


@pytest.mark.parametrize("tile_id", [0, 3])
def test_matmul_tile_needs_a_row_band_and_a_column_band(tile_id):
    function = function_of(MATMUL, "matmul")
    picture = tile_picture(function, [4, 4, 2], tile_id)  # {K, M, N}: 2x2 output tiles of 4x2
    assert picture.num_tiles == 4
    rows, cols = divmod(tile_id, 2)
    tile = {(r, c) for r in range(4 * rows, 4 * rows + 4) for c in range(2 * cols, 2 * cols + 2)}
    assert set(picture.output.needed) == tile
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(8, 16)), rng.normal(size=(16, 4))
    for k, operand in enumerate(picture.operands):
        assert set(operand.needed) == needed_by_maps(function, k, tile) == needed_by_perturbation(np.matmul, [a, b], k, tile)
        assert len(operand.boxes) == 4  # one box per contracting step of 4
        assert all(any(box.contains(i) for box in operand.boxes) for i in operand.needed)
    svg = render_tile_svg(picture)
    cells = svg_cells(svg)
    needed = set().union(*(indices_text(set(p.needed)) for p in (picture.output, *picture.operands)))
    # a and b are drawn in their own panels: compare the union of needed cells
    assert cells["needed"] == needed
    boxes = [r for r in ET.fromstring(svg).iter(f"{SVG}rect") if r.attrib.get("class") == "tile-box"]
    assert len(boxes) == 1 + 4 + 4


def test_strided_rank3_tiles_and_slices():
    function = function_of(STRIDED, "strided")
    picture = tile_picture(function, [1, 2, 4], 7)  # 3x2x2 tiles, major to minor: tile 7 = [1, 2:4, 4:8]
    tile = {(1, r, c) for r in range(2, 4) for c in range(4, 8)}
    assert set(picture.output.needed) == tile
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(3, 4, 16)), rng.normal(size=(16, 3, 4))

    def f(x, y):
        return x[:, :, 0:16:2] + np.transpose(y, (1, 2, 0))[:, :, 1:16:2]

    for k, operand in enumerate(picture.operands):
        assert set(operand.needed) == needed_by_maps(function, k, tile) == needed_by_perturbation(f, [x, y], k, tile)
    x_panel, y_panel = picture.operands
    assert x_panel.boxes[0].strides == (1, 1, 2)
    # %y is read transposed: its tile touches 4 leading indices (rows 9, 11, 13, 15)
    svg = render_tile_svg(picture, max_slices=2)
    assert "showing 2 of the 4 slices [i, :, :] the tile touches" in svg
    cells = svg_cells(svg)
    shown_y = {i for i in y_panel.needed if i[0] in (9, 11)}
    assert cells["needed"] == indices_text(tile | set(x_panel.needed) | shown_y)
    assert "outside" not in cells


MULTI_OUTPUT = """
func.func @two(%x: tensor<4x6xf32>, %y: tensor<6x4xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %t = stablehlo.transpose %y, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %0 = stablehlo.negate %t : tensor<4x6xf32>
  %1 = stablehlo.add %x, %0 : tensor<4x6xf32>
  return %1, %0 : tensor<4x6xf32>, tensor<4x6xf32>
}
"""


def test_an_extra_output_is_drawn_with_what_it_needs():
    function = function_of(MULTI_OUTPUT, "two")
    picture = tile_picture(function, [2, 3], 3, output=1)  # 2x2 tiles: tile 3 = rows 2:4, columns 3:6
    tile = {(r, c) for r in range(2, 4) for c in range(3, 6)}
    assert (picture.output.index, set(picture.output.needed)) == (1, tile)
    x, y = picture.operands
    assert set(x.needed) == needed_by_maps(function, 0, tile, output=1) == set()  # %x feeds output 0 only
    assert set(y.needed) == needed_by_maps(function, 1, tile, output=1) == {(c, r) for r, c in tile}
    with pytest.raises(IndexOutOfRangeError, match="output 2 is outside"):
        tile_picture(function, [2, 3], 0, output=2)


def test_scaled_blocks_count_needed_elements():
    function = function_of(MATMUL.replace("8x16", "64x256").replace("16x4", "256x4").replace("8x4", "64x4"), "matmul")
    picture = tile_picture(function, [32, 16, 4], 2)
    svg = render_tile_svg(picture, max_cells=64, max_columns=16)
    assert "scaled: one cell is a 16x16 block of elements" in svg
    a = picture.operands[0]
    root = ET.fromstring(svg)
    titles = {}
    for rect in root.iter(f"{SVG}rect"):
        title = rect.find(f"{SVG}title")
        if rect.attrib.get("data-index", "").count(":") == 2 and title is not None:
            titles.setdefault(rect.attrib["data-index"], []).append((rect.attrib["class"], title.text))
    # operand a (64x256) in 16x16 blocks: rows 32:48 are needed, the others are not
    for r0, c0 in itertools.product(range(0, 64, 16), range(0, 256, 16)):
        key = f"{r0}:{r0 + 16},{c0}:{c0 + 16}"
        expected = sum(1 for i in a.needed if r0 <= i[0] < r0 + 16 and c0 <= i[1] < c0 + 16)
        assert any(t == f"[{key}]: {expected} of 256 elements" for _, t in titles[key]), titles[key]


def test_a_strided_output_box_restricts_the_map_to_its_elements():
    m = IndexingMap.parse("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 15], s0 in [0, 1]")
    found = needed_elements(frozenset([m]), [Box((1,), (4,), (3,))], "test", None)
    assert found == {(2 * d + s,) for d in (1, 4, 7, 10) for s in (0, 1)}


def test_cli_writes_svg_only_on_success(tmp_path, capsys):
    source = tmp_path / "m.mlir"
    source.write_text(SOFTMAX + MATMUL + RESHAPE)
    good = tmp_path / "good.svg"
    assert main([str(source), "--fusion", "@matmul", "--tile-sizes", "4,4,2", "--tile-id", "1", "-o", str(good)]) == 0
    ET.parse(good)
    cases = [
        (["--fusion", "matmul", "--tile-sizes", "4,4"], f"{source}:11:1: error: @matmul: 2 tile sizes given, the tiling has 3 parameters"),
        (["--fusion", "softmax", "--tile-sizes", "2,6", "--tile-id", "2"], f"{source}:2:1: error: @softmax: tile id 2 is outside [0, 1]"),
        (["--fusion", "reshape", "--tile-sizes", "4"], f"{source}:16:1: error: @reshape: tile sizes [4] are not a valid tiling"),
        (["--fusion", "softmx", "--tile-sizes", "2,6"], "<command line>:1:{col}: error: --fusion: no computation 'softmx' in the module; did you mean 'softmax'?"),
        (["--tile-sizes", "2,6"], "<command line>:1:1: error: --fusion: the module has 3 computations, name one: @softmax, @matmul, @reshape"),
        (["--fusion", "softmax", "--tile-sizes", "2,x"], "<command line>:1:{col}: error: --tile-sizes: invalid tile sizes '2,x'"),
        (["--fusion", "softmax", "--tile-sizes", "2,6", "--max-cells", "0"], "<command line>:1:1: error: --max-cells must be at least 1"),
    ]
    capsys.readouterr()
    for arguments, message in cases:
        bad = tmp_path / "bad.svg"
        assert main([str(source), *arguments, "-o", str(bad)]) == 1
        err = capsys.readouterr().err
        line = " ".join([str(source), *arguments, "-o", str(bad)])
        value = arguments[arguments.index(message.split(": ")[2]) + 1] if "{col}" in message else ""
        assert err.startswith(message.format(col=line.find(" " + value) + 2)), err
        assert not bad.exists()
    # a located error shows the source line and a caret under the column
    assert main([str(source), "--fusion", "softmax", "--tile-sizes", "2,6", "--tile-id", "9"]) == 1
    assert capsys.readouterr().err.splitlines()[1:] == ["func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {", "^"]
    assert main([str(tmp_path / "missing.mlir"), "--tile-sizes", "1", "-o", str(tmp_path / "bad.svg")]) == 1
    assert "missing.mlir" in capsys.readouterr().err
    assert not (tmp_path / "bad.svg").exists()


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "func.func @zero(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {\n"
            "  %0 = stablehlo.negate %x : tensor<0x4xf32>\n  return %0 : tensor<0x4xf32>\n}\n",
            "{source}:1:1: error: @zero: cannot tile: output tensor<0x4xf32> is zero-sized",
        ),
        (
            "func.func private @decl(%x: tensor<4xf32>) -> tensor<4xf32>\n",
            "<command line>:1:1: error: the module has no computation to tile",
        ),
    ],
    ids=["zero-sized", "no-computation"],
)
def test_cli_reports_odd_modules_located(tmp_path, capsys, text, message):
    source = tmp_path / "odd.mlir"
    source.write_text(text)
    assert main([str(source), "--tile-sizes", "1,4", "-o", str(tmp_path / "out.svg")]) == 1
    assert capsys.readouterr().err.startswith(message.format(source=source))
    assert not (tmp_path / "out.svg").exists()


def test_cli_reports_a_computation_that_cannot_be_tiled(tmp_path, capsys):
    source = tmp_path / "pad.mlir"
    source.write_text(
        """func.func @pad(%x: tensor<63xf32>) -> tensor<64xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %x, %c, low = [0], high = [1], interior = [0] : (tensor<63xf32>, tensor<f32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
"""
    )
    assert main([str(source), "--tile-sizes", "8", "-o", str(tmp_path / "out.svg")]) == 1
    assert capsys.readouterr().err.startswith(f"{source}:1:1: error: @pad: cannot tile: ")
    assert not (tmp_path / "out.svg").exists()


README_PICTURES = [
    ("matmul_tile.svg", ["--fusion", "ynn_fusion", "--tile-sizes", "16,64,128", "--tile-id", "1", "--max-cells", "512"]),
    ("softmax_tile.svg", ["--fusion", "ynn_fusion.2", "--tile-sizes", "8,128", "--tile-id", "1", "--max-cells", "512"]),
]


@pytest.mark.parametrize("name, arguments", README_PICTURES, ids=[p[0] for p in README_PICTURES])
def test_readme_pictures_are_up_to_date(name, arguments, tmp_path):
    """The SVGs the README shows are what the README's commands write (run from the
    repository root, as the README runner does)."""
    root = REPO_ROOT
    out = tmp_path / name
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["examples/jax_fusions_cpu.hlo", *arguments, "-o", str(out)]) == 0
    finally:
        os.chdir(cwd)
    assert out.read_text() == (root / "examples" / name).read_text()


ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"


def _shape_text(shape: list[int]) -> str:
    return f"f32[{','.join(map(str, shape))}]"


@st.composite
def small_fusions(draw: st.DrawFn) -> str:
    """HLO text of a small fusion: a dot of two parameters or a parameter, then 0-2
    shape or elementwise ops (transpose, reduce, broadcast, strided slice, add with
    a second parameter)."""
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    params = [f"  v0 = {_shape_text([rows, cols])} parameter(0)"]
    lines: list[str] = []
    shape = [rows, cols]
    if draw(st.booleans()):
        k = draw(st.integers(1, 5))
        params = [f"  a = {_shape_text([rows, k])} parameter(0)", f"  b = {_shape_text([k, cols])} parameter(1)"]
        lines.append(f"  v0 = {_shape_text(shape)} dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")
    step = 0
    for step in range(1, draw(st.integers(0, 2)) + 1):
        prev = f"v{step - 1}"
        choices = ["transpose", "slice", "add"] + (["reduce", "broadcast"] if len(shape) == 2 else [])
        op = draw(st.sampled_from(choices if len(shape) >= 2 else ["add"]))
        if op == "transpose":
            order = list(range(len(shape)))[::-1]
            shape = shape[::-1]
            body = f"transpose({prev}), dimensions={{{','.join(map(str, order))}}}"
        elif op == "reduce":
            lines.append(f"  z{step} = f32[] constant(0)")
            shape = [shape[0]]
            body = f"reduce({prev}, z{step}), dimensions={{1}}, to_apply=add"
        elif op == "broadcast":
            shape = [shape[0], 2, shape[1]]
            body = f"broadcast({prev}), dimensions={{0,2}}"
        elif op == "slice":
            stride, start = draw(st.integers(1, 2)), draw(st.integers(0, shape[-1] - 1))
            ranges = [f"[0:{n}:1]" for n in shape[:-1]] + [f"[{start}:{shape[-1]}:{stride}]"]
            shape = shape[:-1] + [len(range(start, shape[-1], stride))]
            body = f"slice({prev}), slice={{{', '.join(ranges)}}}"
        else:
            number = len(params)
            params.append(f"  q{step} = {_shape_text(shape)} parameter({number})")
            body = f"add({prev}, q{step})"
        lines.append(f"  v{step} = {_shape_text(shape)} {body}")
    body_lines = params + lines if lines else params + [f"  v0x = {_shape_text(shape)} negate(v0)"]
    body_lines[-1] = "  ROOT " + body_lines[-1].strip()
    entry_params = [line.split(" = ")[1].split(" ")[0] for line in params]
    entry = "\n".join(f"  p{k} = {t} parameter({k})" for k, t in enumerate(entry_params))
    operands = ", ".join(f"p{k}" for k in range(len(params)))
    return (
        f"HloModule m\n{ADD}\nfused {{\n" + "\n".join(body_lines) + "\n}\n\n"
        f"ENTRY e {{\n{entry}\n  ROOT f = {_shape_text(shape)} fusion({operands}), kind=kLoop, calls=fused\n}}\n"
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(small_fusions(), st.data())
def test_pictures_of_generated_fusions_show_what_the_maps_read(text: str, data: st.DataObject) -> None:
    """On generated fusions, for a valid tiling and tile id drawn at random: each
    operand's needed elements are those of the fused maps (numpy evaluator), lie inside
    the operand's tile boxes (soundness), and are the SVG's needed cells."""
    module = hlo_source.import_hlo(text)
    _MODULES.append(module)
    function = hlo_source.computation(module, "fused")
    analysis = analyze_fusion(function)
    assume(not isinstance(analysis, AnalysisFailure))
    sizes = data.draw(st.sampled_from(analysis.valid_tilings()))
    try:
        tiled = tiled_computation(analysis, list(sizes))
    except TilingError:
        assume(False)
    tile_id = data.draw(st.integers(0, tiled.num_programs - 1))
    picture = tile_picture(function, sizes, tile_id)
    tile = set(picture.output.needed)
    assert tile, "an output tile writes something"
    svg_needed = svg_cells(render_tile_svg(picture, max_slices=8)).get("needed", set())
    shown = indices_text(tile)
    for operand in picture.operands:
        assert set(operand.needed) == needed_by_maps(function, operand.index, tile)
        assert all(any(box.contains(i) for box in operand.boxes) for i in operand.needed), "needed outside the tile boxes"
        shown |= indices_text(set(operand.needed))
    assert svg_needed == shown


@pytest.mark.parametrize(
    "text",
    [
        "(d0, d1)[s0] -> (d0, s0), domain: d0 in [2, 5], d1 in [0, 3], s0 in [0, 7]",
        "(d0, d1)[s0] -> (d0 + s0, d1 mod 3), domain: d0 in [0, 4], d1 in [0, 5], s0 in [0, 2]",
        "(d0, d1) -> (d0, 7, d1 floordiv 2), domain: d0 in [0, 3], d1 in [0, 5], d0 + d1 in [2, 6]",
        "(d0)[s0, s1] -> (s0), domain: d0 in [0, 3], s0 in [0, 4], s1 in [0, 2], s1 - d0 in [0, 0]",
        "(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 3], d1 in [5, 9]",
    ],
)
def test_image_by_groups_equals_the_enumerated_image(text):
    """The separable image (groups of tied variables, multiplied out) is the set of
    results of every point of the domain."""
    m = IndexingMap.parse(text, allow_empty_ranges=True)
    _, images = m.enumerate()
    assert image(m) == {tuple(row) for row in images.tolist()}
