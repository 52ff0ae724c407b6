"""The results of the module analysis (:func:`hlo_indexing.analyze`,
:mod:`hlo_indexing.analysis.module_analysis`) and their two renderings.

:class:`ModuleIndexing` holds the fused maps of every ``func.func`` with a body and every
``mhlo.fusion`` (:class:`ComputationMaps`, one
:class:`~hlo_indexing.analysis.fusion.FusionIndexing` per result, or per argument for
``direction="input-to-output"``) and the per-op maps of every HLO op (:class:`OpMaps`).

Text: ``str()`` of each, whose map lines (:func:`fused_map_lines`) the pass
``hlo-print-fused-indexing-maps`` prints as remarks too. JSON, for scripts:
:func:`module_to_dict` / :func:`module_to_json` (also ``ModuleIndexing.to_dict()`` /
``.to_json()``), and the ``format=json`` option of the passes
``hlo-print-indexing-maps`` and ``hlo-print-fused-indexing-maps``, which print one such
document per module.

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
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from hlo_indexing.analysis.fusion import FusionIndexing, path_text
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.direction import Direction
from hlo_indexing.maps.indexing_map import IndexingMap, Variable, display_text
from hlo_indexing.maps.text import print_expr
from hlo_indexing.ops.result import InstructionIndexing
from hlo_indexing.schema import load_schema

# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ComputationMaps:
    """Fused maps of one computation: ``name`` is ``@name`` for a ``func.func``, the HLO
    instruction's name (``fusion.3``) for an ``mhlo.fusion`` imported from HLO, else
    ``mhlo.fusion``; ``kind`` is the op's name (``func.func`` or ``mhlo.fusion``) and
    ``function`` the name of the function it is (or is in).

    ``maps[i]`` is the :class:`FusionIndexing` of result ``i`` (output-to-input: one map
    set per argument) or of argument ``i`` (input-to-output: one map set per result).
    ``error`` says why the maps could not be computed (``maps`` is then empty)."""

    name: str
    location: str
    maps: tuple[FusionIndexing, ...]
    direction: str
    error: str | None = None
    kind: str = "func.func"
    function: str | None = None
    result_names: tuple[str | None, ...] = ()
    argument_names: tuple[str | None, ...] = ()

    def lines(self) -> list[str]:
        """The printed form: one line per map (``name result i -> arg k: map``, with
        JAX's names where the program has them: ``@main result['loss'] ->
        params['w']: map``), a line per over-approximated result, or one error line."""
        if self.error is not None:
            return [f"{self.name}: error: {self.error}"]
        sources, targets, source, target = self.result_names, self.argument_names, "result", "arg"
        if self.direction != Direction.OUTPUT_TO_INPUT:
            sources, targets, source, target = targets, sources, target, source
        lines = []
        for i, fused in enumerate(self.maps):
            value = f"{self.name} {value_label(source, (i,), sources)}"
            lines += fused_map_lines(value, fused, target, targets)
            if fused.over_approximated:
                lines.append(f"{value}: over-approximated ({', '.join(fused.over_approximated)})")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class OpMaps:
    """Per-op maps of one HLO op: ``indexing[i]`` for its result ``i`` (output-to-input)
    or operand ``i`` (input-to-output). ``name`` is the HLO instruction's name
    (``add.3``) when the op was imported from HLO, else None; ``function`` the
    ``func.func`` the op is in."""

    op: str
    location: str
    indexing: tuple[InstructionIndexing, ...]
    direction: str
    name: str | None = None
    function: str | None = None

    def lines(self) -> list[str]:
        """The printed form: a header line per result (operand) then its maps, indented."""
        what = "result" if self.direction == Direction.OUTPUT_TO_INPUT else "operand"
        lines = []
        label = f"{self.op} {self.name!r}" if self.name else self.op
        for i, indexing in enumerate(self.indexing):
            lines.append(f"{label} at {self.location}, {what} {i}:")
            lines += [f"  {line}" for line in str(indexing).splitlines()] or ["  (no operands)"]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class ModuleIndexing:
    """The result of :func:`analyze`; ``module`` is the ``builtin.module`` analysed (kept
    alive with the result), ``source`` says what it was read from (e.g. ``XLA's optimised
    HLO of a jax Compiled (compiled.as_text())``; empty when not said)."""

    computations: tuple[ComputationMaps, ...]
    ops: tuple[OpMaps, ...]
    direction: str
    module: ir.Operation
    source: str = ""

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


def fused_map_lines(
    value: str, fused: FusionIndexing, target: str = "arg", target_names: tuple[str | None, ...] = ()
) -> list[str]:
    """The text of fused maps: ``VALUE -> TARGET K: MAP`` for each map of each target
    ``K`` of ``fused`` (``K.E`` for element ``E`` of a tuple target; the target's name
    instead where ``target_names`` has one, see :func:`value_label`), sorted by text,
    or ``VALUE -> TARGET K: no dependence``; an unknown map says why (``display_text``)."""
    lines = []
    for k in range(len(fused.maps)):
        for path, maps in fused.element_maps(k):
            texts = sorted(display_text(m) for m in maps) or ["no dependence"]
            label = value_label(target, (k,) + path, target_names)
            lines += [f"{value} -> {label}: {text}" for text in texts]
    return lines


def value_label(kind: str, path: tuple[int, ...], names: tuple[str | None, ...]) -> str:
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
    index: int, fused: FusionIndexing, names: tuple[str | None, ...], target_names: tuple[str | None, ...]
) -> dict[str, object]:
    targets = [
        {"index": k, "name": _name(target_names, k), "element": path_text(path), "maps": _maps(maps)}
        for k in range(len(fused.maps))
        for path, maps in fused.element_maps(k)
    ]
    return {
        "index": index,
        "name": _name(names, index),
        "over_approximated": list(fused.over_approximated),
        "targets": targets,
    }


def _name(names: tuple[str | None, ...], index: int) -> str | None:
    return names[index] if index < len(names) else None


def computation_to_dict(computation: ComputationMaps) -> dict[str, object]:
    """One computation's fused maps (see the module docstring)."""
    names, target_names = computation.result_names, computation.argument_names
    if computation.direction != Direction.OUTPUT_TO_INPUT:
        names, target_names = target_names, names
    return {
        "name": computation.name,
        "kind": computation.kind,
        "function": computation.function,
        "location": computation.location,
        "error": computation.error,
        "values": [_fused_value(i, fused, names, target_names) for i, fused in enumerate(computation.maps)],
    }


def _op_value(index: int, indexing: InstructionIndexing) -> dict[str, object]:
    targets = [{"index": k, "element": "", "maps": _maps(maps)} for k, maps in enumerate(indexing.maps)]
    return {"index": index, "reason": indexing.reason or None, "targets": targets}


def op_to_dict(op: OpMaps) -> dict[str, object]:
    """One op's per-op maps (see the module docstring)."""
    return {
        "op": op.op,
        "name": op.name,
        "function": op.function,
        "location": op.location,
        "values": [_op_value(i, indexing) for i, indexing in enumerate(op.indexing)],
    }


def module_to_dict(result: ModuleIndexing) -> dict[str, object]:
    """The whole document for ``result`` (see the module docstring)."""
    return {
        "schema": SCHEMA_ID,
        "direction": result.direction,
        "computations": [computation_to_dict(c) for c in result.computations],
        "ops": [op_to_dict(op) for op in result.ops],
    }


def module_to_json(result: ModuleIndexing, indent: int | None = 2) -> str:
    """:func:`module_to_dict` as JSON text (``indent=None``: one line)."""
    return json.dumps(module_to_dict(result), indent=indent)
