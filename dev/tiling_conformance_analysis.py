"""Checker of the ``tiling_analysis`` records (XLA's ``SymbolicTileAnalysis`` tests),
one function per ``subkind``; see ``conformance/xla_tiling/README-symbolic.md``.

Tiles are compared numerically: tile sizes exactly, strides where the tile has more
than one element along the dimension (a stride is meaningless for one element), and
tile offsets at each ``offset_evaluations`` point (the point must be in our map's
domain and give the same offsets)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.constraints import ConstraintExpression
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import (
    AnalysisFailure,
    TiledFusion,
    TiledNode,
    TilingError,
    analyze_fusion,
    analyze_producer_consumer,
    flat_tilings_for_input_space,
)

import tiling_conformance_text
from map_compare import parse_map, relation_difference

Result = tuple[str, str]
_keep_alive: list[object] = []
_GEMM_FUSION = re.compile(r'"kind"\s*:\s*"__triton_(nested_)?gemm')
_EMITTER = re.compile(r"tile size along dimension (\d+) must equal the root's dimension (\d+) divided by (\d+)")


class _Mismatch(Exception):
    pass


def _analysis(record: dict) -> TiledFusion | AnalysisFailure:
    fusion = record["fusion"]
    module = hlo_source.import_hlo(record["hlo"], f"{record['id']}.hlo")
    _keep_alive.append(module)
    allow_pad = bool(_GEMM_FUSION.search(record["hlo"]))
    if "computation" in fusion:
        return analyze_fusion(hlo_source.computation(module, fusion["computation"]), allow_pad=allow_pad)
    pair = fusion["producer_consumer"]
    ops = {hlo_source.instruction_name(op): op.operation for op in hlo_source.entry(module).regions[0].blocks[0].operations}
    producer, consumer = ops.get(pair["producer"]), ops.get(pair["consumer"])
    if producer is None or consumer is None:
        raise _Mismatch(f"fusions {pair['producer']!r}/{pair['consumer']!r} not found in the ENTRY computation")
    return analyze_producer_consumer(
        producer, consumer, with_extra_outputs=bool(pair.get("with_extra_outputs")), allow_pad=allow_pad
    )


def _succeeded(record: dict) -> TiledFusion:
    analysis = _analysis(record)
    if isinstance(analysis, AnalysisFailure):
        raise _Mismatch(f"analysis failed: {analysis.reason}")
    extra = record.get("emitter_specific_constraints")
    if extra:
        match = _EMITTER.search(extra)
        if not match:
            raise _Mismatch(f"emitter-specific constraint not understood: {extra}")
        dim, root_dim, divisor = (int(g) for g in match.groups())
        target = analysis.parameters[root_dim].size // divisor
        ctx = default_context()
        analysis.constraints = analysis.constraints & ConstraintExpression.of(ax.dim(dim, ctx), Interval(target, target))
    return analysis


def _tiling(record: dict) -> dict[str, list[int]]:
    return {entry["instruction"]: entry["tile_sizes"] for entry in record.get("tiling") or []}


def check_tiled_computation(record: dict) -> Result:
    analysis = _succeeded(record)
    try:
        computation = tiled_computation(
            analysis,
            analysis.flat_tile_sizes(_tiling(record)),
            schedule=record.get("schedule") or "major_to_minor",
            constraints_are_known_satisfied=bool(record.get("constraints_are_known_satisfied")),
        )
    except TilingError as exc:
        return "fail", f"tiling failed: {exc}"
    expected = record["expected"]
    if "num_roots" in expected and len(computation.roots) != expected["num_roots"]:
        return "fail", f"{len(computation.roots)} roots, XLA {expected['num_roots']}"
    for first, second in expected.get("identical", []):
        if _resolve(computation, first) is not _resolve(computation, second):
            return "fail", f"{first} and {second} are not the same tiled instruction"
    checked = 0
    for entry in expected.get("instructions", []):
        checked += _check_instruction(_resolve(computation, entry["path"]), entry)
    return "pass", f"{len(expected.get('instructions', []))} instructions, {checked} offset evaluations agree"


def _resolve(computation: TiledComputation, path: str) -> TiledInstruction:
    head, *steps = path.split(".")
    match = re.fullmatch(r"roots\[(\d+)\]|parameter\((\d+)\)", head)
    if not match:
        raise _Mismatch(f"path {path!r} not understood")
    if match.group(1) is not None:
        current = computation.roots[int(match.group(1))]
    else:
        number = int(match.group(2))
        found = [i for i in computation.instructions if i.node.parameter_number == number]
        if not found:
            raise _Mismatch(f"no tiled parameter({number})")
        current = found[0]
    for step in steps:
        match = re.fullmatch(r"(operand|runtime_variable)\((\d+)\)", step)
        if not match:
            raise _Mismatch(f"path step {step!r} not understood")
        index = int(match.group(2))
        targets = current.operands if match.group(1) == "operand" else current.runtime_variables
        if index >= len(targets):
            raise _Mismatch(f"{path}: {current.name} has {len(targets)} {match.group(1)}s")
        current = targets[index]
    return current


def _check_instruction(inst: TiledInstruction, entry: dict) -> int:
    where = f"{entry['path']} ({inst.name})"
    if "opcode" in entry and inst.node.opcode != entry["opcode"]:
        raise _Mismatch(f"{where}: opcode {inst.node.opcode}, XLA {entry['opcode']}")
    if "tile_sizes" in entry and list(inst.tile_sizes) != entry["tile_sizes"]:
        raise _Mismatch(f"{where}: tile sizes {list(inst.tile_sizes)}, XLA {entry['tile_sizes']}")
    if "tile_strides" in entry:
        if len(inst.tile_strides) != len(entry["tile_strides"]) or any(
            a != b and n > 1 for a, b, n in zip(inst.tile_strides, entry["tile_strides"], inst.tile_sizes)
        ):
            raise _Mismatch(f"{where}: tile strides {list(inst.tile_strides)}, XLA {entry['tile_strides']}")
    if "num_runtime_variables" in entry and len(inst.runtime_variables) != entry["num_runtime_variables"]:
        raise _Mismatch(f"{where}: {len(inst.runtime_variables)} runtime variables, XLA {entry['num_runtime_variables']}")
    if "num_operands" in entry and len(inst.operands) != entry["num_operands"]:
        raise _Mismatch(f"{where}: {len(inst.operands)} operands, XLA {entry['num_operands']}")
    offsets = inst.tile_offsets_indexing
    count = 0
    for point in entry.get("offset_evaluations", []):
        runtime = point.get("rt_var_values", [])
        if len(runtime) != len(offsets.runtime_vars):
            raise _Mismatch(f"{where}: {len(offsets.runtime_vars)} runtime variables, XLA {len(runtime)}: {offsets}")
        if not offsets.contains_point(point["dims"], runtime):
            raise _Mismatch(f"{where}: pid {point['dims']} (runtime {runtime}) is outside our offsets map {offsets}")
        got = list(offsets.evaluate(point["dims"], runtime))
        if got != point["offsets"]:
            raise _Mismatch(f"{where}: offsets at pid {point['dims']} {runtime}: {got}, XLA {point['offsets']} ({offsets})")
        count += 1
    return count


def check_tiled_computation_fails(record: dict) -> Result:
    analysis = _succeeded(record)
    expected = record["expected"]
    try:
        tiled_computation(
            analysis,
            analysis.flat_tile_sizes(_tiling(record)),
            schedule=record.get("schedule") or "major_to_minor",
            constraints_are_known_satisfied=bool(record.get("constraints_are_known_satisfied")),
        )
    except TilingError as exc:
        if exc.status != expected["status"]:
            return "fail", f"status {exc.status}, XLA {expected['status']} ({exc})"
        wanted = expected.get("message_contains")
        if wanted and wanted not in str(exc):
            return "fail", f"message {str(exc)!r} lacks {wanted!r}"
        return "pass", str(exc)
    return "fail", f"tiling succeeded, XLA fails with {expected['status']}"


def check_constraints(record: dict) -> Result:
    analysis = _succeeded(record)
    sizes = [p.size for p in analysis.parameters]
    if sizes != record.get("tiling_parameter_sizes", sizes):
        return "fail", f"tiling parameters {sizes}, XLA {record['tiling_parameter_sizes']}"
    for entry in record.get("evaluations", []):
        holds = analysis.satisfies_constraints(entry["tile_sizes"])
        if holds != entry["constraints_hold"]:
            return "fail", f"at {entry['tile_sizes']}: holds = {holds}, XLA {entry['constraints_hold']} (ours: {analysis.constraints})"
    return "pass", f"{len(record.get('evaluations', []))} evaluations agree"


def check_parameters_satisfy_constraints(record: dict) -> Result:
    analysis = _succeeded(record)
    expected = record["expected"]
    try:
        value = analysis.satisfies_constraints(analysis.flat_tile_sizes(_tiling(record)))
    except TilingError as exc:
        if exc.status == expected["status"]:
            return "pass", str(exc)
        return "fail", f"status {exc.status}, XLA {expected['status']}"
    if expected["status"] != "OK":
        return "fail", f"status OK, XLA {expected['status']}"
    if expected["value"] is not None and value != expected["value"]:
        return "fail", f"satisfied = {value}, XLA {expected['value']}"
    return "pass", f"satisfied = {value}"


def check_valid_tilings(record: dict) -> Result:
    expected = record["expected"]
    if record.get("api") == "detail::GetFlatTilingsForInputSpace":
        tilings = [list(t) for t in flat_tilings_for_input_space(record["input_space"])]
    else:
        tilings = [list(t) for t in _succeeded(record).valid_tilings()]
    if expected.get("tilings") is not None:
        if tilings != expected["tilings"]:
            return "fail", f"tilings {tilings}, XLA {expected['tilings']}"
        return "pass", f"{len(tilings)} tilings"
    if expected.get("non_empty") and not tilings:
        return "fail", "no valid tiling, XLA has some"
    if expected.get("last") is not None and tilings and tilings[-1] != expected["last"]:
        return "fail", f"last tiling {tilings[-1]}, XLA {expected['last']}"
    return "pass", f"{len(tilings)} tilings (XLA checks only that there are some)"


def check_analysis_fails(record: dict) -> Result:
    analysis = _analysis(record)
    if not isinstance(analysis, AnalysisFailure):
        return "fail", "analysis succeeded, XLA fails"
    wanted = record["expected"].get("reason_contains")
    if wanted and wanted not in analysis.reason:
        return "fail", f"reason {analysis.reason!r} lacks {wanted!r}"
    return "pass", analysis.reason


def check_analysis_succeeds(record: dict) -> Result:
    _succeeded(record)
    return "pass", "analysis succeeds"


def check_tiling_specification(record: dict) -> Result:
    analysis = _succeeded(record)
    expected = record["expected"]
    n = len(analysis.parameters)
    if n != expected["num_parameters"]:
        return "fail", f"{n} tiling parameters, XLA {expected['num_parameters']}"
    for node in analysis.nodes:
        dims = len(node.tile.tile_size_bounds)
        if dims != expected["every_size_map_num_dims"]:
            return "fail", f"{node.name}: size map over {dims} dims, XLA {expected['every_size_map_num_dims']}"
    return "pass", f"{n} parameters; every size map has {n} dims and no symbols"


def check_analysis_roots(record: dict) -> Result:
    analysis = _succeeded(record)
    got = [candidates[0].name for candidates in analysis.root_candidates]
    wanted = [root["hlo"] for root in record["expected"]["roots"]]
    if got != wanted:
        return "fail", f"roots {got}, XLA {wanted}"
    return "pass", f"roots {got}"


def check_symbolic_structure(record: dict) -> Result:
    analysis = _succeeded(record)
    expected = record["expected"]
    top = analysis.top_level()
    if len(top) != expected["top_level_instruction_count"]:
        return "fail", f"{len(top)} top-level instructions ({[n.name for n in top]}), XLA {expected['top_level_instruction_count']}"
    _compare_structure(analysis, analysis.root_candidates[0][0], expected["instruction"], "root")
    return "pass", "structure agrees"


def _compare_structure(analysis: TiledFusion, node: TiledNode, expected: dict, where: str) -> None:
    if node.opcode != expected["opcode"]:
        raise _Mismatch(f"{where}: opcode {node.opcode}, XLA {expected['opcode']}")
    if "num_operands" in expected and len(node.operands) != expected["num_operands"]:
        raise _Mismatch(f"{where}: {len(node.operands)} operands, XLA {expected['num_operands']}")
    regions = analysis.regions(node)
    if "first_region_size" in expected and (not regions or len(regions[0]) != expected["first_region_size"]):
        raise _Mismatch(f"{where}: region sizes {[len(r) for r in regions]}, XLA first {expected['first_region_size']}")
    if "regions" in expected:
        got = [[n.opcode for n in region] for region in regions]
        wanted = [[entry["opcode"] for entry in region] for region in expected["regions"]]
        if got != wanted:
            raise _Mismatch(f"{where}: regions {got}, XLA {wanted}")
    for k, operand in enumerate(expected.get("operands", [])):
        if k >= len(node.operands):
            raise _Mismatch(f"{where}: no operand {k}")
        _compare_structure(analysis, node.operands[k], operand, f"{where}.operand({k})")


def check_symbolic_indexing(record: dict) -> Result:
    """Indexing maps of symbolic tiled instructions (over the tiling parameters), compared
    as relations; entries name the instruction by ``path`` (``roots[k]``, ``.operand(j)``)
    and give every map under a key ending in ``indexing_map``."""
    analysis = _succeeded(record)
    entries = record["expected"].get("instructions") or []
    if not entries:
        raise _Mismatch("no instruction entries in the record's 'expected'")
    compared = 0
    for entry in entries:
        node = _resolve_symbolic(analysis, entry["path"])
        for key, text in entry.items():
            if not (key.endswith("indexing_map") and isinstance(text, str)):
                continue
            difference = relation_difference(node.indexing_map, parse_map(text), random.Random(0))
            if difference:
                raise _Mismatch(f"{entry['path']} ({node.name}): {difference}; ours {node.indexing_map}")
            compared += 1
    if not compared:
        raise _Mismatch("no indexing map found in the record's entries")
    return "pass", f"{compared} indexing maps agree"


def _resolve_symbolic(analysis: TiledFusion, path: str) -> TiledNode:
    head, *steps = path.split(".")
    match = re.fullmatch(r"roots\[(\d+)\]", head)
    if not match:
        raise _Mismatch(f"path {path!r} not understood")
    node = analysis.root_candidates[int(match.group(1))][0]
    for step in steps:
        operand = re.fullmatch(r"operand\((\d+)\)", step)
        if not operand or int(operand.group(1)) >= len(node.operands):
            raise _Mismatch(f"{path}: step {step!r} does not resolve from {node.name}")
        node = node.operands[int(operand.group(1))]
    return node


def check_to_string(record: dict) -> Result:
    """The analysis in XLA's ``SymbolicTileAnalysis::ToString()`` text, exactly
    (:mod:`.tiling_conformance_text`)."""
    return tiling_conformance_text.check_to_string(record, _analysis(record))


SUBKINDS: dict[str, Callable[[dict], Result]] = {
    "tiled_computation": check_tiled_computation,
    "tiled_computation_fails": check_tiled_computation_fails,
    "constraints": check_constraints,
    "parameters_satisfy_constraints": check_parameters_satisfy_constraints,
    "valid_tilings": check_valid_tilings,
    "analysis_fails": check_analysis_fails,
    "analysis_succeeds": check_analysis_succeeds,
    "tiling_specification": check_tiling_specification,
    "analysis_roots": check_analysis_roots,
    "symbolic_structure": check_symbolic_structure,
    "symbolic_indexing": check_symbolic_indexing,
    "to_string": check_to_string,
}


def check_tiling_analysis(record: dict) -> Result:
    """Dispatch on ``subkind``; an unknown subkind is a failure."""
    checker = SUBKINDS.get(record.get("subkind", ""))
    if checker is None:
        return "fail", f"subkind {record.get('subkind')!r} is not implemented"
    try:
        return checker(record)
    except _Mismatch as exc:
        return "fail", str(exc)
    except HloIndexingError as exc:
        return "fail", f"{type(exc).__name__}: {exc}"
