"""Conformance checkers for XLA's experimental tiling corpus (``tile.jsonl``,
``tile_propagation.jsonl``, ``tiling_space.jsonl``, ``tiled_hlo.jsonl`` under
``../shared/conformance/xla_tiling``; fields in its ``README-propagation.md``).

``CHECKERS`` maps each record ``kind`` to a function ``record -> (verdict, detail)`` with
verdict ``pass``, ``fail`` or ``skip``. Tiles are compared numerically through each
record's ``evaluations`` (offsets, sizes, strides, upper bounds at concrete tile ids,
tile sizes and runtime variables), reshape tiles through the list of elements they
access; error records through the status code and message substring. A checker never
raises: an exception becomes ``fail`` naming it. Not installed: run through
``dev/run.py conformance`` or import from this folder.
"""

from __future__ import annotations

import re
import traceback
from typing import Callable

from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import HloGraph, parse_hlo_graph
from hlo_indexing.symbolic_tiling.experimental.propagation import propagate_to_input, propagate_to_output
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile, parse_tile, tid, ts
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr, parse_expr
from hlo_indexing.symbolic_tiling.experimental.tiled_hlo import TiledComputation, TiledInstruction, tile_computation
from hlo_indexing.symbolic_tiling.experimental.tiling_space import TilingSpace, create_tiling_space

Verdict = tuple[str, str]


def _guarded(check: Callable[[dict], Verdict]) -> Callable[[dict], Verdict]:
    def run(record: dict) -> Verdict:
        try:
            return check(record)
        except Exception as exc:  # a checker never raises: the record fails, naming the exception
            where = traceback.extract_tb(exc.__traceback__)[-1]
            return "fail", f"{type(exc).__name__}: {exc} (at {where.name}:{where.lineno})"
    run.__doc__ = check.__doc__
    return run


def _compare_evaluations(tiles: list[Tile] | dict, evaluations: list[dict]) -> Verdict:
    for n, ev in enumerate(evaluations):
        key = ev["tile"]
        if isinstance(tiles, list) and not isinstance(key, int):
            return "fail", f"evaluation {n}: tile label {key!r} for a list of tiles"
        if isinstance(key, int) and key >= len(tiles):
            return "fail", f"evaluation {n}: tile {key} missing ({len(tiles)} tiles)"
        got = tiles[key].evaluate(ev["point"])
        for field in ("offsets", "sizes", "strides", "upper_bounds"):
            if got[field] != ev[field]:
                return "fail", f"evaluation {n} tile {key} at {ev['point']}: {field} {got[field]} != {ev[field]}"
        if "replica_ids" in ev:
            replica = got.get("replica_ids")
            if replica is None:
                return "fail", f"evaluation {n} tile {key}: no replica-id tile"
            for field, want in ev["replica_ids"].items():
                if replica.get(field) != want:
                    return "fail", f"evaluation {n} tile {key}: replica {field} {replica.get(field)} != {want}"
    return "pass", f"{len(evaluations)} evaluations agree"


def _check_space(space: TilingSpace, expected: dict) -> str | None:
    got_dims = [(d.size, d.type) for d in space.dimensions]
    want_dims = [(d["size"], d["type"]) for d in expected["dimensions"]]
    if got_dims != want_dims:
        return f"tiling space dimensions {got_dims} != {want_dims}"
    got_rt = [list(v.bounds) for v in space.rt_vars]
    want_rt = [list(v["bounds"]) for v in expected["rt_vars"]]
    if got_rt != want_rt:
        return f"runtime variables {got_rt} != {want_rt}"
    return None


def _status(exc: TilingError, record: dict) -> Verdict:
    want = record["expected_status"]
    if want == "OK":
        return "fail", f"expected success, got {exc}"
    if want != "ERROR" and exc.status != want:
        return "fail", f"status {exc.status} != {want}: {exc.reason}"
    substring = record.get("expected_error_substring")
    if substring and substring not in exc.reason:
        return "fail", f"message {exc.reason!r} lacks {substring!r}"
    return "pass", f"{exc.status} as expected"


def _propagate(space: TilingSpace, graph, name: str, direction: str, tile: Tile, index: int) -> list[Tile]:
    hlo = graph.instruction(name)
    if direction in ("output_to_input", "propagate_to_input"):
        return propagate_to_input(space, hlo, tile, index)
    return propagate_to_output(space, hlo, tile, index)


def _setup(record: dict):
    graph = parse_hlo_graph(record.get("hlo") or record["constructed_hlo"])
    root = graph.entry_computation.root
    if record["kind"] in ("reshape_to_output", "error_message"):
        root = root.operands[0]  # the tests build the tiling space of the reshaped parameter
    space = create_tiling_space(graph, instruction=root)
    problem = _check_space(space, record["tiling_space"])
    if record.get("tile_sizes"):
        space.assign_tile_sizes(record["tile_sizes"])
    return graph, space, problem


@_guarded
def check_propagation(record: dict) -> Verdict:
    """``propagate_to_input`` / ``propagate_to_output``: replay the input chain,
    propagate, compare status, tile count and evaluations."""
    graph, space, problem = _setup(record)
    if problem:
        return "fail", problem
    if record.get("input_tile") is not None:
        tile = parse_tile(record["input_tile"])
    else:
        tile = None
        for step in record["input_chain"]:
            start = parse_tile(step["input_tile"]) if tile is None else tile
            index = step["index"]
            tile = _propagate(space, graph, step["instruction"], step["direction"], start, index)[
                step["take_result_tile"]]
    index = record["output_index"] if record["kind"] == "propagate_to_input" else record["input_index"]
    if tile is None:
        return "fail", "the record has neither an input tile nor an input chain"
    try:
        tiles = _propagate(space, graph, record["instruction"], record["kind"], tile, index)
    except TilingError as exc:
        return _status(exc, record)
    if record["expected_status"] != "OK":
        return "fail", f"expected {record['expected_status']}, got {len(tiles)} tiles"
    count = record.get("expected_count") or (len(record["expected"]) if record.get("expected") else None)
    if count is not None and len(tiles) != count:
        return "fail", f"{len(tiles)} tiles, expected {count}"
    if not record.get("evaluations"):
        return "pass", "succeeds as expected (no tile text checked)"
    return _compare_evaluations(tiles, record["evaluations"])


def _accessed(tile: Tile, shape: list[int]) -> list[int]:
    """Row-major linear indices in ``shape`` of the tile's elements, in tile order,
    masked by upper bounds (tile expressions must be constant here)."""
    point: dict[str, int] = {}
    dims = tile.evaluate(point)
    out: list[int] = []

    def walk(d: int, index: list[int]) -> None:
        if d == len(shape):
            linear = 0
            for i, size in zip(index, shape):
                linear = linear * size + i
            out.append(linear)
            return
        for j in range(dims["sizes"][d]):
            i = dims["offsets"][d] + j * dims["strides"][d]
            if i < dims["upper_bounds"][d]:
                walk(d + 1, index + [i])

    walk(0, [])
    return out


@_guarded
def check_reshape(record: dict) -> Verdict:
    """``reshape_to_output``: the output tile must access the recorded elements, in order,
    at every recorded tile id."""
    graph, space, problem = _setup(record)
    if problem:
        return "fail", problem
    tile = parse_tile(record["input_tile"])
    try:
        out = propagate_to_output(space, graph.instruction(record["instruction"]), tile, record["input_index"])
    except TilingError as exc:
        return _status(exc, record)
    if record["expected_status"] != "OK":
        return "fail", f"expected an error ({record.get('expected_error_substring')}), got {out[0]}"
    for ev in record["accessed_evaluations"]:
        point = ev["point"]
        got = _accessed(out[0].substitute(point), record["to_shape"])
        if got != ev["accessed"]:
            return "fail", f"at {point}: accessed {got[:12]} != {ev['accessed'][:12]}"
    return "pass", f"{len(record['accessed_evaluations'])} tile ids access the same elements"


@_guarded
def check_error_message(record: dict) -> Verdict:
    """``error_message``: the propagation fails with exactly the expected status text
    (whitespace-insensitive: a message test)."""
    graph, space, problem = _setup(record)
    if problem:
        return "fail", problem
    tile = parse_tile(record["input_tile"])
    try:
        out = propagate_to_output(space, graph.instruction(record["instruction"]), tile, record["input_index"])
    except TilingError as exc:
        if _squash(str(exc)) == _squash(record["expected"]):
            return "pass", "status text as expected"
        return "fail", f"status text {str(exc)!r}"
    return "fail", f"expected an error, got {out[0]}"


_DIMTILE = re.compile(r"DimTile\{([^}]*)\}")


def _construct(text: str) -> list[DimTile]:
    out = []
    for body in _DIMTILE.findall(text):
        parts = [re.sub(r"^(offset|size|stride|upper bound)\s+", "", p.strip()) for p in body.split(",")]
        out.append(DimTile(*(parse_expr(p) for p in parts)))
    return out


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@_guarded
def check_tile_print(record: dict) -> Verdict:
    """``tile_print`` / ``dim_tile_print``: build the tile from its construction, print
    it (a printing test: text compared ignoring whitespace) and evaluate it."""
    dims = _construct(record["construction"])
    if record["kind"] == "dim_tile_print":
        text = dims[0].to_string()
        return ("pass", "printed as expected") if _squash(text) == _squash(record["expected"]) else (
            "fail", f"printed {text!r}")
    space = record["tiling_space"]
    tile = Tile(len(space["dimensions"]), len(space["rt_vars"]), tuple(dims))
    if _squash(tile.to_string()) != _squash(record["expected"]):
        return "fail", f"printed {tile.to_string()!r}"
    return _compare_evaluations([tile], record["evaluations"])


def _fusion_space(graph: HloGraph, record: dict) -> TilingSpace:
    """The tiling space of the entry root, with the record's multi-output flags."""
    options = record.get("debug_options") or {}
    return create_tiling_space(
        graph,
        triton_multi_output=bool(options.get("xla_gpu_unsupported_enable_triton_multi_output_fusion")),
        same_shape_multi_output=bool(options.get("xla_gpu_experimental_enable_same_shape_multi_output_fusion")),
    )


@_guarded
def check_tiling_space(record: dict) -> Verdict:
    """``tiling_space``: dimensions (type, size, position, opcode of the owner), runtime
    variables (bounds, opcode of the source) and the root tiles' evaluations."""
    graph = parse_hlo_graph(record["hlo"])
    space = _fusion_space(graph, record)
    want = record["expected"]
    problem = _check_space(space, want)
    if problem:
        return "fail", problem
    for got, exp in zip(space.dimensions, want["dimensions"]):
        if got.dim_position != exp["dim_position"]:
            return "fail", f"dimension {got.index}: position {got.dim_position} != {exp['dim_position']}"
        opcode = re.search(r"\s([\w\-]+)\(", exp["hlo"].split("=", 1)[1])
        if opcode and opcode.group(1) != got.hlo.opcode:
            return "fail", f"dimension {got.index}: owner {got.hlo.opcode} != {opcode.group(1)}"
    if len(space.root_tiles()) != len(want["root_tiles"]):
        return "fail", f"{len(space.root_tiles())} root tiles != {len(want['root_tiles'])}"
    return _compare_evaluations(space.root_tiles(), record["evaluations"])


@_guarded
def check_tiling_space_error(record: dict) -> Verdict:
    """``tiling_space_error``: creating the space must fail."""
    graph = parse_hlo_graph(record["hlo"])
    try:
        _fusion_space(graph, record)
    except TilingError as exc:
        return _status(exc, record)
    return "fail", "tiling space created, expected an error"


@_guarded
def check_simplify_expression(record: dict) -> Verdict:
    """``simplify_expression``: XLA compares expression objects, so the simplified input
    must equal the parsed expectation structurally; both are also evaluated."""
    graph = parse_hlo_graph(record["hlo"])
    space = _fusion_space(graph, record)
    space.assign_tile_sizes(record["tile_sizes"])
    got = space.simplify_expression(parse_expr(record["input"]))
    want = parse_expr(record["expected"])
    for n, ev in enumerate(record["evaluations"]):
        if got.evaluate(ev["point"]) != ev["expected"]:
            return "fail", f"evaluation {n} at {ev['point']}: {got.evaluate(ev['point'])} != {ev['expected']}"
    if got != want:
        return "fail", f"simplified to {got}, expected {want}"
    return "pass", f"simplified to {got}"


def _tiled(record: dict) -> tuple[TilingSpace, TiledComputation]:
    graph = parse_hlo_graph(record["hlo"])
    space = _fusion_space(graph, record)
    space.assign_tile_sizes(record["tile_sizes"])
    return space, tile_computation(graph, space)


def _parameter_number(inst: TiledInstruction) -> int | None:
    match = re.search(r"\bparameter\((\d+)\)", inst.hlo.text)
    return int(match.group(1)) if inst.hlo.opcode == "parameter" and match else None


@_guarded
def check_tiled_computation(record: dict) -> Verdict:
    """``tiled_computation``: the tiling space, then every tiled instruction in printed
    order (opcode, operands and region owners by position, parameter number), then the
    evaluations of the root tiles and of each tiled instruction's tile. XLA's names
    (``p0.1.tile_0``) are mapped by position, not spelling."""
    space, computation = _tiled(record)
    want = record["expected"]
    problem = _check_space(space, want["tiling_space"])
    if problem:
        return "fail", problem
    sorted_ = "SortInstructionsPostOrder" in record.get("construction", "")
    mine = computation.ordered() if sorted_ else computation.instructions
    expected = want["tiled_hlo"]
    if len(mine) != len(expected):
        return "fail", f"{len(mine)} tiled instructions != {len(expected)}: {[m.name for m in mine]}"
    position = {e["name"]: i for i, e in enumerate(expected)}
    mine_position = {id(m): i for i, m in enumerate(mine)}
    for i, (m, e) in enumerate(zip(mine, expected)):
        if m.hlo.opcode != e["opcode"]:
            return "fail", f"instruction {i}: {m.name} ({m.hlo.opcode}) where {e['name']} ({e['opcode']}) expected"
        got_ops = [mine_position.get(id(o)) for o in m.operands]
        if got_ops != [position.get(o) for o in e["operands"]]:
            return "fail", f"instruction {i} ({e['name']}): operands at {got_ops}, expected {e['operands']}"
        got_region = [(mine_position.get(id(owner)), index) for owner, index in m.region]
        if got_region != [(position.get(r["owner"]), r["region"]) for r in e["region"]]:
            return "fail", f"instruction {i} ({e['name']}): region {got_region}, expected {e['region']}"
        if _parameter_number(m) != e["parameter_number"]:
            return "fail", f"instruction {i} ({e['name']}): parameter {_parameter_number(m)}"
    tiles: dict = {f"root_tile_{k}": t for k, t in enumerate(computation.root_tiles)}
    tiles.update({e["name"]: m.tile for m, e in zip(mine, expected)})
    return _compare_evaluations(tiles, record["evaluations"])


@_guarded
def check_tiled_computation_error(record: dict) -> Verdict:
    """``tiled_computation_error``: tiling fails with the expected status."""
    try:
        _tiled(record)
    except TilingError as exc:
        return _status(exc, record)
    return "fail", "tiled without error"


@_guarded
def check_tiled_computation_order(record: dict) -> Verdict:
    """``tiled_computation_order``: creation order starts with the root, the sorted order
    ends with it."""
    _, computation = _tiled(record)
    first = computation.instructions[0].hlo.opcode
    last = computation.ordered()[-1].hlo.opcode
    want = record["expected"]
    if (first, last) != (want["before_sort_first_opcode"], want["after_sort_last_opcode"]):
        return "fail", f"first {first}, last {last}"
    return "pass", f"first {first} before sorting, last {last} after"


@_guarded
def check_tiled_substring(record: dict) -> Verdict:
    """``tiled_computation_substring``: the printed computation before ``Simplify()``
    and after contains the expected pieces (a printing test: text)."""
    graph = parse_hlo_graph(record["hlo"])
    space = _fusion_space(graph, record)
    space.assign_tile_sizes(record["tile_sizes"])
    before = tile_computation(graph, space, simplify=False).to_string(ordered=False)
    after = tile_computation(graph, space).to_string()
    want = record["expected"]
    if want["before_simplify_contains"] not in before:
        return "fail", f"{want['before_simplify_contains']!r} not in the unsimplified print"
    if want["after_simplify_contains"] not in after:
        return "fail", f"{want['after_simplify_contains']!r} not in the simplified print"
    return "pass", "both prints contain the expected pieces"


@_guarded
def check_tiled_instruction_print(record: dict) -> Verdict:
    """``tiled_hlo_instruction_print``: the operand tile of the root, attached to the root
    HLO, printed as ``hlo: ...`` / ``tile: ...`` (text, whitespace-insensitive) and evaluated."""
    graph = parse_hlo_graph(record["hlo"])
    root = graph.instruction(record["instruction"])
    space = create_tiling_space(graph, instruction=root)
    shape = root.array.dims
    test_tile = Tile(space.num_dimensions, 0, tuple(
        DimTile(tid(i) * ts(i), ts(i), Expr.const(i + 1), Expr.const(d)) for i, d in enumerate(shape)))
    tile = propagate_to_input(space, root, test_tile, 0)[0]
    inst = TiledInstruction("t", root, tile, 0, ())
    want = record["expected"]
    if _squash(inst.to_string()) != _squash(f"hlo: {want['hlo']} tile: {want['tile']}"):
        return "fail", f"printed {inst.to_string()!r}"
    return _compare_evaluations([tile], record["evaluations"])


CHECKERS: dict[str, Callable[[dict], Verdict]] = {
    "propagate_to_input": check_propagation,
    "propagate_to_output": check_propagation,
    "reshape_to_output": check_reshape,
    "error_message": check_error_message,
    "tile_print": check_tile_print,
    "dim_tile_print": check_tile_print,
    "tiling_space": check_tiling_space,
    "tiling_space_error": check_tiling_space_error,
    "simplify_expression": check_simplify_expression,
    "tiled_computation": check_tiled_computation,
    "tiled_computation_error": check_tiled_computation_error,
    "tiled_computation_order": check_tiled_computation_order,
    "tiled_computation_substring": check_tiled_substring,
    "tiled_hlo_instruction_print": check_tiled_instruction_print,
}
