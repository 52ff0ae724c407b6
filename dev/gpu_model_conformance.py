"""Checkers of the GPU cost-model corpus (``conformance/xla_gpu_model/*.jsonl``), one per
record ``kind``; see ``README-gpu-model-conformance.md`` for what each compares and why
some records are skipped.

Every figure is computed by the project (``hlo_indexing.cost_model``) from the record's
inputs (HLO text, block-level parameters or the fusion's own ``backend_config``, tile
sizes, device) and compared with the record's ``expected`` values: counts exactly, times
within the test's own bounds. A record that holds for both tiling variants
(``SymbolicTiling``, ``ExperimentalTiling``) passes only if both do.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from hlo_indexing.cost_model.block_level import (
    BlockLevelParameters,
    dot_tile_configs,
    fusion_block_level_config,
    parse_backend_config,
    symbolic_tiling_sizes,
    tiling_space_sizes,
)
from hlo_indexing.cost_model.estimate import Estimate
from hlo_indexing.cost_model.gpu import (
    SpaceFactory,
    best_experimental,
    best_symbolic,
    estimate_experimental,
    estimate_symbolic,
    experimental_computation,
)
from hlo_indexing.cost_model.gpu_base import (
    launch_dimensions,
    operand_bytes_accessed,
    reification_cost,
    shared_operand_bytes_accessed,
)
from hlo_indexing.cost_model.gpu_model import num_warps_for
from hlo_indexing.cost_model.gpu_op_costs import mlir_flops_per_element
from hlo_indexing.cost_model.gpu_programs import experimental_program, symbolic_program
from hlo_indexing.cost_model.gpu_rates import effective_flops_per_ns, peak_matrix_ops_per_ns, tiled_utilization
from hlo_indexing.cost_model.tile_arrays import padded
from hlo_indexing.cost_model.triton_constraints import all_satisfied, symbolic_checks, verify_experimental
from hlo_indexing.devices import GpuDevice, bundled_devices
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import HloGraph, parse_hlo_graph
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, analyze_fusion

Result = tuple[str, str]
_keep_alive: list[object] = []


class _Mismatch(Exception):
    pass


def _device(record: Mapping[str, Any], key: str = "device") -> GpuDevice:
    function = record[key]
    for found in bundled_devices():
        if isinstance(found, GpuDevice) and f"({function})" in found.source:
            return found
    raise _Mismatch(f"no bundled device for {function}")


def _analysis(record: Mapping[str, Any], computation: str) -> TiledFusion:
    module = hlo_source.import_hlo(record["hlo"], f"{record['id']}.hlo")
    _keep_alive.append(module)
    allow_pad = "__triton_nested_gemm" in record["hlo"] or "__triton_gemm" in record["hlo"]
    analysis = analyze_fusion(hlo_source.computation(module, computation), allow_pad=allow_pad)
    if isinstance(analysis, AnalysisFailure):
        raise _Mismatch(f"analysis failed: {analysis.reason}")
    return analysis


def _graph(record: Mapping[str, Any]) -> HloGraph:
    return parse_hlo_graph(record["hlo"], f"{record['id']}.hlo")


def _entry_fusion_config(graph: HloGraph) -> BlockLevelParameters:
    root = graph.entry_computation.root
    text = root.attrs.get("backend_config")
    config = fusion_block_level_config(parse_backend_config(text)) if text else None
    if config is None:
        raise _Mismatch("Could not get launch config for Triton fusion.")
    return BlockLevelParameters.from_config(config)


def _params(record: Mapping[str, Any], call: Mapping[str, Any], graph: HloGraph) -> BlockLevelParameters:
    """The call's block-level parameters: the fusion's own backend_config when the test
    passes none (``EstimateRunTimeForTriton(root, nullptr)``), else the test's."""
    if call.get("api") == "EstimateRunTimeForTriton" and "nullptr" in str(call.get("arguments", "")):
        return _entry_fusion_config(graph)
    given = call["block_level_parameters"]
    return BlockLevelParameters(
        tuple(tuple(t) for t in given["output_tile_sizes"]),
        given["num_warps"], given["num_ctas"], given["num_stages"], given["is_tma_allowed"],
        given["is_warp_specialization_allowed"], given["num_tiles_per_pid"], given["waves_per_eu"],
    )


# ---------------------------------------------------------------- value checks


def _in_range(value: float, check: Mapping[str, Any]) -> bool:
    low, high = check.get("min_ns", check.get("min")), check.get("max_ns", check.get("max"))
    if low is not None and (value < low or (value == low and not check.get("min_inclusive", True))):
        return False
    return high is None or not (value > high or (value == high and not check.get("max_inclusive", True)))


def _time_ok(value_ns: float, check: Mapping[str, Any]) -> bool:
    kind = check["check"]
    if kind == "infinite":
        return math.isinf(value_ns)
    if kind == "double_eq":
        return math.isclose(value_ns, check["value"], rel_tol=4 * 2.0**-52)
    return _in_range(value_ns, check)


_TIME_FIELDS = {"exec_time": "exec_time_ns", "read_time": "read_time_ns", "write_time": "write_time_ns",
                "compute_time": "compute_time_ns"}
_COUNT_FIELDS = ("flops", "bytes_read", "bytes_written")


def _compare_estimate(label: str, got: Estimate, expected: Mapping[str, Any]) -> list[str]:
    problems = []
    if expected.get("is_infinite") is not None and got.is_infinite != expected["is_infinite"]:
        problems.append(f"{label}: infinite {got.is_infinite}, XLA {expected['is_infinite']}")
    for field, attribute in _TIME_FIELDS.items():
        if field in expected and not _time_ok(getattr(got, attribute), expected[field]):
            problems.append(f"{label}: {field} {getattr(got, attribute):.6g} ns outside {_bounds(expected[field])}")
    for field in _COUNT_FIELDS:
        if field in expected and getattr(got, field) != expected[field]:
            problems.append(f"{label}: {field} {getattr(got, field)}, XLA {expected[field]}")
    return problems


def _bounds(check: Mapping[str, Any]) -> str:
    return f"[{check.get('min_ns', check.get('min'))}, {check.get('max_ns', check.get('max'))}] ns"


_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "equal": operator.eq, "not_equal": operator.ne, "less_than": operator.lt}


def _relations(relations: list[Mapping[str, Any]], results: Mapping[str, Estimate]) -> list[str]:
    """Relations between the calls of one test: ``ratio_near`` of one time, or a
    comparison (``equal``, ``not_equal``, ``less_than``) of two calls' times."""
    problems = []
    for relation in relations:
        kind = relation["relation"]
        if kind == "ratio_near":
            attribute = _TIME_FIELDS[relation["quantity"]]
            ratio = getattr(results[relation["numerator"]], attribute) / getattr(results[relation["denominator"]], attribute)
            if abs(ratio - relation["value"]) > relation["abs_tol"]:
                problems.append(f"{relation['quantity']} ratio {ratio:.6f}, XLA {relation['value']} +- {relation['abs_tol']}")
        elif kind in _COMPARISONS and {relation["lhs_quantity"], relation["rhs_quantity"]} <= _TIME_FIELDS.keys():
            lhs = getattr(results[relation["lhs"]], _TIME_FIELDS[relation["lhs_quantity"]])
            rhs = getattr(results[relation["rhs"]], _TIME_FIELDS[relation["rhs_quantity"]])
            if not _COMPARISONS[kind](lhs, rhs):
                problems.append(f"{relation['lhs']}.{relation['lhs_quantity']} {lhs:.6g} ns, "
                                f"{relation['rhs']}.{relation['rhs_quantity']} {rhs:.6g} ns: XLA says {kind}")
        else:
            problems.append(f"relation {kind} not understood")
    return problems


def _verdict(problems: list[str], ok_detail: str) -> Result:
    return ("fail", "; ".join(problems)) if problems else ("pass", ok_detail)


# ---------------------------------------------------------------- indexing performance model


def _estimate_variant(record: Mapping[str, Any], variant: str, call: Mapping[str, Any], device: GpuDevice) -> Estimate:
    graph = _graph(record)
    params = _params(record, call, graph)
    if variant == "SymbolicTiling":
        fusion = _analysis(record, record["fusion"]["computation"])
        dots = dot_tile_configs(graph.computations[record["fusion"]["computation"]])
        sizes = symbolic_tiling_sizes(fusion, params, dots)
        return estimate_symbolic(fusion, sizes, device, params.num_warps, params.num_stages, tma=params.is_tma_allowed)
    space_of = SpaceFactory(graph)
    space = space_of()
    sizes = [int(s) for s in padded(np.asarray(tiling_space_sizes(space, params), np.int64))]
    computation = experimental_computation(graph, space, sizes)
    return estimate_experimental(computation, graph, device, params.num_warps, params.num_stages)


def check_estimate(record: Mapping[str, Any]) -> Result:
    device = _device(record)
    problems: list[str] = []
    for variant in record["variants"]:
        results = {}
        for call in record["calls"]:
            results[call["label"]] = got = _estimate_variant(record, variant, call, device)
            expected = record["expected"]["per_call"].get(call["label"], {})
            problems += [f"{variant} {p}" for p in _compare_estimate(call["label"], got, expected)]
        problems += [f"{variant} {p}" for p in _relations(record["expected"].get("relations", []), results)]
    summary = ", ".join(f"{label}: exec {e.exec_time_ns:.6g} ns" for label, e in results.items())
    return _verdict(problems, f"{'+'.join(record['variants'])}: {summary}")


def check_best_tiling(record: Mapping[str, Any]) -> Result:
    device = _device(record)
    expected = record["expected"]["per_call"][record["calls"][0]["label"]]
    problems: list[str] = []
    details = []
    for variant in record["variants"]:
        if variant == "SymbolicTiling":
            found = best_symbolic(_analysis(record, record["fusion"]["computation"]), device)
        else:
            graph = _graph(record)
            found = best_experimental(graph, SpaceFactory(graph), device)
        if not found:
            problems.append(f"{variant}: no valid tiling found")
            continue
        best = found[0]
        tiles = [list(t) for t in best.block_level_parameters.output_tile_sizes]
        details.append(f"{variant} {tiles} {best.block_level_parameters.num_warps} warps {best.estimate.exec_time_ns:.6g} ns")
        if tiles != expected["output_tile_sizes"]:
            problems.append(f"{variant}: best tiles {tiles}, XLA {expected['output_tile_sizes']}")
        if "num_warps" in expected and best.block_level_parameters.num_warps != expected["num_warps"]:
            problems.append(f"{variant}: {best.block_level_parameters.num_warps} warps, XLA {expected['num_warps']}")
        problems += [f"{variant} {p}" for p in _compare_estimate("best", best.estimate, expected)]
    return _verdict(problems, "; ".join(details))


def check_num_warps(record: Mapping[str, Any]) -> Result:
    device = _device(record)
    described = record["calls"][0]["tiled_computation"]
    graph = _graph(record)
    if described["kind"] == "symbolic":
        computation_name = described["tiling"][0]["computation"]
        fusion = _analysis(record, computation_name)
        sizes = fusion.flat_tile_sizes({t["instruction"]: t["tile_sizes"] for t in described["tiling"]})
        program = symbolic_program(fusion, tiled_computation(fusion, sizes, constraints_are_known_satisfied=True), device)
    else:
        space = SpaceFactory(graph)()
        program = experimental_program(experimental_computation(graph, space, described["tiling_space_tile_sizes"]), graph, device)
    warps = int(num_warps_for(program)[0])
    expected = record["expected"]["per_call"][record["calls"][0]["label"]]["num_warps"]
    return _verdict([] if warps == expected else [f"{warps} warps, XLA {expected}"], f"{warps} warps")


def check_flops_per_element(record: Mapping[str, Any]) -> Result:
    device = _device(record)
    module = hlo_source.import_hlo(record["hlo"], f"{record['id']}.hlo")
    _keep_alive.append(module)
    root = hlo_source.root_op(hlo_source.entry(module))
    per_element = mlir_flops_per_element(root, device)
    elements = math.prod(root.results[0].type.shape) if root.results else 1
    expected = record["expected"]
    problems = []
    if per_element != expected["flops_per_element"]:
        problems.append(f"{per_element} flops per element, XLA {expected['flops_per_element']}")
    if "total_flops" in expected and per_element * elements != expected["total_flops"]:
        problems.append(f"{per_element * elements} flops, XLA {expected['total_flops']}")
    return _verdict(problems, f"{per_element} flops per element")


# ---------------------------------------------------------------- emitter constraints


def check_parameters_satisfy(record: Mapping[str, Any]) -> Result:
    device = _device(record, "device") if record.get("device") else next(
        d for d in bundled_devices() if d.name == "a6000-test")
    tiling = record["tiling"]
    fusion = _analysis(record, tiling[0]["computation"])
    sizes = fusion.flat_tile_sizes({t["instruction"]: t["tile_sizes"] for t in tiling})
    flat = [np.asarray([s], np.int64) for s in sizes]
    value = fusion.satisfies_constraints(sizes)
    kind = record["emitter_constraints"]
    if value and kind != "none":
        value = bool(all_satisfied(symbolic_checks(fusion, flat, device, tiled_only=kind == "tiled"), 1)[0])
    expected = record["expected"]["value"]
    return _verdict([] if value == expected else [f"satisfied: {value}, XLA {expected}"], f"{kind}: {value}")


def check_verify_triton(record: Mapping[str, Any]) -> Result:
    device = next(d for d in bundled_devices() if d.name == "a6000-test")
    graph = _graph(record)
    debug = record.get("debug_options") or {}
    space = SpaceFactory(graph, triton_multi_output=bool(debug.get("xla_gpu_unsupported_enable_triton_multi_output_fusion")))()
    computation = experimental_computation(graph, space, record["tiling_space_tile_sizes"])
    found = verify_experimental(computation, device)
    expected = record["expected"]
    if expected["decision"] == "allow":
        return _verdict([f"forbidden: {found[0].message}"] if found else [], "allowed")
    if not found:
        return "fail", "allowed, XLA forbids"
    message = found[0].message
    ok = expected["message_contains"] in message
    return _verdict([] if ok else [f"message {message!r} lacks {expected['message_contains']!r}"], message)


# ---------------------------------------------------------------- tiling from block parameters


def check_tiling_from_annotated(record: Mapping[str, Any]) -> Result:
    graph = _graph(record)
    name = record["fusion"]["computation"]
    fusion = _analysis(record, name)
    given = record["block_level_parameters"]
    params = BlockLevelParameters(tuple(tuple(t) for t in given["output_tile_sizes"]), given["num_warps"])
    override = (record.get("dot_tiling_config_override") or {}).get("sizes")
    sizes = symbolic_tiling_sizes(fusion, params, dot_tile_configs(graph.computations[name]), override)
    expected = [s for entry in record["expected"]["tile_sizes"] for s in entry["tile_sizes"]]
    return _verdict([] if sizes == expected else [f"tile sizes {sizes}, XLA {expected}"], f"{sizes}")


def check_tiling_space_sizes(record: Mapping[str, Any]) -> Result:
    graph = _graph(record)
    root = graph.entry_computation.root
    config = fusion_block_level_config(parse_backend_config(root.attrs["backend_config"]))
    if config is None:
        raise _Mismatch("the fusion has no block_level_fusion_config")
    params = BlockLevelParameters.from_config(config)
    same_shape = bool(record.get("enable_same_shape_multi_output_fusion"))
    module_debug = record.get("module_debug_options") or {}
    expected = record["expected"]
    try:
        space = SpaceFactory(
            graph,
            triton_multi_output=bool(module_debug.get("xla_gpu_unsupported_enable_triton_multi_output_fusion")),
            same_shape_multi_output=same_shape and bool(
                module_debug.get("xla_gpu_experimental_enable_same_shape_multi_output_fusion")),
        )()
        sizes = tiling_space_sizes(space, params, same_shape)
    except TilingError as error:
        ok = expected["status"] == error.status and expected.get("message_contains", "") in error.reason
        return _verdict([] if ok else [f"{error}, XLA {expected}"], str(error))
    if expected["status"] != "OK":
        return "fail", f"sizes {sizes}, XLA {expected['status']}: {expected.get('message_contains')}"
    return _verdict([] if sizes == expected["tile_sizes"] else [f"sizes {sizes}, XLA {expected['tile_sizes']}"], f"{sizes}")


def check_params_from_config(record: Mapping[str, Any]) -> Result:
    params = BlockLevelParameters.from_config(record["block_level_fusion_config"])
    expected = record["expected"]
    got = {
        "output_tile_sizes.size": len(params.output_tile_sizes),
        "output_tile_sizes[0]": list(params.output_tile_sizes[0]),
        "num_warps": params.num_warps, "num_ctas": params.num_ctas, "num_stages": params.num_stages,
        "is_tma_allowed": params.is_tma_allowed, "is_warp_specialization_allowed": params.is_warp_specialization_allowed,
        "waves_per_eu": params.waves_per_eu,
    }
    problems = [f"{k}: {got[k]}, XLA {v}" for k, v in expected.items() if got.get(k) != v]
    return _verdict(problems, "fields equal")


def check_params_to_config(record: Mapping[str, Any]) -> Result:
    given = record["block_level_parameters"]
    params = BlockLevelParameters(
        tuple(tuple(t) for t in given["output_tile_sizes"]), given["num_warps"], given["num_ctas"], given["num_stages"],
        given["is_tma_allowed"], given["is_warp_specialization_allowed"], given["num_tiles_per_pid"], given["waves_per_eu"])
    config = params.to_config()
    got = {
        "output_tiles_size": len(config["output_tiles"]),
        "output_tiles(0).sizes": config["output_tiles"][0]["sizes"],
        **{k: config[k] for k in ("num_warps", "num_ctas", "num_stages", "is_tma_allowed",
                                  "is_warp_specialization_allowed", "waves_per_eu")},
    }
    problems = [f"{k}: {got.get(k)}, XLA {v}" for k, v in record["expected"].items() if got.get(k) != v]
    if "num_tiles_per_pid" in config:
        problems.append("num_tiles_per_pid written although it is 1")
    return _verdict(problems, "fields equal")


# ---------------------------------------------------------------- coalescing and device arithmetic


def check_tiled_coalescing(record: Mapping[str, Any]) -> Result:
    device = _device(record)
    problems = []
    rates: list[float] = []
    for variant in record["variants"]:
        if variant == "SymbolicTiling":
            fusion = _analysis(record, record["root"]["computation"])
            computation = tiled_computation(fusion, list(record["tile_sizes"]), constraints_are_known_satisfied=True)
            operands = computation.roots[0].operands
            rates = [float(tiled_utilization(device, tuple(o.node.value.type.shape), tuple(reversed(range(len(o.tile_sizes)))),
                                             1, np.asarray([o.tile_sizes]), np.asarray([o.tile_strides]))[0]) for o in operands]
        else:
            graph = _graph(record)
            program = experimental_program(experimental_computation(graph, SpaceFactory(graph)(), record["tile_sizes"]),
                                           graph, device)
            rates = [float(tiled_utilization(device, v.shape, v.minor_to_major, v.element_bytes, v.sizes, v.strides)[0])
                     for v in program.visits if v.operand is not None]
        if rates != record["expected"]["per_operand"]:
            problems.append(f"{variant}: rates {rates}, XLA {record['expected']['per_operand']}")
    return _verdict(problems, f"rates {rates}")


def check_flops_per_ns(record: Mapping[str, Any]) -> Result:
    call = record["calls"][0]
    device = _device(call)
    if record["kind"] == "effective_flops_per_ns":
        value = int(effective_flops_per_ns(device, np.asarray([call["num_blocks"]["value"]]),
                                           np.asarray([call["num_threads_per_block"]["value"]]))[0])
    else:
        value = peak_matrix_ops_per_ns(device, call["dtype"].lower())
    check = record["expected"]["per_call"][call["label"]]["value"]
    return _verdict([] if _in_range(value, check) else [f"{value} outside {_bounds(check)}"], f"{value} flops/ns")


def check_launch_dimensions(record: Mapping[str, Any]) -> Result:
    graph = _graph(record)
    blocks, threads = launch_dimensions(graph, _device(record))
    expected = record["expected"]["per_call"][record["calls"][0]["label"]]
    got = {"num_blocks": blocks, "num_threads_per_block": threads}
    problems = [f"{k}: {got[k]}, XLA {v}" for k, v in expected.items() if got[k] != v]
    return _verdict(problems, f"{blocks} blocks x {threads} threads")


def check_reification(record: Mapping[str, Any]) -> Result:
    call = record["calls"][0]
    device = _device(call)
    data = call["data"] if isinstance(call["data"], dict) else {}
    estimate = Estimate(data.get("exec_time_ns", 0.0), data.get("read_time_ns", 0.0), data.get("write_time_ns", 0.0),
                        data.get("compute_time_ns", 0.0), data.get("bytes_read", 0), data.get("bytes_written", 0),
                        data.get("flops", 0), 0)
    cost = reification_cost(estimate, device, call.get("name") or "")
    problems = []
    for field, want in record["expected"]["per_call"][call["label"]].items():
        got = cost[field]
        if isinstance(want, dict):
            if not _time_ok(got, want):
                problems.append(f"{field}: {got!r}, XLA {want['value']!r}")
        elif got != want:
            problems.append(f"{field}: {got!r}, XLA {want!r}")
    return _verdict(problems, f"{cost}")


def check_bytes_accessed(record: Mapping[str, Any]) -> Result:
    graph = _graph(record)
    device = _device(record)
    call = record["calls"][0]
    if record["kind"] == "operand_bytes_accessed":
        value = operand_bytes_accessed(graph, device, call["instruction"]["instruction"], call["operand"]["instruction"])
    else:
        value = shared_operand_bytes_accessed(graph, device, call["producer"]["instruction"],
                                              call["consumer"]["instruction"], call["operand"]["instruction"])
    expected = record["expected"]["per_call"][call["label"]]["bytes"]
    return _verdict([] if value == expected else [f"{value} bytes, XLA {expected}"], f"{value} bytes")


def skip_legacy(record: Mapping[str, Any]) -> Result:
    return "skip", ("the non-indexing GpuPerformanceModel: needs the fusion emitters' launch dimensions and "
                    "GpuHloCostAnalysis's utilization-weighted producer/consumer bytes (README-gpu-model-conformance.md)")


def _guarded(checker: Callable[[Mapping[str, Any]], Result]) -> Callable[[dict], Result]:
    def run(record: dict) -> Result:
        try:
            return checker(record)
        except _Mismatch as error:
            return "fail", str(error)
        except TilingError as error:
            return "fail", f"tiling failed: {error}"
    return run


CHECKERS: dict[str, Callable[[dict], Result]] = {
    kind: _guarded(checker)
    for kind, checker in {
        "estimate_run_time_for_tiled_fusion": check_estimate,
        "estimate_run_time_for_triton": check_estimate,
        "find_best_tiling": check_best_tiling,
        "estimate_num_warps": check_num_warps,
        "flops_per_element": check_flops_per_element,
        "parameters_satisfy_constraints": check_parameters_satisfy,
        "verify_triton_constraints": check_verify_triton,
        "tiling_from_annotated_fusion": check_tiling_from_annotated,
        "tiling_space_concrete_sizes": check_tiling_space_sizes,
        "block_level_parameters_from_config": check_params_from_config,
        "block_level_parameters_to_config": check_params_to_config,
        "tiled_bandwidth_utilization": check_tiled_coalescing,
        "effective_flops_per_ns": check_flops_per_ns,
        "peak_matrix_ops_per_ns": check_flops_per_ns,
        "fusion_launch_dimensions": check_launch_dimensions,
        "make_reification_cost": check_reification,
        "operand_bytes_accessed": check_bytes_accessed,
        "shared_operand_bytes_accessed": check_bytes_accessed,
        "run_times": skip_legacy,
        "reification_cost": skip_legacy,
        "fusion_run_time": skip_legacy,
        "multi_output_fusion_run_times": skip_legacy,
    }.items()
}
