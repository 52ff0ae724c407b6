"""Run XLA's indexing-analysis conformance corpus through hlo-indexing.

Usage::

    python3 dev/conformance.py FILE.jsonl [FILE.jsonl ...] [--only SUBSTRING]

Each record of ``cases*.jsonl`` (format: ``conformance/xla_indexing/README.md``) is run
and compared *semantically* (:mod:`map_compare`): two maps agree when their
relations ``{(d, f(d, s))}`` are equal by enumeration (symbols projected out); a set of
maps per operand is compared as a set of relations, order-insensitive. ``simplify`` cases also require our simplified
map to be no larger (expression node count of results and constraints) than XLA's
expected text. Per-op and fusion cases import the HLO with XLA's parser and translator
(:mod:`hlo_indexing.dialect_glue.hlo_import`) and analyse the ROOT instruction's op; a
``get-tuple-element`` ROOT the translator folds away is checked on the fused map to the
element it reads (:func:`run_tuple_element`), and the records of XLA's ``print_indexing``
tool on the fused computation alone, as the tool reads them (:func:`run_print_indexing`).

Prints one row per case (id, kind, op, PASS/FAIL/SKIP/DIFF, reason) and a final line
``conformance: P passed, F failed, S skipped`` (``, D documented differences`` when
some); exits 1 when a case fails. A skip always names its reason; an API that does not
exist yet is a failure ("not implemented: name"). DIFF is a per-op case whose mismatch
is listed in :data:`KNOWN_DIFFERENCES` with its reason and whose documented relation to
XLA's maps (e.g. ours strictly inside XLA's) was checked on the case; it is not a failure.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.dialect_glue.hlo_import import import_hlo_text, parse_xla_hlo_module
from hlo_indexing.dialect_glue.hlo_text import scan_hlo_text
from hlo_indexing.dialect_glue.locations import location_name
from hlo_indexing.errors import HloIndexingError, InvalidInputError, UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import (
    compose,
    convert_range_variables_to_dims,
    convert_symbols_to_dims,
    remove_unused_symbols,
    remove_unused_variables,
    rescale_symbols,
)
from hlo_indexing.maps.exact import isl_available
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.minmax import ClampedMap, parse_clamped_map

from map_compare import (
    METHODS,
    PER_POINT_LIMIT,
    SAMPLED_POINTS,
    CaseFailure,
    compare_map_sets,
    narrowed,
    node_total,
    parse_map,
    relation_difference,
)

PASS, FAIL, SKIP, DIFF = "PASS", "FAIL", "SKIP", "DIFF"



@dataclass(frozen=True)
class Outcome:
    """The verdict on one record."""

    case_id: str
    kind: str
    op: str
    status: str
    reason: str = ""


class TranslatorLimitation(Exception):
    """XLA's HLO -> StableHLO translator cannot express the case, and XLA does not run
    it on StableHLO either (``also_checked_on_stablehlo`` is false for it)."""


class RootFolded(Exception):
    """XLA's HLO -> StableHLO translator left no op for the ENTRY's ROOT instruction (it
    folds a ``get-tuple-element`` of a ``tuple`` into the element). A failure when XLA
    checks the case on StableHLO too (``on_stablehlo``), else a translator limitation."""

    def __init__(self, message: str, on_stablehlo: bool):
        super().__init__(message)
        self.on_stablehlo = on_stablehlo


class InvalidRecordInput(Exception):
    """The record's HLO is invalid (e.g. a fusion passing an operand of another type
    than its parameter's), which XLA's test tool does not check and hlo-indexing
    rejects as bad input (:class:`~hlo_indexing.errors.InvalidInputError`)."""


class DocumentedDifference(Exception):
    """Our maps differ from XLA's in a way :data:`KNOWN_DIFFERENCES` documents, and
    the documented relation between the two (containment, equality within the
    operand's shape) was checked on this case."""


class NotImplementedApi(Exception):
    """An hlo-indexing entry point the case needs does not exist (yet)."""


# --------------------------------------------------------------------------- hlo_indexing API


def _api(name: str) -> Callable[..., Any]:
    """``hlo_indexing.<name>``, or :class:`NotImplementedApi`."""
    module = importlib.import_module("hlo_indexing")
    try:
        return getattr(module, name)
    except AttributeError:
        raise NotImplementedApi(name) from None


# --------------------------------------------------------------------------- map operations

#: XLA's map operations without arguments -> ours (a method of the map or a function of
#: hlo_indexing.maps.algebra).
_MAP_OPS: dict[str, Callable[[IndexingMap], IndexingMap]] = {
    "Simplify": lambda m: m.simplify(),  # a plain map's or a ClampedMap's (min/max)
    "RemoveUnusedSymbols": remove_unused_symbols,
    "RescaleSymbols": rescale_symbols,
    "ConvertSymbolsToDimensions": convert_symbols_to_dims,
}


def apply_ops(m: IndexingMap, ops: Sequence[dict]) -> IndexingMap:
    """Apply XLA's map operations of a record in order (booleans are not compared, except
    by ``IsKnownEmpty``)."""
    for op in ops:
        name = op["op"]
        if name == "IsKnownEmpty":
            if m.is_known_empty() != op.get("returns"):
                raise CaseFailure(f"is_known_empty() is {m.is_known_empty()}, expected {op.get('returns')}")
        elif name == "RemoveUnusedVars":
            m = remove_unused_variables(m)
        elif name == "ConvertRangeVariablesToDimensions":
            m = convert_range_variables_to_dims(m, *op["args"])
        elif name in _MAP_OPS:
            m = _MAP_OPS[name](m)
        else:
            raise NotImplementedApi(f"IndexingMap operation {name}")
    return m


# --------------------------------------------------------------------------- case kinds


def _check_map_result(record: dict, ours: IndexingMap, before: IndexingMap, rng: random.Random) -> None:
    expected = record.get("expected")
    if expected is None:
        # Only booleans are checked by XLA: the operations must keep the relation and
        # simplification must be idempotent.
        mismatch = relation_difference(ours, before, rng)
        if mismatch:
            raise CaseFailure(f"the operations changed the relation: {mismatch}")
        if any(op["op"] == "Simplify" for op in record.get("ops", [])) and ours.simplify() != ours:
            raise CaseFailure("simplify() is not idempotent")
        return
    target = parse_map(expected[0])
    mismatch = relation_difference(ours, target, rng)
    if mismatch:
        raise CaseFailure(f"{mismatch}; ours: {' '.join(str(ours).split())}")


def run_simplify(record: dict, rng: random.Random) -> None:
    before = parse_map(record["input"])
    ours = apply_ops(before, record.get("ops") or [{"op": "Simplify"}])
    _check_map_result(record, ours, before, rng)
    if record.get("expected") is not None:
        ours_nodes, xla_nodes = node_total(ours), node_total(parse_map(record["expected"][0]))
        if ours_nodes > xla_nodes:
            raise CaseFailure(
                f"larger than XLA's: {ours_nodes} > {xla_nodes} nodes; ours: {' '.join(str(ours).split())}"
            )


def run_compose(record: dict, rng: random.Random) -> None:
    first, second = (parse_map(t) for t in record["input"])
    composed = compose(first, second)
    ours = apply_ops(composed, record.get("ops") or [])
    _check_map_result(record, ours, composed, rng)


def run_parse_print(record: dict, rng: random.Random) -> None:
    parsed = parse_map(record["input"])
    reparsed = parse_map(str(parsed))
    mismatch = relation_difference(reparsed, parsed, rng)
    if mismatch:
        raise CaseFailure(f"print/parse round trip changes the map: {mismatch}")
    _check_map_result(record, reparsed, parsed, rng)


def run_map_other(record: dict, rng: random.Random) -> None:
    before = parse_map(record["input"])
    ours = apply_ops(before, record.get("ops") or [])
    _check_map_result(record, ours, before, rng)


def run_queries(record: dict, rng: random.Random) -> None:
    for query in record["expected"]:
        m = parse_map(query["map"])
        args, want = query["args"], query["result"]
        kind = query["query"]
        if kind == "Evaluate":
            got: Any = list(m.evaluate(args["dims"], args["symbols"]))
        elif kind == "ConstraintsSatisfied":
            got = all(
                interval.lower <= ax.evaluate(expr, args["dims"], args["symbols"]) <= interval.upper
                for expr, interval in m.constraints.items()
            )
        elif kind in ("IsAlwaysPositiveOrZero", "IsAlwaysNegativeOrZero", "ComputeExpressionRange"):
            bounds = _expression_bounds(m, args["expr"])
            got = {
                "IsAlwaysPositiveOrZero": bounds.lower >= 0,
                "IsAlwaysNegativeOrZero": bounds.upper <= 0,
                "ComputeExpressionRange": [bounds.lower, bounds.upper],
            }[kind]
        elif kind == "ComputeResultRanges":
            got = [[bounds.lower, bounds.upper] for bounds in m.result_bounds()]
        else:
            raise NotImplementedApi(f"query {kind}")
        if got != want:
            raise CaseFailure(f"{kind}({args}) = {got}, expected {want}")


def _expression_bounds(m: IndexingMap, text: str) -> Interval:
    """The range over the map's domain of an expression over its variables (with
    min/max: each over its operands' ranges, as XLA's range evaluator)."""
    printed = str(m)
    head, rest = printed.split(" -> (", 1)
    domain = rest.split("), domain:", 1)[1]
    expression = parse_clamped_map(f"{head} -> ({text}), domain:{domain}", m.context)
    if isinstance(expression, ClampedMap):
        return expression.result_bounds()[0]
    return m.expr_bounds(expression.results[0])


def _expected_texts(record: dict) -> list[list[str]]:
    expected = record["expected"]
    substitutions = record.get("format_args") or {}
    value = substitutions.get("hlo") if isinstance(substitutions, dict) else None
    if value is None:
        return expected
    values = value if isinstance(value, list) else [value]
    out = []
    for texts in expected:
        replaced = []
        for text in texts:
            for v in values:
                text = text.replace("%s", str(v), 1)
            replaced.append(text)
        out.append(replaced)
    return out


def _on_stablehlo(record: dict) -> bool:
    """Whether XLA checks the record on StableHLO too."""
    return record.get("also_checked_on_stablehlo", True) or record["kind"] == "input_to_output"


def _imported(record: dict) -> Any:
    """The record's HLO imported (keep the module alive while its ops are used)."""
    try:
        return import_hlo_text(record["hlo"], f"{record['id']}.hlo", default_context())
    except UnsupportedError as exc:
        if _on_stablehlo(record):
            raise
        raise TranslatorLimitation(f"not checked on StableHLO by XLA either: {exc.message}") from None
    except InvalidInputError as exc:
        raise InvalidRecordInput(f"invalid HLO, rejected as bad input: {exc}") from None


def _root_op(record: dict) -> tuple[Any, Any]:
    """Import the record's HLO; return the module (keep it alive while the op is used)
    and the op of the ENTRY's ROOT instruction."""
    text = record["hlo"]
    on_stablehlo = _on_stablehlo(record)
    module = _imported(record)
    entry = next((c for c in scan_hlo_text(text).computations if c.is_entry), None)
    root = next((i for i in entry.instructions if i.is_root), None) if entry else None
    if root is None:
        raise CaseFailure("no ROOT instruction in the ENTRY computation")
    for op in module.body.operations:
        if op.operation.name == "func.func" and "sym_visibility" not in op.operation.attributes:
            for inner in op.regions[0].blocks[0].operations:
                if str(inner.location).startswith(f'loc("{root.name}"('):
                    return module, inner.operation
    raise RootFolded(f"ROOT instruction '{root.name}' ({root.opcode}) has no op after translation", on_stablehlo)


@dataclass(frozen=True)
class KnownDifference:
    """How our maps of one operand (result, for input -> output) relate to XLA's, and
    why. ``check`` is verified on the case before it is reported as a difference:

    - ``ours_inside``: our relation is strictly inside XLA's (XLA over-approximates);
    - ``xla_inside``: XLA's relation is inside ours (we over-approximate), or XLA's
      map is a placeholder with the wrong number of results for the operand;
    - ``equal_in_shape``: equal once pairs whose operand index lies outside the
      operand's shape are dropped (XLA leaves that bounds check to the consumer);
    - ``clamped_in_shape``: equal once each operand index of XLA's pairs is clamped into
      the operand's shape (XLA folds a clamped start index without its clamp);
    - ``xla_unknown``: XLA's map is ``unknown indexing`` (it has no rule for the op)
      and every map of ours is known.
    """

    check: str
    reason: str


#: (XLA opcode, kind, operand or result index) -> the documented difference.
KNOWN_DIFFERENCES: dict[tuple[str, str, int], KnownDifference] = {
    ("pad", "output_to_input", 1): KnownDifference(
        "ours_inside",
        "XLA reads the padding value at every output element; ours only where no operand "
        "element lands (exact: test_ops_shape.py::test_pad brute-forces it)",
    ),
    ("convolution", "output_to_input", 0): KnownDifference(
        "ours_inside",
        "with batch_group_count > 1 XLA reads every batch group; output feature f reads only "
        "group f floordiv (output features / batch_group_count): the StableHLO spec's split, "
        "brute-forced by test_ops_compute.py::test_convolution; XLA:CPU's jacobian "
        "(through JAX) has the same dependence on this case",
    ),
    ("convolution", "output_to_input", 1): KnownDifference(
        "ours_inside",
        "XLA's kernel map reads every kernel element at every output element; ours only "
        "where the kernel element meets a real input element (not padding, not a hole of "
        "lhs_dilation), as XLA's own input map does: the jacobian's dependence "
        "(test_ops_compute.py::test_convolution brute-forces it)",
    ),
    **{
        key: KnownDifference(
            "xla_unknown",
            "XLA has no rule for triangular-solve; ours: x reads its whole matrix of a and the "
            "column (left_side) or row of b it solves (jacobian-checked by test_new_rules.py)",
        )
        for key in [("triangular-solve", "output_to_input", 0), ("triangular-solve", "output_to_input", 1),
                    ("triangular-solve", "input_to_output", 0)]
    },
    **{
        ("fusion", "fusion_output_to_input", k): KnownDifference(
            "xla_unknown",
            "XLA's fused map is unknown through an op it has no rule for (triangular-solve); "
            "ours composes that op's rule",
        )
        for k in range(3)
    },
    ("dynamic-update-slice", "output_to_input", 1): KnownDifference(
        "equal_in_shape",
        "XLA's d - rt may fall outside the update (bounds left to the consumer); ours is "
        "constrained to the update's elements: equal within the update's shape",
    ),
    ("scan", "output_to_input", 0): KnownDifference(
        "xla_inside",
        "XLA's map of the final carry for the rank-1 input is the placeholder '() -> ()' "
        "(no results); ours is read from the body, whose carry passes through: the final "
        "carry reads no input (no dependence; test_scan_body.py brute-forces scan bodies)",
    ),
    ("scan", "output_to_input", 1): KnownDifference(
        "ours_inside",
        "XLA's per-step output reads the init at every step whatever the body; ours is read "
        "from the body, whose output is the input element: no init is read (no dependence; "
        "test_scan_body.py brute-forces scan bodies)",
    ),
}


#: (case id, operand index) -> the documented difference of that case alone, for
#: differences that a whole opcode does not share.
KNOWN_CASE_DIFFERENCES: dict[tuple[str, int], KnownDifference] = {
    ("indexing_analysis_test::FusionWithRTVarsSimplification_Iota", 0): KnownDifference(
        "clamped_in_shape",
        "XLA folds the gather's start index (an iota) without the gather's clamp, so its map "
        "reads rows past the operand; the gather reads the clamped row there, as ours does "
        "(test_fusion_runtime_folding.py checks clamped gathers against JAX)",
    ),
    ("indexing_analysis_test::FusionWithRTVarsSimplification_ScalarConstantOutsideOfRangeIsKept", 0): KnownDifference(
        "ours_inside",
        "XLA keeps the runtime variable of a constant start past the clamp range; the "
        "dynamic_slice reads at the clamped start, which ours folds to (exact; "
        "test_fusion_runtime_folding.py checks it against JAX)",
    ),
}


def _dimension_points(maps: Sequence[IndexingMap], rng: random.Random) -> list[tuple[int, ...]]:
    """Every point of the maps' dimension box when small, else its corners and samples."""
    box = [Interval(min(r.lower for r in ranges), max(r.upper for r in ranges)) for ranges in zip(*(m.dim_ranges for m in maps))]
    if int(np.prod([r.upper - r.lower + 1 for r in box])) <= 1024:
        return list(itertools.product(*(range(r.lower, r.upper + 1) for r in box)))
    points = {tuple(r.lower for r in box), tuple(r.upper for r in box)}
    points.update(tuple(rng.randint(r.lower, r.upper) for r in box) for _ in range(SAMPLED_POINTS))
    return sorted(points)


def _pairs_at(maps: Sequence[IndexingMap], point: tuple[int, ...]) -> set:
    pairs: set = set()
    for m in maps:
        if not m.is_known_empty() and all(r.lower <= v <= r.upper for v, r in zip(point, m.dim_ranges)):
            pairs |= narrowed(m, point).relation(PER_POINT_LIMIT)
    return pairs


def known_difference_holds(
    known: KnownDifference, ours: Sequence[IndexingMap], theirs: Sequence[IndexingMap], shape: Sequence[int],
    rng: random.Random,
) -> bool:
    """True when ``known.check`` holds between our maps and XLA's (see :class:`KnownDifference`)."""
    if known.check == "xla_unknown":
        return bool(theirs) and all(m.is_undefined for m in theirs) and not any(m.is_undefined for m in ours)
    if any(m.is_undefined for m in list(ours) + list(theirs)):
        return False
    if known.check == "xla_inside" and any(m.num_results != len(shape) for m in theirs):
        return all(m.num_results == len(shape) for m in ours)
    if any(m.num_results != len(shape) for m in list(ours) + list(theirs)):
        return False
    strict = False
    for point in _dimension_points(list(ours) + list(theirs), rng):
        mine, xla = _pairs_at(ours, point), _pairs_at(theirs, point)
        if known.check == "ours_inside":
            if not mine <= xla:
                return False
            strict |= mine < xla
        elif known.check == "xla_inside":
            if not xla <= mine:
                return False
            strict |= xla < mine
        elif known.check == "clamped_in_shape":
            clamped = {(d, tuple(min(max(v, 0), n - 1) for v, n in zip(x, shape))) for d, x in xla}
            if mine != clamped:
                return False
            strict |= mine != xla
        else:
            inside = lambda pairs: {(d, x) for d, x in pairs if all(0 <= v < n for v, n in zip(x, shape))}  # noqa: E731
            if inside(mine) != inside(xla):
                return False
            strict = True
    return strict


def _documented_differences(record: dict, op: Any, maps: list, expected: list, rng: random.Random, what: str) -> str:
    """The documented differences of the operands that do not match, '' if any of them
    is not documented or its documented relation does not hold."""
    notes = []
    values = op.results if record["kind"] == "input_to_output" else op.operands
    for index, (mine, texts) in enumerate(zip(maps, expected)):
        try:
            compare_map_sets([mine], [texts], rng, what)
            continue
        except CaseFailure:
            pass
        known = KNOWN_CASE_DIFFERENCES.get((record["id"], index)) or KNOWN_DIFFERENCES.get(
            (record.get("root_opcode", ""), record["kind"], index)
        )
        shape = tuple(values[index].type.shape) if index < len(values) else ()
        theirs = [parse_map(t) for t in texts]
        if known is None or not known_difference_holds(known, list(mine), theirs, shape, rng):
            return ""
        notes.append(f"{what} {index}: {known.reason}")
    return "; ".join(notes)


def run_per_op(record: dict, rng: random.Random) -> None:
    try:
        _module, op = _root_op(record)
    except RootFolded:
        if record.get("root_opcode") != "get-tuple-element" or record["kind"] != "output_to_input":
            raise
        run_tuple_element(record, rng)
        return
    physical = "physical_" if record.get("physical_layout") else ""  # maps between physical indices
    if record["kind"] == "output_to_input":
        result = _api(f"{physical}output_to_input_indexing")(op, record.get("root_output") or 0)
        what = "operand"
    else:
        result = _api(f"{physical}input_to_output_indexing")(op, record.get("operand") or 0)
        what = "result"
    maps, expected = list(result.maps), _expected_texts(record)
    try:
        compare_map_sets(maps, expected, rng, what)
    except CaseFailure:
        notes = _documented_differences(record, op, maps, expected, rng, what) if len(maps) == len(expected) else ""
        if not notes:
            raise
        raise DocumentedDifference(notes) from None


def _xla_root(record: dict) -> Any:
    """XLA's ``HloInstruction`` of the ENTRY's ROOT (jaxlib's HLO parser, which does not
    verify the module): its ``opcode``, ``operands()`` and ``to_string()``."""
    entry = next(c for c in scan_hlo_text(record["hlo"]).computations if c.is_entry)
    root = next(i for i in entry.instructions if i.is_root)
    xla_module: Any = parse_xla_hlo_module(record["hlo"], f"{record['id']}.hlo")
    computation = next(c for c in xla_module.computations() if c.name == entry.name)
    return next(i for i in computation.instructions() if i.name == root.name)


def run_tuple_element(record: dict, rng: random.Random) -> None:
    """A ``get-tuple-element`` ROOT of a ``tuple`` of parameters: XLA's map goes from the
    gte's output to element ``index`` of its tuple operand. The translator folds both
    away (the ENTRY function returns that element), so the record is checked on the
    function's fused maps from its result to the argument that is the element: a
    tuple's element is the identity of the value put there, so that map is XLA's gte map
    composed with it. XLA's text names the element (jaxlib's HLO parser)."""
    module = _imported(record)
    gte = _xla_root(record)
    tuple_op = gte.operands()[0]
    index = re.search(r"\bindex=(\d+)", gte.to_string())
    if tuple_op.opcode.name != "kTuple" or index is None:
        raise CaseFailure(f"'{gte.name}' reads {tuple_op.name} ({tuple_op.opcode.name}), not a tuple instruction")
    element = tuple_op.operands()[int(index.group(1))]
    if element.opcode.name != "kParameter":
        raise CaseFailure(f"element {index.group(1)} of {tuple_op.name} is {element.name}, not a parameter")
    function = _entry_function(module)
    arguments = [a for a in function.regions[0].blocks[0].arguments if location_name(a.location) == element.name]
    if len(arguments) != 1:
        raise CaseFailure(f"parameter {element.name} is not one argument of the ENTRY function")
    fused = _api("fusion_indexing")(function, record.get("root_output") or 0)
    compare_map_sets([fused.maps[arguments[0].arg_number]], _expected_texts(record), rng, "operand")


#: The source of the records of XLA's ``print_indexing`` tool (``xla/tools/print_indexing.cc``).
PRINT_INDEXING_SOURCE = "xla/tools/print_indexing_test.hlo"


def run_print_indexing(record: dict, rng: random.Random) -> None:
    """A record of XLA's ``print_indexing`` tool, checked as the tool computes it: it
    loads the module unverified (``LoadModuleFromFile``: ``ParseAndReturnUnverifiedModule``)
    and asks ``ComputeOutputToInputIndexing`` of the ENTRY's ROOT fusion, whose maps come
    from its fused computation alone, parameter ``i`` standing for operand ``i``. So the
    computation the fusion calls is imported as the entry by itself
    (``import_hlo_text(entry=)``), the ENTRY's call not checked (the corpus's is
    ill-typed: it passes ``s32[1024]`` to an ``s32[]`` parameter, which the normal import
    rejects as bad input); its fused maps of output ``root_output`` are compared with the
    tool's (which prints nothing for the trailing operands it does not read)."""
    fusion = _xla_root(record)
    called = re.search(r"\bcalls=%?([\w.\-]+)", fusion.to_string())
    if fusion.opcode.name != "kFusion" or called is None:
        raise CaseFailure(f"the ROOT '{fusion.name}' is not a fusion")
    module = import_hlo_text(record["hlo"], f"{record['id']}.hlo", default_context(), entry=called.group(1))
    fused = _api("fusion_indexing")(_entry_function(module), record.get("root_output") or 0)
    compare_map_sets(list(fused.maps), _expected_texts(record), rng)


def run_fusion(record: dict, rng: random.Random) -> None:
    if record["source"]["path"] == PRINT_INDEXING_SOURCE:
        run_print_indexing(record, rng)
        return
    _module, op = _root_op(record)
    if op.name != "mhlo.fusion":
        raise CaseFailure(f"ROOT translated to {op.name}, not mhlo.fusion")
    # asked per op on the fusion op, as XLA asks ComputeOutputToInputIndexing of a fusion
    # instruction; the fused maps of its region must say the same
    index = record.get("root_output") or 0
    per_op = _api("output_to_input_indexing")(op, index)
    maps, expected = list(per_op.maps), _expected_texts(record)
    try:
        compare_map_sets(maps, expected, rng)
    except CaseFailure:
        notes = _documented_differences(record, op, maps, expected, rng, "operand") if len(maps) == len(expected) else ""
        if not notes:
            raise
        raise DocumentedDifference(notes) from None
    fused = _api("fusion_indexing")(op.regions[0], index)
    if fused.maps != per_op.maps:
        raise CaseFailure("the fusion op's per-op maps differ from its region's fused maps")


# --------------------------------------------------------------------------- grouped and epilogue


def _entry_function(module: Any) -> Any:
    for op in module.body.operations:
        if op.operation.name == "func.func" and "sym_visibility" not in op.operation.attributes:
            return op
    raise CaseFailure("no ENTRY function after translation")


def _named_value(module: Any, name: str) -> Any:
    """The value of HLO instruction ``name`` in the ENTRY function (fusion bodies
    included): result 0 of the op named after it, or the parameter's block argument."""
    entry = _entry_function(module)
    for argument in entry.regions[0].blocks[0].arguments:
        if location_name(argument.location) == name:
            return argument
    found: list = []

    def visit(op: Any) -> Any:
        if not found and location_name(op.location) == name and len(op.results):
            found.append(op.results[0])
        return ir.WalkResult.ADVANCE

    entry.operation.walk(visit)
    if not found:
        raise CaseFailure(f"instruction '{name}' has no value after translation")
    return found[0]


def _value_name(value: Any) -> str:
    """The HLO instruction a value stands for: its op's, its parameter's, or (a fusion
    region's argument) the name of the fusion's operand."""
    if isinstance(value, ir.BlockArgument):
        parent = value.owner.owner
        if parent is not None and parent.name == "mhlo.fusion":
            return _value_name(parent.operands[value.arg_number])
        return location_name(value.location) or value.get_name()
    return location_name(value.owner.location) or value.get_name()


#: (case id, instruction) -> the documented difference of one group of a grouped case.
GROUPED_DIFFERENCES: dict[tuple[str, str], KnownDifference] = {
    ("indexing_analysis_test::ChainedAllGatherFusion", "p0"): KnownDifference(
        "xla_unknown",
        "XLA gives up composing two collectives' replica id maps (ComposeOperandIndexing: "
        "chaining collectives is a TODO) and returns an undefined map; ours composes the "
        "positions: element d0 of the second all-gather is element d0 mod 128 of p0 on the "
        "device that sent it (which device is not in our maps; test_collectives.py::"
        "test_chained_all_gathers_compose_their_positions checks it against a simulation)",
    ),
}


def _notes_argument(record: dict, key: str) -> str:
    marker = f"{key}="
    text = record["notes"].split(marker, 1)[1]
    return text.split(",", 1)[0].split(")", 1)[0].strip()


def run_grouped(record: dict, rng: random.Random) -> None:
    module, _root = _root_op(record)
    target = _named_value(module, _notes_argument(record, "target"))
    if record["notes"].startswith("GroupIndexingMapsByProducers"):
        op = target.owner
        grouped = _api("group_indexing_maps_by_producers")(_api("output_to_input_indexing")(op, 0), op)
    else:
        grouped = _api("grouped_output_to_input_indexing")(target)
    ours: dict[str, set] = {}
    for value, maps in grouped.items():
        ours.setdefault(_value_name(value), set()).update(maps)
    expected = {entry["instruction"]: entry["maps"] for entry in record["expected"]}
    partial = "only this instruction's entry is checked" in record["notes"]
    if not partial and set(ours) != set(expected):
        raise CaseFailure(f"groups {sorted(ours)}, expected {sorted(expected)}")
    notes = []
    for name, texts in expected.items():
        mine = ours.get(name)
        if mine is None:
            raise CaseFailure(f"no group for {name}; ours: {sorted(ours)}")
        try:
            compare_map_sets([frozenset(mine)], [texts], rng, f"group {name}:")
        except CaseFailure:
            known = GROUPED_DIFFERENCES.get((record["id"], name))
            theirs = [parse_map(t) for t in texts]
            if known is None or not known_difference_holds(known, list(mine), theirs, (), rng):
                raise
            notes.append(f"group {name}: {known.reason}")
    if notes:
        raise DocumentedDifference("; ".join(notes))


def run_epilogue(record: dict, rng: random.Random) -> None:
    module, _root = _root_op(record)
    parent = _named_value(module, _notes_argument(record, "epilogue_parent"))
    root = _named_value(module, _notes_argument(record, "epilogue_root"))
    maps = _api("epilogue_input_to_output_indexing")(parent, root)
    compare_map_sets([maps], [record["expected"]], rng, "epilogue")


# --------------------------------------------------------------------------- dispatch


def skip_reason(record: dict) -> str:
    """Why a record does not apply to hlo-indexing ('' when it applies)."""
    subkind = record.get("subkind")
    if subkind == "docs_example":
        return "docs example: hand-written, not tested by XLA (README caveats)"
    if record["kind"] == "other" and not subkind and record.get("input") is None:
        return "no map text: XLA checks a C++ object the corpus does not model"
    return ""


_RUNNERS: dict[str, Callable[[dict, random.Random], None]] = {
    "simplify": run_simplify,
    "compose": run_compose,
    "parse_print": run_parse_print,
    "output_to_input": run_per_op,
    "input_to_output": run_per_op,
    "fusion_output_to_input": run_fusion,
}


_SUBKIND_RUNNERS: dict[str, Callable[[dict, random.Random], None]] = {
    "evaluate": run_queries,
    "range_evaluator": run_queries,
    "grouped_output_to_input": run_grouped,
    "epilogue_input_to_output": run_epilogue,
}


def run_record(record: dict, seed: int = 0) -> Outcome:
    """Run one record; never raises."""
    op = record.get("root_opcode") or ",".join(o["op"] for o in record.get("ops") or []) or "-"
    make = lambda status, reason="": Outcome(record["id"], record["kind"], op, status, reason)  # noqa: E731
    reason = skip_reason(record)
    if reason:
        return make(SKIP, reason)
    runner = _RUNNERS.get(record["kind"])
    if runner is None:
        runner = _SUBKIND_RUNNERS.get(record.get("subkind") or "", run_map_other)
    try:
        runner(record, random.Random(seed))
    except (TranslatorLimitation, InvalidRecordInput) as exc:
        return make(SKIP, str(exc))
    except RootFolded as exc:
        return make(FAIL, str(exc)) if exc.on_stablehlo else make(SKIP, f"not checked on StableHLO by XLA either: {exc}")
    except DocumentedDifference as exc:
        return make(DIFF, str(exc))
    except CaseFailure as exc:
        return make(FAIL, str(exc))
    except NotImplementedApi as exc:
        return make(FAIL, f"not implemented: {exc}")
    except HloIndexingError as exc:
        return make(FAIL, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug in the code under test must not stop the run
        return make(FAIL, f"crash: {type(exc).__name__}: {exc}")
    return make(PASS)


def run_file(path: Path | str, only: str | None = None) -> list[Outcome]:
    """Run every record of a ``.jsonl`` file (those whose id contains ``only``)."""
    outcomes = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                if only is None or only in record["id"]:
                    outcomes.append(run_record(record))
    return outcomes


def format_table(outcomes: Sequence[Outcome]) -> str:
    rows = [("id", "kind", "op", "status", "reason")]
    rows += [(o.case_id, o.kind, o.op, o.status, " ".join(o.reason.split())) for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths)) + "  " + row[4] for row in rows
    )


def summary(outcomes: Sequence[Outcome]) -> str:
    count = {s: sum(o.status == s for o in outcomes) for s in (PASS, FAIL, SKIP, DIFF)}
    line = f"conformance: {count[PASS]} passed, {count[FAIL]} failed, {count[SKIP]} skipped"
    return line + (f", {count[DIFF]} documented differences" if count[DIFF] else "")


def methods_line() -> str:
    """How the relations compared so far were decided (:data:`map_compare.METHODS`)."""
    counts = ", ".join(f"{METHODS[m]} {m}" for m in ("isl", "enumeration", "sampled"))
    note = "" if isl_available() else " (islpy is not installed: no relation was proven by isl)"
    return f"relations compared: {counts}{note}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 dev/conformance.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="conformance .jsonl files")
    parser.add_argument("--only", help="run only the records whose id contains this text")
    args = parser.parse_args(argv)
    outcomes: list[Outcome] = []
    for path in args.files:
        try:
            outcomes += run_file(path, args.only)
        except (OSError, json.JSONDecodeError) as exc:
            print(f"{path}: error: {exc}", file=sys.stderr)
            return 1
    print(format_table(outcomes))
    print(methods_line())
    print(summary(outcomes))
    return 1 if any(o.status == FAIL for o in outcomes) else 0


def _cli_main() -> None:
    sys.exit(main())


if __name__ == "__main__":
    _cli_main()
