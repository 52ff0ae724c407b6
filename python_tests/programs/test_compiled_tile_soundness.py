"""The tiles of compiled programs hold what their maps need (``benchmarks/tile_soundness.py``).

Small JAX programs compiled by XLA:CPU (``jax.jit(f).lower(*args).compile().as_text()``):
for the best tilings of every fusion, at sampled tile ids, every element the fused maps
say an output tile needs must lie in one of the boxes the tiling reads its operands
through. Each program must check a floor of tiles and elements (observed counts, with
margin), so a program whose fusions stop being tiled fails instead of passing vacuously.
The cross-entropy's ``take_along_axis`` is the gather whose two runtime offsets were
merged into one value (commit 6858aed): with that fix reverted its tiles miss elements.
The checker's own comparison is tested on hand-built panels whose box is too small.
A gather from a table of more rows than a picture shows boxes (``MAX_BOXES``) is checked
one runtime value at a time, and that check catches boxes read at the wrong value; the
best tilings of a device ranking (``device=``) are the ones checked."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

import tile_soundness  # noqa: E402  (benchmarks/ is on the tests' path: pytest's pythonpath)
from helpers import BENCHMARKS, load_module  # noqa: E402

import hlo_indexing.symbolic_tiling.tile_picture as tile_picture_module  # noqa: E402
from hlo_indexing.symbolic_tiling.hlo_source import import_hlo  # noqa: E402
from hlo_indexing.symbolic_tiling.tile_picture import Box, TensorPanel  # noqa: E402
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, analyze_fusion  # noqa: E402
from hlo_indexing.symbolic_tiling.tilings_report import selected_computations  # noqa: E402

library_check = load_module(BENCHMARKS / "library_check.py")


def _layer_norm_vjp(x, g, b):
    def loss(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (((x - mean) * lax.rsqrt(var + 1e-5) * g + b) ** 2).sum()

    return jax.value_and_grad(loss, argnums=(0, 1, 2))(x, g, b)


def _cross_entropy_grad(logits, labels):
    """Per-example losses (a gather of one element per row, tiled row by row) and the
    mean loss's gradient."""

    def losses(logits):
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1)[:, 0]

    return losses(logits), jax.grad(lambda logits: losses(logits).mean())(logits)


def _conv_relu_mean_grad(x, w):
    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return jax.nn.relu(y).mean()

    return jax.grad(loss, argnums=(0, 1))(x, w)


def _rnn_scan(w, xs, h0):
    def loss(w, xs, h0):
        def step(h, x):
            h = jnp.tanh(w @ h + x)
            return h, h

        return lax.scan(step, h0, xs)[1].sum()

    return jax.grad(loss, argnums=(0, 1, 2))(w, xs, h0)


def _reshape_transpose(x):
    y = x.reshape(4, 6, 8).transpose(2, 0, 1).reshape(8, 24) * 2.0
    z = y.T.reshape(6, 4, 8).transpose(1, 2, 0)
    return jnp.sin(z).reshape(32, 6) + 1.0, y.sum(0)


def _dense_gelu_grad(x, w, b):
    def loss(x, w, b):
        return jax.nn.gelu(x @ w + b).sum()

    return jax.grad(loss, argnums=(0, 1, 2))(x, w, b)


def _rows_in_place(x):
    """A scan step that rewrites row i of x from row i: the case the fused maps read as
    two runtime variables of one value."""

    def body(i, x):
        return lax.dynamic_update_slice(x, jnp.sin(lax.dynamic_slice(x, (i, 0), (1, 8))), (i, 0))

    return lax.fori_loop(0, 5, body, x)


F32, I32 = jnp.float32, jnp.int32
#: name -> (function, argument shapes and dtypes, floors of tiles and of elements
#: compared: about two thirds of what XLA:CPU's fusions of jax 0.10.2 give).
PROGRAMS = {
    "layer_norm_vjp": (_layer_norm_vjp, [((8, 16), F32), ((16,), F32), ((16,), F32)], 45, 3000),
    "cross_entropy_take_along_axis": (_cross_entropy_grad, [((8, 10), F32), ((8,), I32)], 55, 1600),
    "conv_relu_mean_grad": (_conv_relu_mean_grad, [((2, 3, 8, 8), F32), ((4, 3, 3, 3), F32)], 23, 4700),
    "rnn_scan_grad": (_rnn_scan, [((8, 8), F32), ((5, 8), F32), ((8,), F32)], 36, 1400),
    "reshape_transpose_chain": (_reshape_transpose, [((24, 8), F32)], 7, 200),
    "dense_gelu_grad": (_dense_gelu_grad, [((8, 16), F32), ((16, 12), F32), ((12,), F32)], 12, 1600),
    "rows_in_place_scan": (_rows_in_place, [((5, 8), F32)], 4, 100),
}


def _compiled(f, specs) -> str:
    args = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    return jax.jit(f).lower(*args).compile().as_text()


def compiled_text(name: str) -> str:
    """The XLA:CPU-compiled HLO text of program ``name``."""
    f, specs, _, _ = PROGRAMS[name]
    return _compiled(f, specs)


def _fusions_with(text: str, opcode: str) -> set[str]:
    """The labels of the fusions of compiled ``text`` whose body holds an ``opcode`` op
    (an op named ``<dialect>.<opcode>``)."""
    module = import_hlo(text)
    found = set()
    for label, op in selected_computations(module.operation, ""):
        pending = [op.regions[0]]
        while pending:
            for block in pending.pop().blocks:
                for inner in block.operations:
                    found |= {label} if inner.name.rpartition(".")[2] == opcode else set()
                    pending.extend(inner.regions)
    return found


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_tiles_hold_what_the_maps_need(name: str) -> None:
    _, _, tiles, elements = PROGRAMS[name]
    text = compiled_text(name)
    report = tile_soundness.check_module_tiles(text)
    assert report.failed == 0, "\n".join(map(str, report.failures))
    assert report.tiles >= tiles and report.elements >= elements, report.summary()
    if name == "cross_entropy_take_along_axis":
        gathers = _fusions_with(text, "gather")
        assert gathers and gathers <= set(report.checked), (gathers, report.checked)
    if name == "rows_in_place_scan":
        # The fused maps read the slice's and the update's start as one value
        # (analysis.runtime_identity): every tile is checked against exact maps, and none
        # needs the category of runtime variables of one value any more.
        assert report.one_value_count == 0, report.summary()
        assert _fusions_with(text, "dynamic_update_slice") <= set(report.checked), report.checked


def _panel(needed: set[tuple[int, ...]], *boxes: Box) -> TensorPanel:
    return TensorPanel("operand", 0, "p", "tensor<8x8xf32>", (8, 8), frozenset(needed), boxes)


def test_an_element_outside_every_box_is_missing() -> None:
    rows = Box((0, 0), (2, 8), (1, 1))
    assert tile_soundness.missing_elements(_panel({(0, 3), (1, 7)}, rows)) == []
    # one row short: row 2 is needed, the box ends at row 1
    assert tile_soundness.missing_elements(_panel({(0, 3), (2, 0), (2, 5)}, rows)) == [(2, 0), (2, 5)]
    # a strided box holds every other column; a second box covers column 1 of row 0 only
    strided = Box((0, 0), (1, 4), (1, 2))
    needed = {(0, 0), (0, 1), (0, 2), (0, 3)}
    assert tile_soundness.missing_elements(_panel(needed, strided)) == [(0, 1), (0, 3)]
    assert tile_soundness.missing_elements(_panel(needed, strided, Box((0, 1), (1, 1), (1, 1)))) == [(0, 3)]
    assert tile_soundness.missing_elements(_panel(needed)) == sorted(needed)  # no box at all
    assert tile_soundness.missing_elements(_panel({(5, 5)}, Box((0, 0), (0, 8), (1, 1)))) == [(5, 5)]  # an empty box


def test_sampled_tile_ids_are_the_first_the_last_and_evenly_between() -> None:
    assert tile_soundness.sample_tile_ids(3, 5) == [0, 1, 2]
    assert tile_soundness.sample_tile_ids(1, 5) == [0]
    assert tile_soundness.sample_tile_ids(9, 5) == [0, 2, 4, 6, 8]
    ids = tile_soundness.sample_tile_ids(1000, 5)
    assert ids[0] == 0 and ids[-1] == 999 and len(ids) == 5 and all(240 <= b - a <= 260 for a, b in zip(ids, ids[1:]))


def _shrunk(picture):
    """``picture`` with each operand box one element shorter along its last dimension."""
    operands = []
    for panel in picture.operands:
        boxes = tuple(replace(b, sizes=b.sizes[:-1] + (b.sizes[-1] - 1,)) if b.sizes else b for b in panel.boxes)
        operands.append(replace(panel, boxes=boxes))
    return replace(picture, operands=tuple(operands))


def test_a_tile_too_small_is_reported_and_fails_the_cli(monkeypatch, tmp_path) -> None:
    """The failure path end to end: boxes shrunk by one element miss what the maps need."""
    text = compiled_text("dense_gelu_grad")
    real = tile_soundness.tile_picture
    monkeypatch.setattr(tile_soundness, "tile_picture", lambda *a, **k: _shrunk(real(*a, **k)))
    report = tile_soundness.check_module_tiles(text, top=1, samples=2)
    assert report.failed > 0 and len(report.failures) == min(report.failed, tile_soundness.MAX_LISTED)
    failure = report.failures[0]
    assert failure.fusion in report.checked and failure.count >= len(failure.examples) > 0
    source = tmp_path / "dense.hlo"
    source.write_text(text)
    out = tmp_path / "report.json"
    assert tile_soundness.main([str(source), "--top", "1", "--samples", "2", "--json", str(out)]) == 1
    assert json.loads(out.read_text())[str(source)]["failed"] == report.failed


def test_budgets_and_enumeration_caps_are_skips_with_their_reasons(monkeypatch) -> None:
    text = compiled_text("layer_norm_vjp")
    spent = tile_soundness.check_module_tiles(text, time_budget_s=1e-9)
    assert spent.tiles == 0 and sum(spent.skip_reasons.values()) == spent.fusions > 0
    assert all("budget" in reason for reason in spent.skip_reasons), spent.skip_reasons
    slow = tile_soundness.check_module_tiles(text, fusion_seconds=1e-9)
    assert slow.failed == 0 and any("TimeLimitError" in reason for reason in slow.skip_reasons), slow.skip_reasons
    monkeypatch.setattr(tile_picture_module, "MAX_POINTS", 4)
    capped = tile_soundness.check_module_tiles(text)
    assert capped.failed == 0 and any("EnumerationTooLargeError" in r for r in capped.skip_reasons), capped.skip_reasons


def _analysed(text: str, opcode: str) -> tuple:
    """The imported module of ``text`` (it owns the analyses' values: keep it) and the
    tiled analyses of its fusions holding an ``opcode`` op."""
    module = import_hlo(text)
    wanted = _fusions_with(text, opcode)
    found = [analyze_fusion(op) for label, op in selected_computations(module.operation, "") if label in wanted]
    assert found and not any(isinstance(f, AnalysisFailure) for f in found), found
    return module, found


def _runtime_columns(m, fusion) -> dict:
    """Per scalar value read by runtime variables of ``m``: the columns of ``m``'s
    enumerated points holding them."""
    columns: dict = {}
    for j, variable in enumerate(m.runtime_vars):
        columns.setdefault(fusion.runtime_sources[variable.origin], []).append(m.num_dims + len(m.range_vars) + j)
    return {value: c for value, c in columns.items() if len(c) >= 2}


def test_only_runtime_variables_read_from_one_scalar_are_made_equal() -> None:
    """The scan step's slice and update starts read one scalar: at every point of its
    parameter's map made by one_value_maps they are equal (in the analysis's map they
    differ at some; its column starts, both the constant 0, are equal anyway). A
    gather's two offsets read one indices tensor at two elements: never made equal."""
    step_module, steps = _analysed(compiled_text("rows_in_place_scan"), "dynamic_update_slice")
    for fusion in steps:
        nodes = [n for n in fusion.nodes if n.parameter_number == 0]
        maps = tile_soundness.one_value_maps(fusion, 0)
        assert len(maps) == len(nodes)
        shared = [(m, n, _runtime_columns(n.indexing_map, fusion)) for m, n in zip(maps, nodes)]
        shared = [(m, n, columns) for m, n, columns in shared if columns]
        assert shared, [n.indexing_map for n in nodes]
        for m, node, columns in shared:
            before, _ = node.indexing_map.enumerate()
            after, _ = m.enumerate()
            assert all((after[:, group] == after[:, group[:1]]).all() for group in columns.values())
            assert any((before[:, group] != before[:, group[:1]]).any() for group in columns.values())
    gather_module, gathers = _analysed(compiled_text("cross_entropy_take_along_axis"), "gather")
    for fusion in gathers:
        assert any(len(n.indexing_map.runtime_vars) >= 2 for n in fusion.nodes)  # the gather's two offsets
        numbers = {n.parameter_number for n in fusion.nodes if n.parameter_number is not None}
        assert all(tile_soundness.one_value_maps(fusion, p) == [] for p in numbers)


def test_the_corpus_check_records_the_tiles_part(tmp_path) -> None:
    """``library_check.py --part tiles`` on one program's folder, and its table columns."""
    (tmp_path / "compiled_cpu.hlo").write_text(compiled_text("dense_gelu_grad"))
    assert library_check.main([str(tmp_path), "--part", "tiles"]) == 0
    tiles = json.loads((tmp_path / "tiles_record.json").read_text())["tiles"]
    assert tiles["failed"] == 0 and tiles["tiles"] >= PROGRAMS["dense_gelu_grad"][2], tiles
    record = {"name": "p", "library": "jax", "ops": 1, "hlo_instructions": 1, "analysis_failure": "x",
              "soundness_failure": "x", "tiles": tiles}
    header, _, row = library_check.markdown([record]).splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")]
    cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|")), strict=True))
    assert cells["tiles checked"].startswith(f"{tiles['tiles']} (") and cells["tile failures"] == "0", cells


def test_pads_outside_gemm_fusions_are_checked_with_allow_pad() -> None:
    """XLA:CPU fuses a pad into an elementwise fusion: not tiled by XLA's rule (a skip),
    tiled and checked with allow_pad (its tiles may lie in the padding)."""
    text = _compiled(lambda x: jnp.sin(jnp.pad(x, ((1, 2), (3, 0)))) * 2.0, [((12, 16), F32)])
    plain = tile_soundness.check_module_tiles(text)
    assert plain.tiles == 0 and any("pad is only supported" in r for r in plain.skip_reasons), plain.summary()
    padded = tile_soundness.check_module_tiles(text, allow_pad=True)
    assert padded.failed == 0 and padded.tiles >= 4 and padded.elements >= 400, padded.summary()


def _embedding(table, ids):
    return jnp.sin(table[ids])


def _embedding_text(rows: int = 300) -> str:
    """An embedding lookup: one output tile reads one table row at a runtime index, one
    box per row the index may take (more than MAX_BOXES)."""
    return _compiled(_embedding, [((rows, 32), F32), ((4, 8), I32)])


def test_a_tile_read_at_more_runtime_values_than_a_picture_shows_is_checked() -> None:
    text = _embedding_text()
    assert 300 > tile_picture_module.MAX_BOXES
    report = tile_soundness.check_module_tiles(text, samples=3)
    gathers = _fusions_with(text, "gather")
    assert gathers and gathers <= set(report.checked), (report.checked, report.skip_reasons)
    assert not any("boxes" in reason for reason in report.skip_reasons), report.skip_reasons
    # 3 tilings x 3 tiles, each: 16 sampled values of the table's map, 1 of the indices' map
    assert report.failed == 0 and report.tiles == 9 and report.values == 9 * 17, report.summary()
    assert report.elements >= 9 * 16 * 8, report.summary()  # at least 8 columns of one row per value


def _rolled(reads):
    """``reads`` with each runtime value's boxes moved to the next value (the last to the
    first): the union of the boxes is the same, each value's box is another row's."""
    operands = []
    for parameter in reads.operands:
        boxes = tuple(replace(b, offsets=np.roll(b.offsets, 1, axis=0)) if b.values.shape[1] else b
                      for b in parameter.boxes)
        operands.append(replace(parameter, boxes=boxes))
    return replace(reads, operands=tuple(operands))


def test_boxes_read_at_the_wrong_runtime_value_are_failures(monkeypatch) -> None:
    """A tile whose box for index v is row v - 1's: every needed row is in some box (the
    union check passes), none in the box of its own value (one value at a time fails)."""
    real = tile_soundness.tile_reads
    monkeypatch.setattr(tile_soundness, "tile_reads", lambda *a, **k: _rolled(real(*a, **k)))
    report = tile_soundness.check_module_tiles(_embedding_text(), top=1, samples=2)
    assert report.failed == 2 * 16 and report.one_value_count == 0, report.summary()
    failure = report.failures[0]
    assert failure.parameter == 0 and failure.value is not None and len(failure.value) == 1
    assert {row for row, _ in failure.examples} == {failure.value[0]}, failure  # its own row is missing
    assert f"at runtime values [{failure.value[0]}]" in str(failure)
    # the same tiles with fewer rows than MAX_BOXES: the picture's union check holds
    small = tile_soundness.check_module_tiles(_embedding_text(rows=40), top=1, samples=2)
    monkeypatch.setattr(tile_soundness, "tile_reads", real)
    assert small.failed == 2 * 16, small.summary()


def test_the_best_tilings_of_a_device_ranking_are_checked(tmp_path) -> None:
    """A dot and softmax: h100's and tpu-v5e's rankings pick other tilings than the
    device-blind one; the check takes each ranking's best."""
    from hlo_indexing.cost_model.ranking import rank_tilings
    from hlo_indexing.devices.registry import device as select_device

    text = _compiled(lambda q, k: jax.nn.softmax(q @ k.T, axis=-1), [((64, 128), F32), ((256, 128), F32)])
    module = import_hlo(text)
    fusions = {label: op for label, op in selected_computations(module.operation, "") if op.name == "mhlo.fusion"}
    blind = tile_soundness.check_module_tiles(text, top=1, samples=2)
    assert blind.device is None and blind.failed == 0
    for device in ("h100", "tpu-v5e"):
        report = tile_soundness.check_module_tiles(text, top=1, samples=2, device=device)
        assert report.device == select_device(device).name and report.failed == 0 and report.tiles > 0, report.summary()
        expected = []
        for label, _ in report.sizes:
            ranking = rank_tilings(analyze_fusion(fusions[label]), device=device)
            expected.append((label, tuple(ranking.tilings[0].tile_sizes)))
        assert report.sizes == expected and set(label for label, _ in expected) == set(fusions)
        assert report.sizes != blind.sizes, (device, report.sizes)
    source = tmp_path / "attention.hlo"
    source.write_text(text)
    out = tmp_path / "report.json"
    options = ["--top", "1", "--samples", "2", "--device", "h100", "--json", str(out)]
    assert tile_soundness.main([str(source), *options]) == 0
    assert json.loads(out.read_text())[str(source)]["device"] == select_device("h100").name
    with pytest.raises(SystemExit):
        tile_soundness.main([str(source), "--device", "h100", "--allow-pad"])
    assert tile_soundness.main([str(source), "--device", "no-such-device"]) == 1
