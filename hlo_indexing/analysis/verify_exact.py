"""Proof that the maps the passes print have the relations of the maps as built
(``hlo-indexing-opt --hlo-verify-exact``): every per-op map set (both directions)
against the same rules' unsimplified maps, and every fused map set against the
composition of the unsimplified per-op maps
(:func:`~hlo_indexing.analysis.grouped.grouped_output_to_input_indexing` with
``simplify=False``), by isl (:mod:`hlo_indexing.maps.exact`). An over-approximated
fused set (capped) must contain the exact one. Without ``islpy`` the check says the
proof was not run.

Example::

    checks = verify_module(module.operation)
    [c.message for c in checks if c.severity == "error"]   # disproofs
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hlo_indexing.analysis.fusion import fusion_indexing
from hlo_indexing.analysis.grouped import grouped_output_to_input_indexing
from hlo_indexing.analysis.per_op import hlo_ops, indexings
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.exact import Proof, isl_available, prove_empty, prove_equal, prove_includes
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.rule import value_shape

__all__ = ["Check", "verify_module"]


@dataclass(frozen=True)
class Check:
    """A diagnostic of the verification: ``severity`` (``error`` for a disproof,
    ``remark`` for the summary, ``warning`` when nothing could be proven), where and what."""

    severity: str
    location: Any
    message: str


def _proof(simplified: Iterable[IndexingMap], raw: Iterable[IndexingMap], over_approximated: bool = False) -> Proof:
    """Whether the maps shown have the relation of the maps built (contain it, when
    ``over_approximated``); a side without maps has the empty relation."""
    shown = [m for m in simplified if not m.is_known_empty()]
    built = [m for m in raw if not m.is_known_empty()]
    if not built:
        return Proof(True) if not shown or over_approximated else prove_empty(shown)
    if not shown:
        return prove_empty(built)
    return prove_includes(shown, built) if over_approximated else prove_equal(shown, built)


def verify_module(module: ir.Operation) -> list[Check]:
    """The disproofs (errors) and a summary remark of the per-op and fused maps of
    ``module`` proven against their unsimplified forms (see the module docstring)."""
    if not isl_available():
        return [Check("warning", module.location, "hlo-verify-exact: islpy is not installed (pip install hlo-indexing[exact]): the proof was not run")]
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    checks: list[Check] = []

    def record(proof: Proof, location: Any, what: str) -> None:
        if proof.holds is None:
            counts["not run"] += 1
            reasons[proof.reason.split(":", 1)[0]] += 1
        elif proof.holds:
            counts["proven"] += 1
        else:
            counts["disproven"] += 1
            checks.append(Check("error", location, f"hlo-verify-exact: {what} differs from its unsimplified form: {proof}"))

    for op in hlo_ops(module):
        for direction in ("output-to-input", "input-to-output"):
            try:
                simplified, unsimplified_all = indexings(op, direction, True), indexings(op, direction, False)
            except HloIndexingError:
                continue  # the passes report it
            for k, (shown_sets, built_sets) in enumerate(zip(simplified, unsimplified_all, strict=True)):
                for j, (maps, unsimplified) in enumerate(zip(shown_sets.maps, built_sets.maps, strict=True)):
                    if any(m.is_undefined for m in list(maps) + list(unsimplified)):
                        continue
                    record(_proof(maps, unsimplified), op.location, f"{op.name} {direction} map set {k}->{j}")
    for label, op in computations(module):
        block = op.regions[0].blocks[0]
        for r, root in enumerate(list(block.operations)[-1].operands):
            if value_shape(root.type) is None or any(value_shape(a.type) is None for a in block.arguments):
                continue
            try:
                fused = fusion_indexing(op, r)
                composed = grouped_output_to_input_indexing(root, simplify=False)
            except HloIndexingError:
                continue
            for position, argument in enumerate(block.arguments):
                shown = fused.maps[position]
                built = composed.get(argument, frozenset())
                if any(m.is_undefined for m in list(shown) + list(built)):
                    continue
                record(_proof(shown, built, bool(fused.over_approximated)), op.location, f"{label} result {r} -> arg {position}")
    summary = f"hlo-verify-exact: {counts['proven']} map sets proven equal to their unsimplified forms"
    if counts["not run"]:
        summary += f", {counts['not run']} not proven (" + ", ".join(f"{n}: {why}" for why, n in sorted(reasons.items())) + ")"
    if counts["disproven"]:
        summary += f", {counts['disproven']} disproven"
    return checks + [Check("remark", module.location, summary)]
