"""The results of the module analysis (:func:`hlo_indexing.analyze`,
:mod:`hlo_indexing.analysis.module_analysis`, the one entry of the print passes) and their
two renderings.

:class:`ModuleIndexing` holds the fused maps of every ``func.func`` with a body and every
``mhlo.fusion`` (:class:`ComputationMaps`: one
:class:`~hlo_indexing.analysis.fusion.FusionIndexing` per result, or per argument for
``direction="input-to-output"``; what is printed, :class:`ValueMaps`, per tensor and per
tensor element of a tuple, between physical indices when asked; the per-argument
utilisation and coalescing when asked) and the per-op maps of every HLO op
(:class:`OpMaps`). A part that could not be computed is a :class:`Failure` where its
maps would be.

Text: :meth:`ComputationMaps.report` and :meth:`OpMaps.report` are the lines the passes
``hlo-print-fused-indexing-maps`` and ``hlo-print-indexing-maps`` print as remarks (a
:class:`Failure` becomes an error there); ``str()`` of each prints the same lines (a
failure as ``NAME: error: MESSAGE``; the per-op maps under a header naming the op and
its location). JSON, for scripts: :func:`module_to_dict` / :func:`module_to_json` (also
``ModuleIndexing.to_dict()`` / ``.to_json()``), and the ``format=json`` option of both
passes, which print one such document per module.

The document is described by the JSON Schema shipped with the package,
``hlo_indexing/schema/indexing.schema.json`` (:func:`schema` loads it)::

    {"schema": "hlo-indexing/indexing/1", "direction": "output-to-input",
     "computations": [COMPUTATION, ...], "ops": [OP, ...]}

    COMPUTATION = {"name": "@main" | "fusion.3", "kind": "func.func" | "mhlo.fusion",
                   "function": "main", "location": "f.mlir:1:1", "error": null,
                   "values": [{"index": 0, "name": "result['loss']", "over_approximated": [],
                               "targets": [{"index": 0, "name": "params['w']", "element": "",
                                            "maps": [MAP]}]}]}
    OP = {"op": "stablehlo.add", "name": "add.3", "function": "main", "location": "...",
          "values": [{"index": 0, "reason": null,
                      "targets": [{"index": 0, "element": "", "maps": [MAP]}]}]}
    MAP = {"text": "(d0) -> (d0), domain: d0 in [0, 9]", "unknown": false,
           "reason": null, "known_empty": false,
           "dimensions": [{"name": "d0", "lower": 0, "upper": 9}],
           "range_variables": [], "runtime_variables": [],
           "results": ["d0"], "constraints": [{"expression": "d0 + s0", "lower": 0, "upper": 9}]}

``values`` are the results of a computation or op for ``direction=output-to-input``
(``targets``: the arguments or operands each reads), its arguments or operands for
``input-to-output`` (``targets``: the results). A target with no map does not depend on
the value. ``text`` is XLA's text of the map (``UNDEFINED`` for an unknown map, whose
``reason`` says why); ``element`` names the tuple element (``"1.0"``) or is ``""``.
A computation's value or target has the ``name`` JAX gave it (``jax.result_info``, the
argument's name location; :mod:`~hlo_indexing.analysis.jax_names`), or null. Bounds are
inclusive.

Fields present only when they say something: ``"physical": "coordinates" | "offset"`` at
the top when the maps are between physical indices (tuple elements keep logical ones);
in a computation's value, ``"element": "0.1"`` when it is one tensor element of a
tuple-typed result (argument), and ``"error"`` when its physical maps could not be built
(``targets`` is then empty); in a computation, ``"analyses": {"error": null,
"arguments": [{"index": 0, "name": null, "utilization": {"fraction": 0.5, "read": 8,
"elements": 16, "exact": true, "method": "enumeration"}, "coalescing": {"coalesced":
true, "exact": true, "method": "symbolic"}}]}`` when the analyses were asked for
(``error`` says why they could not be computed, ``arguments`` is then empty); in an op,
``"error"`` when its maps could not be computed (``values`` is then empty).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from hlo_indexing.analysis.coalescing import Coalescing
from hlo_indexing.analysis.fusion import FusionIndexing, Path, path_text
from hlo_indexing.analysis.utilization import Utilization
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.direction import Direction
from hlo_indexing.maps.indexing_map import IndexingMap, Variable, display_text
from hlo_indexing.maps.text import print_expr
from hlo_indexing.ops.result import InstructionIndexing
from hlo_indexing.schema import load_schema

# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Failure:
    """A part of the analysis that raised: ``error`` is the exception (its ``str()`` the
    message; an :class:`~hlo_indexing.errors.HloIndexingError` may name the op it is
    about), ``context`` what the analysis was doing, or empty."""

    error: Exception
    context: str = ""

    def __str__(self) -> str:
        return str(self.error)


@dataclass(frozen=True)
class ValueMaps:
    """The fused maps of result (argument, input-to-output) ``index`` of a computation,
    or of its tensor element ``element`` when it is a tuple (``()``: the value itself),
    as printed; the :class:`Failure` of building them (physical maps) instead."""

    index: int
    element: Path
    maps: FusionIndexing | Failure


#: One item of a text rendering: a line, or a failure to report at the computation or op.
ReportItem = str | Failure


@dataclass(frozen=True)
class ComputationMaps:
    """Fused maps of one computation: ``name`` is ``@name`` for a ``func.func``, the HLO
    instruction's name (``fusion.3``) for an ``mhlo.fusion`` imported from HLO, else
    ``mhlo.fusion``; ``kind`` is the op's name (``func.func`` or ``mhlo.fusion``) and
    ``function`` the name of the function it is (or is in); ``operation`` the op.

    ``maps[i]`` is the logical :class:`FusionIndexing` of result ``i`` (output-to-input:
    one map set per argument) or of argument ``i`` (input-to-output: one map set per
    result); ``values`` what is printed (see :class:`ValueMaps`): the same for a tensor
    (between physical indices when they were asked for), one entry per tensor element of
    a tuple. ``utilization`` and ``coalescing`` have one entry per argument when the
    analyses were asked for (else None), or ``analyses_failure`` says why they could not
    be computed. ``failure`` says why the maps could not be computed (``maps`` and
    ``values`` are then empty)."""

    name: str
    location: str
    maps: tuple[FusionIndexing, ...]
    direction: str
    failure: Failure | None = None
    kind: str = "func.func"
    function: str | None = None
    result_names: tuple[str | None, ...] = ()
    argument_names: tuple[str | None, ...] = ()
    values: tuple[ValueMaps, ...] = ()
    utilization: tuple[Utilization, ...] | None = None
    coalescing: tuple[Coalescing, ...] | None = None
    analyses_failure: Failure | None = None
    operation: ir.Operation = field(kw_only=True, compare=False, repr=False)

    @property
    def error(self) -> str | None:
        """The message of :attr:`failure`, or None."""
        return None if self.failure is None else str(self.failure)

    def report(self) -> list[ReportItem]:
        """The text rendering, in order: for each value, one line per map (``name result i
        -> arg k: map``, with JAX's names where the program has them: ``@main
        result['loss'] -> params['w']: map``; ``result 0.1`` for element 1 of a tuple
        result) and a line when it is over-approximated; then, with the analyses, two
        lines per argument (``@f arg 0: utilization = 0.5 (exact, enumeration)``, ``@f arg
        0: coalesced = true (symbolic)``). A part that failed is its :class:`Failure`."""
        if self.failure is not None:
            return [self.failure]
        sources, targets, source, target = self.result_names, self.argument_names, "result", "arg"
        if self.direction != Direction.OUTPUT_TO_INPUT:
            sources, targets, source, target = targets, sources, target, source
        items: list[ReportItem] = []
        for value in self.values:
            label = f"{self.name} {_value_label(source, (value.index, *value.element), sources)}"
            if isinstance(value.maps, Failure):
                items.append(value.maps)
                continue
            items += _map_lines(label, value.maps, target, targets)
            if value.maps.over_approximated:
                items.append(f"{label}: over-approximated ({', '.join(value.maps.over_approximated)})")
        if self.analyses_failure is not None:
            items.append(self.analyses_failure)
        for a, (utilization, coalesced) in enumerate(zip(self.utilization or (), self.coalescing or (), strict=True)):
            items.append(f"{self.name} arg {a}: utilization {utilization}")
            items.append(f"{self.name} arg {a}: coalesced = {coalesced}")
        return items

    def lines(self) -> list[str]:
        """:meth:`report` as lines, a failure as ``NAME: error: MESSAGE``."""
        return [item if isinstance(item, str) else f"{self.name}: error: {item}" for item in self.report()]

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class OpMaps:
    """Per-op maps of one HLO op: ``indexing[i]`` for its result ``i`` (output-to-input)
    or operand ``i`` (input-to-output), between physical indices when they were asked
    for. ``name`` is the HLO instruction's name (``add.3``) when the op was imported from
    HLO, else None; ``function`` the ``func.func`` the op is in; ``operation`` the op.
    ``failure`` says why the maps could not be computed (``indexing`` is then empty)."""

    op: str
    location: str
    indexing: tuple[InstructionIndexing, ...]
    direction: str
    name: str | None = None
    function: str | None = None
    failure: Failure | None = None
    operation: ir.Operation = field(kw_only=True, compare=False, repr=False)

    @property
    def _what(self) -> str:
        return "result" if self.direction == Direction.OUTPUT_TO_INPUT else "operand"

    def report(self) -> list[ReportItem]:
        """The text rendering: one item, the op's maps in XLA's wording, one block per
        result (operand): ``output-to-input indexing of result #0 (stablehlo.add add.3):``
        then one ``operand id = k ...`` line per map; or its :class:`Failure`."""
        if self.failure is not None:
            return [self.failure]
        label = f"{self.op} {self.name}" if self.name else self.op
        blocks = [
            f"{self.direction} indexing of {self._what} #{k} ({label}):\n{indexing}".rstrip()
            for k, indexing in enumerate(self.indexing)
        ]
        return ["\n".join(blocks) if blocks else f"{label}: no {self._what}s"]

    def lines(self) -> list[str]:
        """The printed form: a header line per result (operand) then its maps, indented;
        a failure as one ``... at LOCATION: error: MESSAGE`` line."""
        label = f"{self.op} {self.name!r}" if self.name else self.op
        if self.failure is not None:
            return [f"{label} at {self.location}: error: {self.failure}"]
        lines = []
        for i, indexing in enumerate(self.indexing):
            lines.append(f"{label} at {self.location}, {self._what} {i}:")
            lines += [f"  {line}" for line in str(indexing).splitlines()] or ["  (no operands)"]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class ModuleIndexing:
    """The result of :func:`analyze`; ``module`` is the ``builtin.module`` analysed (kept
    alive with the result), ``source`` says what it was read from (e.g. ``XLA's optimised
    HLO of a jax Compiled (compiled.as_text())``; empty when not said); ``physical`` the
    physical index form of the maps (``coordinates``, ``offset``) or ``none``."""

    computations: tuple[ComputationMaps, ...]
    ops: tuple[OpMaps, ...]
    direction: str
    module: ir.Operation
    source: str = ""
    physical: str = "none"

    def computation(self, name: str) -> ComputationMaps:
        """The computation called ``name``: a function (``"@main"`` or ``"main"``) or a
        fusion by its HLO instruction name (``"fusion.3"``). ``KeyError`` names the
        computations there are, the closest first."""
        for wanted in (name, f"@{name.removeprefix('@')}"):
            for computation in self.computations:
                if computation.name == wanted:
                    return computation
        raise KeyError(_missing(name, [c.name for c in self.computations], "computation"))

    def op(self, name: str) -> OpMaps:
        """The per-op maps of the op imported from the HLO instruction ``name``
        (``"add.3"``); ``KeyError`` when there is none."""
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(_missing(name, [op.name for op in self.ops if op.name], "op"))

    def to_dict(self) -> dict[str, object]:
        """The JSON document (see the module docstring; its schema:
        ``hlo_indexing/schema/indexing.schema.json``)."""
        return module_to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return module_to_json(self, indent)

    def __repr__(self) -> str:
        source = f" of {self.source}" if self.source else ""
        return (
            f"<ModuleIndexing {self.direction}{source}: {len(self.computations)} computations, {len(self.ops)} ops;"
            " str() prints the maps, to_dict() gives them>"
        )

    def __str__(self) -> str:
        lines = [line for computation in self.computations for line in computation.lines()]
        if self.ops:
            lines.append(f"per-op maps ({self.direction}):")
            lines += [f"  {line}" for op in self.ops for line in op.lines()]
        return "\n".join(lines)


def _missing(name: str, have: list[str], what: str) -> str:
    close = difflib.get_close_matches(name, have, n=3)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"no {what} {name!r}{hint} (there are {len(have)}: {', '.join(have[:20])}{', ...' if len(have) > 20 else ''})"


def _map_lines(
    value: str, fused: FusionIndexing, target: str, target_names: tuple[str | None, ...]
) -> list[ReportItem]:
    """``VALUE -> TARGET K: MAP`` for each map of each target ``K`` of ``fused`` (``K.E``
    for element ``E`` of a tuple target; the target's name instead where
    ``target_names`` has one, see :func:`_value_label`), sorted by text, or ``VALUE ->
    TARGET K: no dependence``; an unknown map says why (``display_text``)."""
    lines: list[ReportItem] = []
    for k in range(len(fused.maps)):
        for path, maps in fused.element_maps(k):
            texts = sorted(display_text(m) for m in maps) or ["no dependence"]
            label = _value_label(target, (k,) + path, target_names)
            lines += [f"{value} -> {label}: {text}" for text in texts]
    return lines


def _value_label(kind: str, path: tuple[int, ...], names: tuple[str | None, ...]) -> str:
    """How a result or argument is called in the text: the name JAX gave it
    (``result['loss']``, ``params['w']``; :mod:`~hlo_indexing.analysis.jax_names`) when
    ``names`` has one for it, else ``KIND N`` (``result 0``, ``arg 1.0`` for element 0
    of a tuple argument)."""
    name = names[path[0]] if len(path) == 1 and path[0] < len(names) else None
    return name if name else f"{kind} {path_text(path)}"


# ----------------------------------------------------------------------------- JSON

#: The ``schema`` field of every document; the number changes with the format.
SCHEMA_ID = "hlo-indexing/indexing/1"
SCHEMA_FILE = "indexing.schema.json"


def schema() -> dict[str, object]:
    """The JSON Schema of the document (shipped as package data, :mod:`hlo_indexing.schema`)."""
    return load_schema(SCHEMA_FILE)


def map_to_dict(m: IndexingMap) -> dict[str, object]:
    """One map: its XLA text, variables with ranges, results and constraints."""
    known = not m.is_undefined and not m.is_known_empty()
    dims, symbols = m.variable_names() if known else ([], [])
    n_range = len(m.range_vars) if known else 0
    return {
        "text": str(m),
        "unknown": m.is_undefined,
        "reason": m.reason if m.is_undefined else None,
        "known_empty": not m.is_undefined and m.is_known_empty(),
        "dimensions": _variables(dims, m.dim_vars) if known else [],
        "range_variables": _variables(symbols[:n_range], m.range_vars) if known else [],
        "runtime_variables": _variables(symbols[n_range:], m.runtime_vars) if known else [],
        "results": [print_expr(e, dims, symbols) for e in m.results] if known else [],
        "constraints": sorted(
            (
                {"expression": print_expr(e, dims, symbols), "lower": c.lower, "upper": c.upper}
                for e, c in m.constraints.items()
            ),
            key=lambda entry: str(entry["expression"]),
        )
        if known
        else [],
    }


def _variables(names: list[str], variables: tuple[Variable, ...]) -> list[dict[str, object]]:
    entries = []
    for name, variable in zip(names, variables, strict=True):
        entry: dict[str, object] = {"name": name, "lower": variable.bounds.lower, "upper": variable.bounds.upper}
        if variable.origin:
            entry["origin"] = variable.origin
        entries.append(entry)
    return entries


def _maps(maps: frozenset[IndexingMap]) -> list[dict[str, object]]:
    return [map_to_dict(m) for m in sorted(maps, key=IndexingMap.sort_key)]


def _fused_value(
    value: ValueMaps, names: tuple[str | None, ...], target_names: tuple[str | None, ...]
) -> dict[str, object]:
    entry: dict[str, object] = {"index": value.index, "name": _name(names, value.index)}
    if value.element:
        entry["element"] = path_text(value.element)
    if isinstance(value.maps, Failure):
        entry.update(over_approximated=[], targets=[], error=str(value.maps))
        return entry
    fused = value.maps
    entry["over_approximated"] = list(fused.over_approximated)
    entry["targets"] = [
        {"index": k, "name": _name(target_names, k), "element": path_text(path), "maps": _maps(maps)}
        for k in range(len(fused.maps))
        for path, maps in fused.element_maps(k)
    ]
    return entry


def _name(names: tuple[str | None, ...], index: int) -> str | None:
    return names[index] if index < len(names) else None


def _analyses(computation: ComputationMaps) -> dict[str, object]:
    """The ``analyses`` entry of a computation: per argument, its utilisation and
    coalescing (see the module docstring)."""
    if computation.analyses_failure is not None:
        return {"error": str(computation.analyses_failure), "arguments": []}
    pairs = zip(computation.utilization or (), computation.coalescing or (), strict=True)
    arguments = [
        {
            "index": a,
            "name": _name(computation.argument_names, a),
            "utilization": {
                "fraction": u.fraction, "read": u.read, "elements": u.elements, "exact": u.exact, "method": u.method
            },
            "coalescing": {"coalesced": c.coalesced, "exact": c.exact, "method": c.method},
        }
        for a, (u, c) in enumerate(pairs)
    ]
    return {"error": None, "arguments": arguments}


def computation_to_dict(computation: ComputationMaps) -> dict[str, object]:
    """One computation's fused maps (see the module docstring)."""
    names, target_names = computation.result_names, computation.argument_names
    if computation.direction != Direction.OUTPUT_TO_INPUT:
        names, target_names = target_names, names
    entry: dict[str, object] = {
        "name": computation.name,
        "kind": computation.kind,
        "function": computation.function,
        "location": computation.location,
        "error": computation.error,
        "values": [_fused_value(value, names, target_names) for value in computation.values],
    }
    if computation.utilization is not None or computation.analyses_failure is not None:
        entry["analyses"] = _analyses(computation)
    return entry


def _op_value(index: int, indexing: InstructionIndexing) -> dict[str, object]:
    targets = [{"index": k, "element": "", "maps": _maps(maps)} for k, maps in enumerate(indexing.maps)]
    return {"index": index, "reason": indexing.reason or None, "targets": targets}


def op_to_dict(op: OpMaps) -> dict[str, object]:
    """One op's per-op maps (see the module docstring)."""
    entry: dict[str, object] = {
        "op": op.op,
        "name": op.name,
        "function": op.function,
        "location": op.location,
        "values": [_op_value(i, indexing) for i, indexing in enumerate(op.indexing)],
    }
    if op.failure is not None:
        entry["error"] = str(op.failure)
    return entry


def module_to_dict(result: ModuleIndexing) -> dict[str, object]:
    """The whole document for ``result`` (see the module docstring)."""
    document: dict[str, object] = {"schema": SCHEMA_ID, "direction": result.direction}
    if result.physical != "none":
        document["physical"] = result.physical
    document["computations"] = [computation_to_dict(c) for c in result.computations]
    document["ops"] = [op_to_dict(op) for op in result.ops]
    return document


def module_to_json(result: ModuleIndexing, indent: int | None = 2) -> str:
    """:func:`module_to_dict` as JSON text (``indent=None``: one line)."""
    return json.dumps(module_to_dict(result), indent=indent)
