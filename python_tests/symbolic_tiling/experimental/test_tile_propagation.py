"""Tile propagation (hlo_indexing.symbolic_tiling) checked by enumeration.

Soundness (hypothesis, small generated ops): for concrete tile sizes and every tile id,
every operand element that an element of the output tile reads -- by the op's per-op
indexing map of ``hlo_indexing.ops``, enumerated -- lies in the propagated operand tile.
Reduced/contracted dimensions are tiled sequentially, so the union of the operand tiles
over their tile ids is checked. Then the shared XLA corpus: pass rate of our checkers.
"""

from __future__ import annotations

import itertools
import json
import math

import pytest

from hlo_indexing import output_to_input_indexing, parse_module
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import parse_hlo_graph
from hlo_indexing.symbolic_tiling.experimental.propagation import propagate_to_input, propagate_to_output
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile, tid
from hlo_indexing.symbolic_tiling.experimental.tiling_space import create_tiling_space
from helpers import CONFORMANCE

hypothesis = pytest.importorskip("hypothesis")  # optional test dependency (test extra)
st = hypothesis.strategies

CORPUS = CONFORMANCE / "xla_tiling"


def _elements(values: dict[str, list[int]], shape: tuple[int, ...]) -> set[tuple[int, ...]]:
    """In-bounds, unmasked indices of an evaluated tile."""
    axes = []
    for d in range(len(shape)):
        idx = [values["offsets"][d] + j * values["strides"][d] for j in range(values["sizes"][d])]
        axes.append([i for i in idx if 0 <= i < min(values["upper_bounds"][d], shape[d])])
    return set(itertools.product(*axes))


def _reads(hlo: str) -> list[dict[tuple[int, ...], set[tuple[int, ...]]]]:
    """Per operand: output index -> operand indices read, by the per-op indexing maps."""
    module = parse_module(hlo, filename="gen.hlo")
    func = [op for op in module.body.operations if "main" in str(op.attributes["sym_name"])][0]
    op = list(func.regions[0].blocks[0].operations)[-2]
    out = []
    for maps in output_to_input_indexing(op).maps:
        table: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
        for m in maps:
            for dims, results in m.relation():
                table.setdefault(tuple(dims), set()).add(tuple(results))
        out.append(table)
    return out


def _check_sound(hlo: str, tile_sizes_for, *, refusal_allowed: bool = True) -> None:
    """Every operand element an output-tile element reads lies in the propagated operand
    tiles. A refusal (``TilingError``) claims nothing: inside hypothesis it discards the
    example, unless ``refusal_allowed`` is false."""
    graph = parse_hlo_graph(hlo)
    root = graph.entry_computation.root
    space = create_tiling_space(graph, instruction=root)
    sizes = tile_sizes_for(space)
    space.assign_tile_sizes(sizes)
    root_tile = space.concretize(space.root_tiles()[0])
    try:
        tiles = propagate_to_input(space, root, root_tile)
    except TilingError:
        if not refusal_allowed:
            raise
        hypothesis.assume(False)  # refused: nothing claimed (counted as invalid, limited by hypothesis)
    reads = _reads(hlo)
    assert len(reads) == len(root.operands), "the per-op maps must describe every operand"
    if not any(reads):  # e.g. a window over padding only reads nothing
        hypothesis.assume(False)
    shape = root.array.dims
    grids = [range(-(-d.size // t)) for d, t in zip(space.dimensions, sizes)]
    parallel = [d.index for d in space.dimensions if d.type == "parallel"]
    for ids in itertools.product(*[grids[i] for i in parallel]):
        point = {f"tid_{i}": v for i, v in zip(parallel, ids)}
        point.update({f"ts_{d.index}": s for d, s in zip(space.dimensions, sizes)})
        out_elems = _elements(root_tile.evaluate(point), shape)
        for k, (operand, tile) in enumerate(zip(root.operands, tiles)):
            covered: set[tuple[int, ...]] = set()
            sequential = [d.index for d in space.dimensions if d.type == "sequential"]
            for seq in itertools.product(*[grids[i] for i in sequential]):
                point.update({f"tid_{i}": v for i, v in zip(sequential, seq)})
                covered |= _elements(tile.evaluate(point), operand.array.dims)
            for index in out_elems:
                missing = reads[k].get(index, set()) - covered
                assert not missing, f"{hlo}\noperand {k} tile {tile} misses {sorted(missing)[:4]} read by {index}"


dims_strategy = st.lists(st.integers(1, 5), min_size=1, max_size=3)


def _sizes(draw_sizes):
    return lambda space: [draw_sizes[i % len(draw_sizes)] for i in range(space.num_dimensions)]


def _shape(dims) -> str:
    return "f32[" + ",".join(map(str, dims)) + "]"


@st.composite
def unary_ops(draw):
    dims = draw(dims_strategy)
    kind = draw(st.sampled_from(["negate", "transpose", "broadcast", "slice", "reduce", "pad", "reshape",
                                 "reverse", "reduce-window", "sort", "bitcast-convert"]))
    x = _shape(dims)
    if kind == "negate":
        body, out = "negate(p0)", x
    elif kind == "transpose":
        perm = draw(st.permutations(range(len(dims))))
        body, out = f"transpose(p0), dimensions={{{','.join(map(str, perm))}}}", _shape([dims[p] for p in perm])
    elif kind == "broadcast":
        new = draw(st.integers(1, 3))
        at = draw(st.integers(0, len(dims)))
        out_dims = dims[:at] + [new] + dims[at:]
        kept = [i for i in range(len(out_dims)) if i != at]
        body, out = f"broadcast(p0), dimensions={{{','.join(map(str, kept))}}}", _shape(out_dims)
    elif kind == "slice":
        parts, out_dims = [], []
        for d in dims:
            start = draw(st.integers(0, d - 1))
            step = draw(st.integers(1, 2))
            parts.append(f"[{start}:{d}:{step}]")
            out_dims.append(len(range(start, d, step)))
        body, out = f"slice(p0), slice={{{', '.join(parts)}}}", _shape(out_dims)
    elif kind == "pad":
        lows = [draw(st.integers(0, 2)) for _ in dims]
        highs = [draw(st.integers(0, 2)) for _ in dims]
        cfg = "x".join(f"{lo}_{hi}" for lo, hi in zip(lows, highs))
        body = f"pad(p0, c), padding={cfg}"
        out = _shape([d + lo + hi for d, lo, hi in zip(dims, lows, highs)])
    elif kind == "reshape":
        body, out = "reshape(p0)", _shape([math.prod(dims)])
    elif kind == "reverse":
        axes = draw(st.sets(st.integers(0, len(dims) - 1), min_size=1))
        body, out = f"reverse(p0), dimensions={{{','.join(map(str, sorted(axes)))}}}", x
    elif kind == "bitcast-convert":
        body, out = "bitcast-convert(p0)", "s32[" + ",".join(map(str, dims)) + "]"
    elif kind == "sort":
        axis = draw(st.integers(0, len(dims) - 1))
        body, out = f"sort(p0), dimensions={{{axis}}}, to_apply=less", x
    elif kind == "reduce-window":
        sizes = [draw(st.integers(1, d)) for d in dims]
        steps = [draw(st.integers(1, 2)) for _ in dims]
        pads = [draw(st.integers(0, 1)) for _ in dims]
        window = (f"size={'x'.join(map(str, sizes))} stride={'x'.join(map(str, steps))} "
                  f"pad={'x'.join(f'{p}_{p}' for p in pads)}")
        out_dims = [(d + 2 * p - w) // s + 1 for d, w, s, p in zip(dims, sizes, steps, pads)]
        body, out = f"reduce-window(p0, c), window={{{window}}}, to_apply=add", _shape(out_dims)
    else:
        axis = draw(st.integers(0, len(dims) - 1))
        body = f"reduce(p0, c), dimensions={{{axis}}}, to_apply=add"
        out = _shape([d for i, d in enumerate(dims) if i != axis])
    return ("HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
            " ROOT s = f32[] add(a, b)\n}\n"
            "less {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
            " ROOT s = pred[] compare(a, b), direction=LT\n}\n"
            f"ENTRY main {{\n p0 = {x} parameter(0)\n c = f32[] constant(0)\n ROOT r = {out} {body}\n}}\n")


@pytest.mark.slow
@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(unary_ops(), st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_operand_tile_covers_what_the_output_tile_reads(hlo, sizes):
    _check_sound(hlo, _sizes(sizes))


@hypothesis.settings(max_examples=15, deadline=None)
@hypothesis.given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3),
                  st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_dot_operand_tiles_cover_the_contraction(m, k, n, sizes):
    hlo = (f"HloModule m\nENTRY main {{\n a = f32[{m},{k}] parameter(0)\n b = f32[{k},{n}] parameter(1)\n"
           f" ROOT d = f32[{m},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n")
    _check_sound(hlo, _sizes(sizes))


@hypothesis.settings(max_examples=15, deadline=None)
@hypothesis.given(st.lists(st.integers(1, 2), min_size=1, max_size=2), st.integers(1, 4), st.integers(1, 4))
def test_concatenate_operand_tiles(multiples, size, last):
    """Operands but the last are multiples of the tile size (XLA refuses other tilings)."""
    lengths = [k * size for k in multiples] + [last]
    parts = "\n".join(f" p{i} = f32[{n}] parameter({i})" for i, n in enumerate(lengths))
    hlo = (f"HloModule m\nENTRY main {{\n{parts}\n ROOT c = f32[{sum(lengths)}] concatenate("
           f"{', '.join(f'p{i}' for i in range(len(lengths)))}), dimensions={{0}}\n}}\n")
    _check_sound(hlo, lambda space: [size])


@pytest.mark.parametrize("lengths", [(3, 2), (5, 7, 1)])
def test_unit_tiles_along_the_concatenated_dimension_are_accepted(lengths):
    """Every offset is a multiple of 1: XLA's divisibility checks accept size-1 tiles on
    any concatenate (odd operand lengths included), and the operand tiles are sound."""
    parts = "\n".join(f" p{i} = f32[{n}] parameter({i})" for i, n in enumerate(lengths))
    hlo = (f"HloModule m\nENTRY main {{\n{parts}\n ROOT c = f32[{sum(lengths)}] concatenate("
           f"{', '.join(f'p{i}' for i in range(len(lengths)))}), dimensions={{0}}\n}}\n")
    _check_sound(hlo, lambda space: [1], refusal_allowed=False)


@hypothesis.settings(max_examples=20, deadline=None)
@hypothesis.given(st.integers(3, 7), st.integers(1, 3), st.integers(1, 2), st.integers(0, 1), st.integers(1, 2),
                  st.lists(st.integers(1, 3), min_size=1, max_size=3))
def test_convolution_input_tile_covers_the_window(width, kernel, stride, pad, dilation, sizes):
    span = (kernel - 1) * dilation + 1
    hypothesis.assume(width + 2 * pad >= span)
    out = (width + 2 * pad - span) // stride + 1
    hlo = (f"HloModule m\nENTRY main {{\n x = f32[1,{width},2] parameter(0)\n k = f32[{kernel},2,3] parameter(1)\n"
           f" ROOT c = f32[1,{out},3] convolution(x, k), window={{size={kernel} stride={stride} pad={pad}_{pad} "
           f"rhs_dilate={dilation}}}, dim_labels=b0f_0io->b0f\n}}\n")
    _check_sound(hlo, _sizes(sizes))


@hypothesis.settings(max_examples=15, deadline=None)
@hypothesis.given(st.integers(2, 6), st.integers(1, 3), st.integers(0, 5), st.lists(st.integers(1, 4), min_size=1))
def test_dynamic_update_slice_operand_tiles(length, update, start, sizes):
    hypothesis.assume(update <= length)
    hlo = (f"HloModule m\nENTRY main {{\n p = f32[{length}] parameter(0)\n u = f32[{update}] parameter(1)\n"
           f" i = s32[] constant({start})\n ROOT d = f32[{length}] dynamic-update-slice(p, u, i)\n}}\n")
    _check_sound(hlo, _sizes(sizes))


def _accessed(values: dict[str, list[int]], shape: tuple[int, ...]) -> list[int]:
    """Row-major linear indices of the tile's elements in tile order, masked by the bounds."""
    axes = [[values["offsets"][d] + j * values["strides"][d] for j in range(values["sizes"][d])]
            for d in range(len(shape))]
    out = []
    for index in itertools.product(*axes):
        if all(i < min(values["upper_bounds"][d], shape[d]) for d, i in enumerate(index)):
            out.append(sum(i * math.prod(shape[d + 1:]) for d, i in enumerate(index)))
    return out


@st.composite
def reshapes(draw):
    factors = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    source = tuple(factors)
    cut = sorted(draw(st.sets(st.integers(1, max(1, len(factors) - 1)), max_size=len(factors) - 1)))
    bounds = [0] + list(cut) + [len(factors)]
    target = tuple(math.prod(factors[a:b]) for a, b in zip(bounds, bounds[1:]) if b > a)
    if draw(st.booleans()):
        source, target = target, source
    sizes = [draw(st.integers(1, max(1, d))) for d in source]
    strides = [draw(st.integers(1, 2)) for _ in source]
    return source, target, sizes, strides


@pytest.mark.slow
@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(reshapes())
def test_reshape_tile_accesses_the_same_elements_in_the_same_order(case):
    """XLA's VerifyTileEquivalence: for every tile id, the propagated tile reads the
    elements of the source tile, in order."""
    source, target, sizes, strides = case
    hlo = (f"HloModule m\nENTRY e {{\n p = {_shape(source)} parameter(0)\n"
           f" ROOT r = {_shape(target)} reshape(p)\n}}\n")
    graph = parse_hlo_graph(hlo)
    root = graph.entry_computation.root
    space = create_tiling_space(graph, instruction=root.operands[0])
    space.assign_tile_sizes(sizes)
    tile = Tile(len(source), 0, tuple(
        DimTile.of(tid(i) * size, size, stride, dim) for i, (dim, size, stride) in enumerate(zip(source, sizes, strides))))
    try:
        out = propagate_to_output(space, root, tile)[0]
    except TilingError:
        hypothesis.assume(False)  # refused: nothing claimed
    for ids in itertools.product(*[range(-(-d // t)) for d, t in zip(source, sizes)]):
        point = {f"tid_{i}": v for i, v in enumerate(ids)}
        assert _accessed(out.evaluate(point), target) == _accessed(tile.evaluate(point), source), (
            f"{source} -> {target} tile {tile} -> {out} at {point}")


@pytest.mark.parametrize("source", [(3, 4), (2, 6), (4, 2, 6), (2, 3, 4)])
def test_collapsing_onto_a_stepped_innermost_dimension_keeps_its_step(source):
    """A collapse whose innermost tile steps through its whole dimension (0, 2 of 4)
    while the outer ones are contiguous (XLA's CollapseShapeContiguous_FullySpannedInnermost)
    is one progression with that step: same elements, same order, at every start below
    the step and every size of the outer dimension."""
    target = (math.prod(source),)
    hlo = (f"HloModule m\nENTRY e {{\n p = {_shape(source)} parameter(0)\n"
           f" ROOT r = {_shape(target)} reshape(p)\n}}\n")
    graph = parse_hlo_graph(hlo)
    root = graph.entry_computation.root
    checked = 0
    for step in (s for s in range(2, source[-1] + 1) if source[-1] % s == 0):
        for start in range(step):
            for outer in range(1, source[0] + 1):
                sizes = [outer, *source[1:-1], source[-1] // step]
                space = create_tiling_space(graph, instruction=root.operands[0])
                space.assign_tile_sizes(sizes)
                dims = [DimTile.of(0, outer, 1, source[0])]
                dims += [DimTile.of(0, d, 1, d) for d in source[1:-1]]
                dims += [DimTile.of(start, source[-1] // step, step, source[-1])]
                tile = Tile(len(source), 0, tuple(dims))
                out = propagate_to_output(space, root, tile)[0]
                assert _accessed(out.evaluate({}), target) == _accessed(tile.evaluate({}), source), (source, tile, out)
                checked += 1
    assert checked >= 3


def test_collapsing_refuses_two_stepped_dimensions_and_a_stepped_outer_one():
    graph = parse_hlo_graph("HloModule m\nENTRY e {\n p = f32[3,4,5] parameter(0)\n ROOT r = f32[60] reshape(p)\n}\n")
    root = graph.entry_computation.root
    for strides, sizes, reason in [((2, 2, 1), (2, 2, 1), "At most one dimension can have stride >1"),
                                   ((2, 1, 1), (2, 4, 5), "only the strided dimension 0 can have size > 1")]:
        space = create_tiling_space(graph, instruction=root.operands[0])
        space.assign_tile_sizes(list(sizes))
        tile = Tile(3, 0, tuple(DimTile.of(0, n, s, d) for n, s, d in zip(sizes, strides, (3, 4, 5))))
        with pytest.raises(TilingError) as info:
            propagate_to_output(space, root, tile)
        assert reason in info.value.reason


def test_reshape_refusal_names_the_reason():
    graph = parse_hlo_graph("HloModule m\nENTRY e {\n p = f32[12] parameter(0)\n ROOT r = f32[3,4] reshape(p)\n}\n")
    space = create_tiling_space(graph, instruction=graph.entry_computation.root.operands[0])
    space.assign_tile_sizes([5])
    tile = space.concretize(space.root_tiles()[0])
    with pytest.raises(TilingError) as info:
        propagate_to_output(space, graph.entry_computation.root, tile)
    assert info.value.status == "UNIMPLEMENTED" and "partially tiled" in info.value.reason


def test_shared_corpus_pass_rate():
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is missing (the shared conformance corpus)")
    checkers = _checkers()
    verdicts: dict[str, dict[str, int]] = {}
    for name in ("tile.jsonl", "tile_propagation.jsonl", "tiling_space.jsonl", "tiled_hlo.jsonl"):
        counts = verdicts.setdefault(name, {"pass": 0, "fail": 0, "skip": 0})
        for line in (CORPUS / name).read_text().splitlines():
            verdict, _ = checkers[json.loads(line)["kind"]](json.loads(line))
            counts[verdict] += 1
    total = sum(sum(c.values()) for c in verdicts.values())
    passed = sum(c["pass"] for c in verdicts.values())
    assert passed >= 0.95 * total, verdicts
    assert all(c["fail"] == 0 for c in verdicts.values()), verdicts  # see dev/README-tiling-propagation.md


def _checkers():
    from tiling_conformance_propagation import CHECKERS  # dev/, not installed (pytest's pythonpath)

    return CHECKERS


def test_checkers_reject_a_wrong_expectation_and_never_raise():
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is missing (the shared conformance corpus)")
    checkers = _checkers()
    for name in ("tile_propagation.jsonl", "tiled_hlo.jsonl"):
        record = next(json.loads(line) for line in (CORPUS / name).read_text().splitlines()
                      if json.loads(line).get("evaluations"))
        assert checkers[record["kind"]](record)[0] == "pass"
        record["evaluations"][-1]["offsets"][0] += 1
        verdict, detail = checkers[record["kind"]](record)
        assert verdict == "fail" and "offsets" in detail
    broken = {"kind": "propagate_to_input", "hlo": "HloModule m\nENTRY e {", "id": "broken"}
    verdict, detail = checkers["propagate_to_input"](broken)
    assert verdict == "fail" and "Error" in detail
