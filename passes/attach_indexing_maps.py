"""The pass ``hlo-attach-indexing-maps``: attach every HLO op's per-op indexing maps as
builtin attributes.

Visited ops: every ``stablehlo.*``/``mhlo.*``/``chlo.*`` op except terminators
(``return``) and the ops inside the bodies that reductions, sorts, scatters and maps
apply to each element (reducer computations). Options:

* ``direction=output-to-input`` (default): attribute ``hlo_indexing.output_to_input``,
  an ``ArrayAttr`` with one entry per *result*, each an ``ArrayAttr`` with one entry per
  operand, each an ``ArrayAttr`` of map attributes (:mod:`hlo_indexing.maps.attributes`; an
  undefined map is ``{unknown = "reason"}``).
* ``direction=input-to-output``: attribute ``hlo_indexing.input_to_output``, one entry
  per *operand*, each with one entry per result, each an ``ArrayAttr`` of maps.
* ``simplify=false`` keeps the maps as built.
* ``physical=coordinates|offset`` maps physical indices instead of logical ones: the
  maps composed with the layouts of the values (:mod:`hlo_indexing.analysis.physical`;
  always simplified); ``none`` (default) keeps logical indices.

Example (output-to-input)::

    %0 = stablehlo.add %a, %b {hlo_indexing.output_to_input = [[
           [{dims = array<i64: 0, 9>, map = affine_map<(d0) -> (d0)>, text = "..."}],
           [{dims = array<i64: 0, 9>, map = affine_map<(d0) -> (d0)>, text = "..."}]]]} : tensor<10xf32>
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from hlo_indexing.analysis.per_op import hlo_ops
from hlo_indexing.analysis.physical import FORMS, per_op_maps
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.direction import Direction
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.attributes import indexing_maps_to_attribute
from hlo_indexing.ops.result import InstructionIndexing
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.selection import Selection, func_field, selection

ATTRIBUTE_NAMES = {Direction.OUTPUT_TO_INPUT: "hlo_indexing.output_to_input", Direction.INPUT_TO_OUTPUT: "hlo_indexing.input_to_output"}

@dataclass(frozen=True)
class PerOpMapsPass(ModulePass):
    """The options both per-op passes take."""

    direction: str = field(
        default=Direction.OUTPUT_TO_INPUT, metadata={"help": "output-to-input or input-to-output", "choices": tuple(Direction)}
    )
    simplify: bool = field(default=True, metadata={"help": "simplify the maps"})
    func: str = func_field()
    physical: str = field(
        default="none", metadata={"help": "map physical indices through the layouts: none, coordinates or offset", "choices": ("none", *FORMS)}
    )


@dataclass(frozen=True)
class AttachIndexingMaps(PerOpMapsPass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-attach-indexing-maps"
    description: ClassVar[str] = "Attach each HLO op's per-op indexing maps as hlo_indexing.* attributes"

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Attach each HLO op's per-op maps as an attribute (see the module docstring); ops
        whose analysis fails get an error diagnostic; ``func``: only the ops it selects."""
        chosen = selection(module, self.func, diagnostics)
        if chosen is not None:
            attach_per_op_maps(module, self.direction, self.simplify, diagnostics, chosen, self.physical)


def attach_per_op_maps(
    module: "ir.Operation",
    direction: str,
    simplify: bool,
    diagnostics: Diagnostics,
    chosen: Selection = Selection(),
    physical: str = "none",
) -> dict["ir.Operation", list[InstructionIndexing]]:
    """What :class:`AttachIndexingMaps` does (on the ops ``chosen`` holds), returning
    the per-op maps it attached, by op, so that a fused analysis of the same module
    (``computation_indexing(..., per_op=...)``) does not look them up again. An op
    whose analysis fails gets an error diagnostic and no entry."""
    context = module.context
    # The per-op analysis hands out the same cached objects for ops of the same
    # shapes and attributes: build their attribute once (keyed by identity, the
    # indexings are kept alive alongside).
    built: dict[tuple[int, ...], tuple[list[InstructionIndexing], ir.Attribute]] = {}
    attached: dict[ir.Operation, list[InstructionIndexing]] = {}
    for op in list(hlo_ops(module)):
        if not chosen.contains(op):
            continue
        try:
            per_index = per_op_maps(op, direction, simplify, physical)
        except HloIndexingError as exc:
            diagnostics.failure(op.location, exc)
            continue
        key = tuple(map(id, per_index))
        value = built[key][1] if key in built else None
        if value is None:
            value = ir.ArrayAttr.get(
                [
                    ir.ArrayAttr.get([indexing_maps_to_attribute(maps, context) for maps in indexing.maps], context=context)
                    for indexing in per_index
                ],
                context=context,
            )
            built[key] = (per_index, value)
        op.attributes[ATTRIBUTE_NAMES[Direction.of(direction)]] = value
        attached[op] = per_index
    return attached
