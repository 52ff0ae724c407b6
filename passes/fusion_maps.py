"""Passes over fused (whole-computation) indexing maps:

``hlo-attach-fused-indexing-maps`` attaches, to every argument of every ``func.func`` with a
body, ``hlo_indexing.fused_maps``: an ``ArrayAttr`` with one entry per function result,
each an ``ArrayAttr`` of indexing-map attributes (:mod:`hlo_indexing.maps.attributes`) from
that result to the argument. Each ``mhlo.fusion`` op gets the same information on the
op itself, one entry per result, each holding one ``ArrayAttr`` per operand.

``hlo-print-fused-indexing-maps`` emits, for the same computations, one remark per map at
the function (or fusion op): ``@f result 0 -> arg 1: (d0) -> (d0), domain: ...``.
Tuples are reported per tensor element: ``@f result 0.1 -> arg 2.0: ...`` is element 1
of result 0 reading element 0 of argument 2. ``hlo-attach-fused-indexing-maps`` has no element
level: a tuple-typed argument or result gets an unknown map whose reason says so (the
Python API, :func:`hlo_indexing.fusion_indexing` with ``element=``, has them).

Computations are named ``@f`` for a function and after the HLO instruction
(``fusion.3``) for an ``mhlo.fusion`` imported from HLO, reported in source order;
reducer and comparator functions are left out. Both take ``func=NAME`` (one function
and the fusions in it, or one fusion by its HLO instruction name:
:mod:`hlo_indexing.passes.selection`); ``hlo-print-fused-indexing-maps`` takes
``format=json`` (one JSON document, :mod:`hlo_indexing.passes.report`).

Both take ``max-maps`` (the per-value cap beyond which a set is over-approximated by
one whole-value map; a remark says so). A computation the analysis cannot handle
(e.g. dynamic shapes) gets an error at its location. The passes' old names,
``hlo-fuse-indexing-maps`` and ``hlo-print-fusion-indexing``, are aliases
(:data:`hlo_indexing.passes.registry.ALIASES`).

``hlo-print-fused-indexing-maps`` takes ``physical=coordinates|offset``: the maps go from
the result's physical index to the arguments' physical indices, through the layouts
written on them (:mod:`hlo_indexing.analysis.physical`), in remarks and in JSON (the
elements of a tuple result keep logical indices).

Both passes analyse the module with one call of
:func:`~hlo_indexing.analysis.module_analysis.module_indexing`; the print pass renders
its result (:mod:`hlo_indexing.passes.report`).

With ``analyses=true`` both also give, per argument, the operand utilisation
(:mod:`hlo_indexing.analysis.utilization`) and the coalescing hint
(:mod:`hlo_indexing.analysis.coalescing`, layouts from ``hlo_indexing.layout`` attributes):
remarks ``@f arg 0: utilization = 0.5 (exact, enumeration)`` (``<= 0.5 (bound, hull)``
for an upper bound) and
``@f arg 0: coalesced = true (symbolic)``, or the argument attributes
``hlo_indexing.utilization`` (f64), ``hlo_indexing.utilization_exact`` and
``hlo_indexing.coalesced`` (bool) (on an ``mhlo.fusion``, arrays with one entry per
operand). ``max-points`` bounds the enumeration of both analyses (at most
``limits.MAX_ENUMERATION_POINTS``: a larger value is refused, as it would let one
enumeration take gigabytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS
from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.analysis.physical import FORMS
from hlo_indexing.analysis.results import ComputationMaps
from hlo_indexing.analysis.utilization import DEFAULT_MAX_POINTS
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.op_attrs import attribute_dictionary
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.limits import MAX_ENUMERATION_POINTS
from hlo_indexing.maps.attributes import indexing_maps_to_attribute
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.report import format_field, print_maps
from hlo_indexing.passes.selection import func_field, selection

ATTRIBUTE = "hlo_indexing.fused_maps"
UTILIZATION_ATTRIBUTE = "hlo_indexing.utilization"
UTILIZATION_EXACT_ATTRIBUTE = "hlo_indexing.utilization_exact"
COALESCED_ATTRIBUTE = "hlo_indexing.coalesced"


@dataclass(frozen=True)
class _FusedMapsPass(ModulePass):
    """The options both fusion passes take."""

    max_maps: int = field(default=DEFAULT_MAX_MAPS, metadata={"help": "cap on distinct maps per value", "min": 1})
    analyses: bool = field(default=False, metadata={"help": "also compute operand utilization and coalescing"})
    max_points: int = field(
        default=DEFAULT_MAX_POINTS,
        metadata={"help": "enumeration limit of the analyses", "min": 0, "max": MAX_ENUMERATION_POINTS},
    )
    func: str = func_field()


@dataclass(frozen=True)
class AttachFusedIndexingMaps(_FusedMapsPass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-attach-fused-indexing-maps"
    description: ClassVar[str] = "Attach result->argument fused indexing maps to functions and mhlo.fusion ops"

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Attach the fused maps of every computation (function arguments or the op's
        attribute), and the utilization and coalescing analyses when asked; a computation
        whose analysis fails gets an error diagnostic (and nothing attached); ``func``:
        only the computations it selects."""
        chosen = selection(module, self.func, diagnostics)
        if chosen is None:
            return
        try:
            result = module_indexing(
                module,
                Direction.OUTPUT_TO_INPUT,
                per_op=False,
                max_maps=self.max_maps,
                within=None if chosen.everything else chosen.contains,
                analyses=self.analyses,
                max_points=self.max_points,
            )
        except HloIndexingError as exc:
            diagnostics.error(module.location, exc.message)
            return
        for computation in result.computations:
            failure = computation.failure or computation.analyses_failure
            if failure is not None:
                diagnostics.failure(computation.operation.location, failure.error, failure.context)
            else:
                _attach(computation)


def _attach(computation: ComputationMaps) -> None:
    """Set the attributes of one computation's fused maps and analyses (see the module
    docstring)."""
    op, results = computation.operation, computation.maps
    context = op.context
    n_args = len(op.regions[0].blocks[0].arguments)
    per_argument: list[ir.Attribute] = [
        ir.ArrayAttr.get([indexing_maps_to_attribute(r.maps[a], context) for r in results], context=context)
        for a in range(n_args)
    ]
    attributes: dict[str, list[ir.Attribute]] = {ATTRIBUTE: per_argument}
    if computation.utilization is not None and computation.coalescing is not None:
        attributes[UTILIZATION_ATTRIBUTE] = [ir.FloatAttr.get_f64(u.fraction, context) for u in computation.utilization]
        attributes[UTILIZATION_EXACT_ATTRIBUTE] = [ir.BoolAttr.get(u.exact, context) for u in computation.utilization]
        attributes[COALESCED_ATTRIBUTE] = [ir.BoolAttr.get(c.coalesced, context) for c in computation.coalescing]
    if op.name == "func.func":
        set_argument_attributes(op, attributes)
    else:
        op.attributes[ATTRIBUTE] = ir.ArrayAttr.get(
            [ir.ArrayAttr.get([indexing_maps_to_attribute(s, context) for s in r.maps], context=context) for r in results],
            context=context,
        )
        for key, values in attributes.items():
            if key != ATTRIBUTE:
                op.attributes[key] = ir.ArrayAttr.get(values, context=context)


def set_argument_attributes(func: ir.Operation, attributes: dict[str, list["ir.Attribute"]]) -> None:
    """Set ``attributes[key][i]`` on argument ``i`` of ``func`` (kept: other entries)."""
    context = func.context
    old = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes else []
    n_args = len(next(iter(attributes.values())))
    new = []
    for index in range(n_args):
        entries = {}
        if index < len(old):
            current = ir.DictAttr(old[index])
            entries = attribute_dictionary(current)
        for key, values in attributes.items():
            entries[key] = values[index]
        new.append(ir.DictAttr.get(entries, context))
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(new, context=context)


@dataclass(frozen=True)
class PrintFusedIndexingMaps(_FusedMapsPass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-print-fused-indexing-maps"
    description: ClassVar[str] = "Print fused result->argument indexing maps as remarks"

    format: str = format_field()
    physical: str = field(
        default="none",
        metadata={"help": "map physical indices through the layouts: none, coordinates or offset", "choices": ("none", *FORMS)},
    )

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Emit remarks with the fused maps of every computation (per tensor element of a
        tuple result) and, when asked, its analyses, at the computation's location; or,
        with ``format=json``, the JSON document of the same."""
        print_maps(
            module,
            diagnostics,
            self.func,
            self.format,
            direction=Direction.OUTPUT_TO_INPUT,
            fused=True,
            max_maps=self.max_maps,
            physical=self.physical,
            analyses=self.analyses,
            max_points=self.max_points,
        )
