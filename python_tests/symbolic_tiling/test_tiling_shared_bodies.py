"""Computations with the same body share one analysis and one ranking
(symbolic_tiling/shared_bodies.py): what the memo hands out must equal what the direct
calls give for that computation (maps, tiles, values, names, figures, footprints,
exactness, BlockSpecs), on every lit input of computations and on compiled HLO whose bodies
repeat under other instruction names; bodies that differ in any way the analysis reads
must not be shared."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.tilings import PrintTilings
from hlo_indexing.symbolic_tiling import hlo_source, shared_bodies
from hlo_indexing.symbolic_tiling import ranking as ranking_module
from hlo_indexing.symbolic_tiling.exactness import computation_exactness, tiling_exactness
from hlo_indexing.symbolic_tiling.footprint import Footprint, declared_parameter_layouts, tiling_footprint, with_exactness
from hlo_indexing.symbolic_tiling.pallas import pallas_blockspecs
from hlo_indexing.symbolic_tiling.printed_tiling import PrintedTiling
from hlo_indexing.symbolic_tiling.ranking import rank_tilings
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo, body_key
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, analyze_fusion
from helpers import LIT_TESTS, REPO_ROOT

LIT = LIT_TESTS
#: The lit folders of computations (the driver's hold inputs made to fail, some huge).
LIT_FOLDERS = ("tiling", "fusion", "ops", "hlo")
EXAMPLES = [REPO_ROOT / "examples" / "jax_fusions_cpu.hlo", REPO_ROOT / "examples" / "softmax_cpu.hlo"]
BUDGET = 48 * 1024


def assert_same_analysis(shared: TiledFusion, direct: TiledFusion) -> None:
    """Equal nodes (values, names, maps, tiles, operands), parameters, outputs and
    constraints."""
    assert str(shared) == str(direct)
    assert shared.parameters == direct.parameters
    assert [n.value for n in shared.nodes] == [n.value for n in direct.nodes]
    assert [[n.value for n in c] for c in shared.root_candidates] == [[n.value for n in c] for c in direct.root_candidates]
    assert shared.runtime_sources == direct.runtime_sources
    assert shared.root_rank == direct.root_rank
    position = {id(n): k for k, n in enumerate(shared.nodes)}
    direct_position = {id(n): k for k, n in enumerate(direct.nodes)}
    assert [[position[id(o)] for o in n.operands] for n in shared.nodes] == [
        [direct_position[id(o)] for o in n.operands] for n in direct.nodes
    ]


def assert_same_ranking(memo: TilingMemo, shared: TiledFusion, direct: TiledFusion, op: ir.Operation) -> None:
    """The memo's ranking of ``shared`` equals the direct ranking of ``direct``, and so
    do the best tilings' footprints, exactness, BlockSpecs and tiled computations."""
    layouts, output_layouts = declared_parameter_layouts(op)
    try:
        expected = rank_tilings(direct, BUDGET, layouts=layouts, output_layouts=output_layouts)
    except HloIndexingError as exc:
        with pytest.raises(type(exc), match=re.escape(exc.message)):
            memo.rank(shared, BUDGET, layouts=layouts, output_layouts=output_layouts)
        return
    got = memo.rank(shared, BUDGET, layouts=layouts, output_layouts=output_layouts)
    assert (got.valid, got.skipped, got.capped, got.method) == (expected.valid, expected.skipped, expected.capped, expected.method)
    assert [f.tile_sizes for f in got.tilings] == [f.tile_sizes for f in expected.tilings]
    for mine, theirs in zip(got.tilings[:3], expected.tilings[:3]):
        assert mine == theirs
        assert with_exactness(shared, mine) == with_exactness(direct, theirs)
        sizes = list(mine.tile_sizes)
        # The memo's exactness (computed once per body and sizes, named after this
        # computation's parameters) is the direct one, counts included.
        direct_exactness = with_exactness(direct, theirs).exactness
        assert direct_exactness is not None
        assert memo.exactness(shared, sizes) == direct_exactness
        assert memo.exactness(shared, sizes).to_json() == direct_exactness.to_json()
        assert str(tiled_computation(shared, sizes).instructions) == str(tiled_computation(direct, sizes).instructions)
        try:
            expected_specs = pallas_blockspecs(direct, sizes)
        except HloIndexingError as exc:
            with pytest.raises(type(exc), match=re.escape(exc.message)):
                pallas_blockspecs(shared, sizes)
            with pytest.raises(type(exc), match=re.escape(exc.message)):
                memo.blockspecs(shared, sizes)
        else:
            assert pallas_blockspecs(shared, sizes) == expected_specs
            assert memo.blockspecs(shared, sizes) == expected_specs


def check_module_pair(first: ir.Module, second: ir.Module, monkeypatch: pytest.MonkeyPatch) -> int:
    """Analyse every computation of ``first`` then of ``second`` with one memo; each of
    ``second``'s must equal its direct analysis and ranking, and every one that can be
    tiled must come from the memo (not analysed again). Returns how many did."""
    memo = TilingMemo()
    for _, op in computations(first.operation):
        with contextlib.suppress(HloIndexingError):
            memo.analyze(op)
    analysed: list[ir.Operation] = []
    direct_analysis = shared_bodies.analyze_fusion

    def counting(op: ir.Operation, **kwargs: object) -> object:
        analysed.append(op)
        return direct_analysis(op, **kwargs)

    shared_count = 0
    for label, op in computations(second.operation):
        try:
            direct = direct_analysis(op)
        except HloIndexingError as exc:
            with pytest.raises(type(exc), match=re.escape(exc.message)):
                memo.analyze(op)
            continue
        analysed.clear()
        with monkeypatch.context() as patch:
            patch.setattr(shared_bodies, "analyze_fusion", counting)
            shared = memo.analyze(op)
        if not isinstance(direct, TiledFusion):
            assert str(shared) == str(direct), label
            continue
        assert isinstance(shared, TiledFusion), label
        assert not analysed, f"{label} was analysed again"
        shared_count += 1
        assert_same_analysis(shared, direct)
        assert_same_ranking(memo, shared, direct, op)
    return shared_count


def lit_splits() -> list[str]:
    paths = sorted(path for folder in LIT_FOLDERS for path in (LIT / folder).rglob("*.mlir"))
    return [split for path in paths for split in path.read_text().split("// -----")]


@pytest.mark.slow
def test_every_lit_computation_parsed_twice_shares_and_equals_its_own_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = 0
    with default_context():
        for text in lit_splits():
            try:
                first, second = ir.Module.parse(text), ir.Module.parse(text)
            except ir.MLIRError:  # a split written to show a parse error
                continue
            shared += check_module_pair(first, second, monkeypatch)
    assert shared >= 20


def test_computations_with_equal_body_keys_have_equal_outlines() -> None:
    """The memo compares keys only within an outline: equal keys must imply equal outlines."""
    outlines: dict[object, set[object]] = {}
    with default_context():
        modules = []
        for text in lit_splits():
            with contextlib.suppress(ir.MLIRError):
                modules.append(ir.Module.parse(text))
        modules += [hlo_source.import_hlo(path.read_text()) for path in sorted((REPO_ROOT / "examples").glob("*.hlo"))]
        for module in modules:
            for _, op in computations(module.operation):
                outlines.setdefault(body_key(op)[0], set()).add(shared_bodies.outline(op))
    assert len(outlines) > 50
    assert all(len(found) == 1 for found in outlines.values())


def renamed(text: str) -> str:
    """HLO ``text`` with every instruction and computation name given a suffix."""
    return re.sub(r"%([A-Za-z_][\w.-]*)", r"%\1_b", text)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_compiled_hlo_renamed_shares_the_analysis_under_its_own_names(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text()
    first = hlo_source.import_hlo(text)
    second = hlo_source.import_hlo(renamed(text))
    names = {node.name for _, op in computations(second.operation) if op.name == "mhlo.fusion"
             for node in getattr(analyze_fusion(op), "nodes", [])}
    assert any(name.endswith("_b") for name in names)  # the rename reached the analysis
    assert check_module_pair(first, second, monkeypatch) >= 2


REPEATED = """
HloModule repeated

%fused_a (p0: f32[8,16], p1: f32[16]) -> f32[8,16] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16]{0} parameter(1)
  %b = f32[8,16]{1,0} broadcast(%p1), dimensions={1}
  ROOT %s = f32[8,16]{1,0} subtract(%p0, %b)
}

%fused_b (q0: f32[8,16], q1: f32[16]) -> f32[8,16] {
  %q0 = f32[8,16]{1,0} parameter(0)
  %q1 = f32[16]{0} parameter(1)
  %bb = f32[8,16]{1,0} broadcast(%q1), dimensions={1}
  ROOT %t = f32[8,16]{1,0} subtract(%q0, %bb)
}

%fused_swapped (r0: f32[8,16], r1: f32[16]) -> f32[8,16] {
  %r0 = f32[8,16]{1,0} parameter(0)
  %r1 = f32[16]{0} parameter(1)
  %rb = f32[8,16]{1,0} broadcast(%r1), dimensions={1}
  ROOT %u = f32[8,16]{1,0} subtract(%rb, %r0)
}

%fused_column (c0: f32[8,16], c1: f32[8]) -> f32[8,16] {
  %c0 = f32[8,16]{1,0} parameter(0)
  %c1 = f32[8]{0} parameter(1)
  %cb = f32[8,16]{1,0} broadcast(%c1), dimensions={0}
  ROOT %v = f32[8,16]{1,0} subtract(%c0, %cb)
}

ENTRY %main (x: f32[8,16], y: f32[16], z: f32[8]) -> (f32[8,16], f32[8,16], f32[8,16], f32[8,16]) {
  %x = f32[8,16]{1,0} parameter(0)
  %y = f32[16]{0} parameter(1)
  %z = f32[8]{0} parameter(2)
  %fa = f32[8,16]{1,0} fusion(%x, %y), kind=kLoop, calls=%fused_a
  %fb = f32[8,16]{1,0} fusion(%x, %y), kind=kLoop, calls=%fused_b
  %fs = f32[8,16]{1,0} fusion(%x, %y), kind=kLoop, calls=%fused_swapped
  %fc = f32[8,16]{1,0} fusion(%x, %z), kind=kLoop, calls=%fused_column
  ROOT %out = (f32[8,16]{1,0}, f32[8,16]{1,0}, f32[8,16]{1,0}, f32[8,16]{1,0}) tuple(%fa, %fb, %fs, %fc)
}
"""


def fusions_by_name(module: ir.Module) -> dict[str, ir.Operation]:
    return {hlo_source.instruction_name(op): op for _, op in computations(module.operation) if op.name == "mhlo.fusion"}


def test_the_same_body_is_analysed_once_and_rebound_to_each_fusion(monkeypatch) -> None:
    module = hlo_source.import_hlo(REPEATED)
    fusions = fusions_by_name(module)
    keys = {name: body_key(op)[0] for name, op in fusions.items()}
    assert keys["fa"] == keys["fb"]  # names differ, nothing else
    assert keys["fs"] != keys["fa"]  # the operands swapped
    assert keys["fc"] != keys["fa"]  # another broadcast dimension and operand type
    analysed: list[str] = []
    direct_analysis = shared_bodies.analyze_fusion

    def counting(op: ir.Operation, **kwargs: object) -> object:
        analysed.append(hlo_source.instruction_name(op))
        return direct_analysis(op, **kwargs)

    monkeypatch.setattr(shared_bodies, "analyze_fusion", counting)
    memo = TilingMemo()
    results = {name: memo.analyze(op) for name, op in fusions.items()}
    assert analysed == ["fa", "fs", "fc"]
    for name, op in fusions.items():
        result = results[name]
        assert isinstance(result, TiledFusion)
        assert_same_analysis(result, direct_analysis(op))
    assert [n.name for n in results["fb"].nodes] == ["parameter(0)", "parameter(1)", "bb", "t"]
    assert [p.owner for p in results["fb"].parameters] == ["t", "t"]
    assert_same_ranking(memo, results["fb"], direct_analysis(fusions["fb"]), fusions["fb"])


def test_exactness_and_blockspecs_are_computed_once_per_body_and_sizes(monkeypatch) -> None:
    module = hlo_source.import_hlo(REPEATED)
    fusions = fusions_by_name(module)
    memo = TilingMemo()
    results = {name: memo.analyze(op) for name, op in fusions.items()}
    tiled: list[tuple[int, ...]] = []
    direct_tiling = shared_bodies.tiled_computation

    def counting(fusion: TiledFusion, sizes: list[int]) -> object:
        tiled.append(tuple(sizes))
        return direct_tiling(fusion, sizes)

    monkeypatch.setattr(shared_bodies, "tiled_computation", counting)
    for name in ("fa", "fb", "fa"):
        fusion = results[name]
        assert isinstance(fusion, TiledFusion)
        exactness = memo.exactness(fusion, [1, 4])
        memo.blockspecs(fusion, [1, 4])
        assert [o.name for o in exactness.operands] == [o.name for o in tiling_exactness(fusion, [1, 4]).operands]
    assert tiled == [(1, 4)]  # fa and fb share their body: one tiled computation for both
    with pytest.raises(InvalidArgumentError, match="not analysed by this memo"):
        memo.exactness(analyze_fusion(fusions["fa"]), [1, 4])


def test_operands_read_through_the_same_maps_and_tiles_are_counted_once() -> None:
    # An optimizer's fusion reads dozens of weights the same way: one count per kind.
    module = hlo_source.import_hlo("""
HloModule pair

%fused_pair (p0: f32[8,16], p1: f32[8,16], p2: f32[16]) -> f32[8,16] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[8,16]{1,0} parameter(1)
  %p2 = f32[16]{0} parameter(2)
  %b = f32[8,16]{1,0} broadcast(%p2), dimensions={1}
  %s = f32[8,16]{1,0} add(%p0, %p1)
  ROOT %t = f32[8,16]{1,0} multiply(%s, %b)
}

ENTRY %main (x: f32[8,16], y: f32[16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  %y = f32[16]{0} parameter(1)
  ROOT %f = f32[8,16]{1,0} fusion(%x, %x, %y), kind=kLoop, calls=%fused_pair
}
""")
    fusion = analyze_fusion(fusions_by_name(module)["f"])
    assert isinstance(fusion, TiledFusion)
    counts: dict = {}
    for sizes in fusion.valid_tilings():
        computation = tiled_computation(fusion, list(sizes))
        shared = computation_exactness(fusion, computation, counts=counts)
        direct = computation_exactness(fusion, computation)
        assert shared == direct and shared.to_json() == direct.to_json()
    # parameters 0 and 1 share their counts at every tiling; parameter 2 has its own
    assert len(counts) == 2 * len(fusion.valid_tilings())


def test_names_that_cannot_be_carried_over_fall_back_to_the_direct_analysis() -> None:
    # In @first two values share the location name "x"; in @second they are named apart,
    # so the names of the first cannot be mapped to the second's.
    text = """
func.func @first(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32> loc("x"("f.py":1:1))
  %1 = stablehlo.negate %0 : tensor<4xf32> loc("x"("f.py":2:1))
  return %1 : tensor<4xf32>
}
func.func @second(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32> loc("y"("f.py":1:1))
  %1 = stablehlo.negate %0 : tensor<4xf32> loc("z"("f.py":2:1))
  return %1 : tensor<4xf32>
}
"""
    with default_context():
        module = ir.Module.parse(text)
        first, second = [op for _, op in computations(module.operation)]
        memo = TilingMemo()
        memo.analyze(first)
        shared = memo.analyze(second)
        direct = analyze_fusion(second)
        assert isinstance(shared, TiledFusion) and isinstance(direct, TiledFusion)
        assert [n.name for n in shared.nodes] == ["parameter(0)", "y", "z"]
        assert_same_analysis(shared, direct)


def test_a_ranking_error_names_the_fusion_asked_about() -> None:
    module = hlo_source.import_hlo(REPEATED)
    fusions = fusions_by_name(module)
    memo = TilingMemo()
    first, second = memo.analyze(fusions["fa"]), memo.analyze(fusions["fb"])
    assert isinstance(first, TiledFusion) and isinstance(second, TiledFusion)
    bad = {0: "{0}"}  # rank 1 for a rank-2 operand
    with pytest.raises(HloIndexingError) as direct_error:
        rank_tilings(second, BUDGET, layouts=bad)
    for _ in range(2):  # not remembered as a ranking
        with pytest.raises(HloIndexingError) as error:
            memo.rank(second, BUDGET, layouts=bad)
        assert error.value.message == direct_error.value.message


def printed_report(module: ir.Module, **options: object) -> list[tuple[str, str]]:
    """What ``hlo-print-tilings`` with ``options`` prints for ``module``: (severity, message)."""
    diagnostics = Diagnostics()
    PrintTilings(**options).run(module.operation, diagnostics)  # type: ignore[arg-type]
    return [(d.severity, d.message) for d in diagnostics.items]


def named_as(value: object, names: dict[str, str]) -> object:
    """A tilings JSON ``value`` with every ``name`` entry replaced through ``names``."""
    if isinstance(value, dict):
        return {k: names.get(v, v) if k == "name" else named_as(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [named_as(v, names) for v in value]
    return value


@pytest.mark.parametrize("device", ["", "h100", "tpu-v5e"])
def test_fusions_of_one_body_print_the_same_tilings_but_for_their_names(device: str) -> None:
    """fa and fb share their body (fb's instructions are named apart: its root is t, fa's
    s): the report prints for fb what it prints for fb alone (func=fb: its own analysis,
    nothing shared), and what it prints for fa with fa's names replaced by fb's."""
    module = hlo_source.import_hlo(REPEATED)
    options = {"max": 3, "device": device}
    lines = printed_report(module, **options)
    fa = [message.removeprefix("fa") for _, message in lines if message.startswith("fa")]
    fb = [message.removeprefix("fb") for _, message in lines if message.startswith("fb")]
    assert fa and fb == fa  # 3 tilings (on tpu-v5e one, and the rejections)
    assert [line for line in lines if line[1].startswith("fb")] == printed_report(module, func="fb", **options)
    (document,) = [json.loads(m) for severity, m in printed_report(module, format="json", **options) if severity == "output"]
    entries = {entry["name"]: entry for entry in document["computations"]}
    (alone,) = [json.loads(m) for severity, m in printed_report(module, format="json", func="fb", **options)
                if severity == "output"]
    assert alone["computations"] == [entries["fb"]]
    assert [t["rank"] for t in entries["fb"]["tilings"]] == list(range(1, len([m for m in fb if "tiling #" in m]) + 1))
    assert named_as(entries["fa"]["tilings"], {"s": "t"}) == entries["fb"]["tilings"]
    assert {o["name"] for t in entries["fb"]["tilings"] for o in t["operands"]} == {"parameter(0)", "parameter(1)", "t"}


@pytest.mark.parametrize("device", ["", "h100"])
def test_the_printed_footprints_are_built_once_per_body(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """fa and fb share their body, fs and fc have their own: the best 3 tilings of 3
    bodies are built (from the ranking's tables), written as JSON and as text 9 times,
    not 12 (once per fusion)."""
    module = hlo_source.import_hlo(REPEATED)
    bodies = {body_key(op)[0] for op in fusions_by_name(module).values()}
    assert len(bodies) == 3
    calls: list[str] = []

    def counted(name: str, method: object) -> object:
        def counting(*args: object, **kwargs: object) -> object:
            calls.append(name)
            return method(*args, **kwargs)  # type: ignore[operator]
        return counting

    monkeypatch.setattr(ranking_module._FromTables, "__call__", counted("built", ranking_module._FromTables.__call__))
    monkeypatch.setattr(Footprint, "to_json", counted("json", Footprint.to_json))
    monkeypatch.setattr(Footprint, "__str__", counted("text", Footprint.__str__))
    lines = printed_report(module, max=3, device=device, format="json")
    assert any(severity == "output" for severity, _ in lines)
    assert (calls.count("built"), calls.count("json"), calls.count("text")) == (9, 9, 9)


def test_a_printed_tiling_renamed_is_the_renamed_footprint_printed() -> None:
    """PrintedTiling.renamed (no counting, no writing when the text names nothing
    renamed) equals PrintedTiling.of of the renamed footprint, names in the exactness
    (which the text shows) and in the operands and outputs (which only the JSON does)."""
    module = hlo_source.import_hlo(REPEATED)
    fusion = analyze_fusion(fusions_by_name(module)["fa"])
    assert isinstance(fusion, TiledFusion)
    printed = PrintedTiling.of(with_exactness(fusion, tiling_footprint(fusion, [2, 8])))
    for names in ({"s": "out"}, {"s": "out", "parameter(0)": "x"}, {}):
        renamed = printed.renamed(names)
        expected = PrintedTiling.of(printed.footprint.renamed(names))
        assert (renamed.footprint, renamed.fields, renamed.text) == (expected.footprint, expected.fields, expected.text)
        assert [o.name for o in renamed.footprint.operands + renamed.footprint.outputs] == [
            names.get(name, name) for name in ("parameter(0)", "parameter(1)", "s")]
        assert ("exactness x 1" in renamed.text) == ("parameter(0)" in names)
        assert renamed.fields == named_as(printed.fields, names)
        renamed.fields["operands"][0]["tile_sizes"].append(0)  # type: ignore[index]  # a copy: printed keeps its own
        assert printed.fields == printed.footprint.to_json()


def test_body_key_walks_deep_nesting_without_recursion() -> None:
    depth = 300
    body = "%r = stablehlo.constant dense<1.0> : tensor<f32>\n"
    for _ in range(depth):  # each level: a one-branch case whose branch holds the rest
        body = (
            '%r = "stablehlo.case"(%i) ({\n' + body + '"stablehlo.return"(%r) : (tensor<f32>) -> ()\n'
            "}) : (tensor<i32>) -> tensor<f32>\n"
        )
    text = "func.func @deep(%i: tensor<i32>) -> tensor<f32> {\n" + body + "return %r : tensor<f32>\n}"
    with default_context():
        module = ir.Module.parse(text)
        func = next(iter(module.body.operations))
        key, values = body_key(func)
    assert key.count("{") == depth + 1  # the function's region and one per case
    assert len(values) == 1 + 1 + depth  # %i, the constant, one result per case
