"""The JSON form of analysis results, for scripts: :func:`module_to_dict` /
:func:`module_to_json` (also ``ModuleIndexing.to_dict()`` / ``.to_json()``), and the
``format=json`` option of the passes ``hlo-print-indexing-maps`` and
``hlo-print-fusion-indexing``, which print one such document per module.

The document is described by the JSON Schema shipped with the package,
``hlo_indexing/schema/indexing.schema.json`` (:func:`schema` loads it)::

    {"schema": "hlo-indexing/indexing/1", "direction": "output-to-input",
     "computations": [COMPUTATION, ...], "ops": [OP, ...]}

    COMPUTATION = {"name": "@main" | "fusion.3", "kind": "func.func" | "mhlo.fusion",
                   "function": "main", "location": "f.mlir:1:1", "error": null,
                   "values": [{"index": 0, "over_approximated": [],
                               "targets": [{"index": 0, "element": "", "maps": [MAP]}]}]}
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
Bounds are inclusive.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from hlo_indexing.analysis.fusion import FusionIndexing, path_text
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.text import print_expr
from hlo_indexing.ops.result import InstructionIndexing

if TYPE_CHECKING:  # module_analysis imports this module for ModuleIndexing.to_dict
    from hlo_indexing.analysis.module_analysis import ComputationMaps, ModuleIndexing, OpMaps

#: The ``schema`` field of every document; the number changes with the format.
SCHEMA_ID = "hlo-indexing/indexing/1"
SCHEMA_RESOURCE = "schema/indexing.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema of the document (shipped as package data)."""
    text = resources.files("hlo_indexing").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def map_to_dict(m: IndexingMap) -> dict[str, Any]:
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


def _variables(names: list[str], variables: tuple[Variable, ...]) -> list[dict[str, Any]]:
    entries = []
    for name, variable in zip(names, variables, strict=True):
        entry: dict[str, Any] = {"name": name, "lower": variable.bounds.lower, "upper": variable.bounds.upper}
        if variable.origin:
            entry["origin"] = variable.origin
        entries.append(entry)
    return entries


def _maps(maps: frozenset[IndexingMap]) -> list[dict[str, Any]]:
    return [map_to_dict(m) for m in sorted(maps, key=str)]


def _fused_value(index: int, fused: FusionIndexing) -> dict[str, Any]:
    targets = [
        {"index": k, "element": path_text(path), "maps": _maps(maps)}
        for k in range(len(fused.maps))
        for path, maps in fused.element_maps(k)
    ]
    return {"index": index, "over_approximated": list(fused.over_approximated), "targets": targets}


def computation_to_dict(computation: ComputationMaps) -> dict[str, Any]:
    """One computation's fused maps (see the module docstring)."""
    return {
        "name": computation.name,
        "kind": computation.kind,
        "function": computation.function,
        "location": computation.location,
        "error": computation.error,
        "values": [_fused_value(i, fused) for i, fused in enumerate(computation.maps)],
    }


def _op_value(index: int, indexing: InstructionIndexing) -> dict[str, Any]:
    targets = [{"index": k, "element": "", "maps": _maps(maps)} for k, maps in enumerate(indexing.maps)]
    return {"index": index, "reason": indexing.reason or None, "targets": targets}


def op_to_dict(op: OpMaps) -> dict[str, Any]:
    """One op's per-op maps (see the module docstring)."""
    return {
        "op": op.op,
        "name": op.name,
        "function": op.function,
        "location": op.location,
        "values": [_op_value(i, indexing) for i, indexing in enumerate(op.indexing)],
    }


def module_to_dict(result: ModuleIndexing) -> dict[str, Any]:
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
