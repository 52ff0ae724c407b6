"""The pass ``hlo-lower-tiled-layouts``: lower XLA tiled layouts to indexing maps.

Layouts are read from

* a ``hlo_indexing.layout = "{1,0:T(2,2)}"`` string attribute (a layout, or a whole shape
  ``"f32[3,5]{1,0:T(2,2)}"`` whose dims must match) on a ``func.func`` argument or result,
  or on an op with one result; on an op with several results, an array of one layout per
  result (as the HLO import writes a tuple-shaped instruction's, e.g. a ``reduce-window``
  of several arrays, a ``while``), and the attributes below are then arrays too, one
  entry per result;
* XLA's entry-computation layouts on the module, ``mhlo.xla_entry_computation_parameter_layouts``
  / ``..._parameter_tiles`` and ``..._result_layout`` / ``..._result_tiles`` (as XLA's
  HLO -> MHLO import writes them), applied to the arguments and results of ``@main``;
  tuple-typed entries are skipped with a warning.

For each laid-out value with a static ranked tensor or memref type, the pass attaches
builtin attributes (maps in the :mod:`hlo_indexing.maps.attributes` form) next to the layout:

* ``hlo_indexing.linear_offset_map``: logical index -> physical linear offset;
* ``hlo_indexing.tiled_coordinates_map``: logical index -> tiled coordinates;
* ``hlo_indexing.logical_index_map``: physical offset -> logical index (padding excluded);
* ``hlo_indexing.physical_shape = array<i64: ...>`` and ``hlo_indexing.padded_size`` (i64);
* ``hlo_indexing.layout``: the layout in XLA's canonical text (added for entry layouts).

Option ``rewrite-memrefs`` (default false) also gives each laid-out ``memref`` function
argument the tiled layout map as its memref layout (results are left as they are).

Example::

    func.func @f(%a: tensor<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"})
    // gains {hlo_indexing.linear_offset_map = {map = affine_map<(d0, d1) -> (...)>, ...},
    //        hlo_indexing.physical_shape = array<i64: 2, 3, 2, 2>, ...}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.op_attrs import attr_to_ints, attribute_dictionary
from hlo_indexing.errors import HloIndexingError, LimitExceededError
from hlo_indexing.layout.attributes import LAYOUT_ATTRIBUTE
from hlo_indexing.layout.lowering import linear_offset_map, logical_index_map, memref_type_text, tiled_coordinates_map
from hlo_indexing.layout.tiling import plan
from hlo_indexing.layout.types import COMBINE, INT64_MAX, Layout, Shape
from hlo_indexing.limits import MAX_DIMENSION_INDEX
from hlo_indexing.maps.attributes import indexing_map_to_attribute
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.selection import func_field, selection

ENTRY_PARAMETER_LAYOUTS = "mhlo.xla_entry_computation_parameter_layouts"
ENTRY_PARAMETER_TILES = "mhlo.xla_entry_computation_parameter_tiles"
ENTRY_RESULT_LAYOUT = "mhlo.xla_entry_computation_result_layout"
ENTRY_RESULT_TILES = "mhlo.xla_entry_computation_result_tiles"


@dataclass(frozen=True)
class LowerTiledLayouts(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-lower-tiled-layouts"
    description: ClassVar[str] = "Attach the affine maps of XLA tiled layouts (hlo_indexing.layout, entry layouts)"

    rewrite_memrefs: bool = field(
        default=False, metadata={"help": "give laid-out memref function arguments the tiled layout map"}
    )
    func: str = func_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Lower the tiled layouts of every function (see the module docstring); a malformed
        layout gets an error diagnostic; ``func``: only the functions and ops it selects."""
        chosen = selection(module, self.func, diagnostics)
        if chosen is None:
            return
        entry = _entry_layouts(module, diagnostics)
        operations: list[ir.Operation] = []

        def collect(op: ir.Operation) -> ir.WalkResult:
            operations.append(op.operation)
            return ir.WalkResult.ADVANCE

        module.walk(collect)
        for op in operations:
            if not chosen.contains(op):
                continue
            if op.name == "func.func":
                self._lower_function(op, entry if _symbol_name(op) == "main" else ({}, {}), diagnostics)
            if LAYOUT_ATTRIBUTE in op.attributes and op.name != "func.func":
                self._lower_op(op, diagnostics)

    # -- ops

    def _lower_op(self, op: "ir.Operation", diagnostics: Diagnostics) -> None:
        layout_attr = op.attributes[LAYOUT_ATTRIBUTE]
        if not isinstance(layout_attr, ir.ArrayAttr):
            if len(op.results) != 1:
                diagnostics.error(op.location, f"'{LAYOUT_ATTRIBUTE}' on '{op.name}', which has {len(op.results)} results, "
                                               "must be an array of one layout per result")
                return
            attributes = _lowered(layout_attr, op.results[0].type, op.location, diagnostics, "result")
            for name, value in (attributes or {}).items():
                op.attributes[name] = value
            return
        layouts = list(ir.ArrayAttr(layout_attr))
        if len(layouts) != len(op.results):
            diagnostics.error(op.location, f"'{LAYOUT_ATTRIBUTE}' has {len(layouts)} layouts, '{op.name}' has "
                                           f"{len(op.results)} results")
            return
        found = [_lowered(layout, result.type, op.location, diagnostics, f"result #{i}")
                 for i, (layout, result) in enumerate(zip(layouts, op.results))]
        per_result = [attributes for attributes in found if attributes is not None]
        if not per_result or len(per_result) != len(found):
            return
        for name in per_result[0]:
            op.attributes[name] = ir.ArrayAttr.get([attributes[name] for attributes in per_result], op.context)

    # -- functions

    def _lower_function(self, func: "ir.Operation", entry: tuple[dict[int, Layout], dict[int, Layout]], diagnostics: Diagnostics) -> None:
        function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        for kind, types, from_entry in (("arg_attrs", function_type.inputs, entry[0]), ("res_attrs", function_type.results, entry[1])):
            dictionaries = _argument_dictionaries(func, kind, len(types))
            changed = False
            for i, value_type in enumerate(types):
                attributes = dictionaries[i]
                layout_attr = attributes.get(LAYOUT_ATTRIBUTE)
                if layout_attr is None and i in from_entry:
                    layout_attr = ir.StringAttr.get(str(from_entry[i]), func.context)
                    attributes[LAYOUT_ATTRIBUTE] = layout_attr
                if layout_attr is None:
                    continue
                what = f"{'argument' if kind == 'arg_attrs' else 'result'} #{i}"
                lowered = _lowered(layout_attr, value_type, func.location, diagnostics, what)
                if lowered is None:
                    continue
                attributes.update(lowered)
                changed = True
                if self.rewrite_memrefs and kind == "arg_attrs" and isinstance(value_type, ir.MemRefType):
                    _rewrite_argument_type(func, i, layout_attr)
            if changed:
                func.attributes[kind] = ir.ArrayAttr.get(
                    [ir.DictAttr.get(d, context=func.context) for d in dictionaries], context=func.context
                )


def _symbol_name(op: "ir.Operation") -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else ""


def _argument_dictionaries(func: "ir.Operation", kind: str, count: int) -> list[dict[str, "ir.Attribute"]]:
    if kind not in func.attributes:
        return [{} for _ in range(count)]
    array = ir.ArrayAttr(func.attributes[kind])
    result = []
    for item in array:
        dictionary = ir.DictAttr(item)
        result.append(attribute_dictionary(dictionary))
    return result


def _parse_layout(attribute: "ir.Attribute", dims: tuple[int, ...]) -> Layout:
    if not isinstance(attribute, ir.StringAttr):
        raise HloIndexingError(f"'{LAYOUT_ATTRIBUTE}' must be a string such as \"{{1,0:T(8,128)}}\", got {attribute}")
    text = ir.StringAttr(attribute).value
    if text.strip().startswith("{"):
        layout = Layout.parse(text)
    else:
        shape = Shape.parse(text)
        if shape.dims != dims:
            raise HloIndexingError(f"layout shape '{text}' has dims {list(shape.dims)}, the value has {list(dims)}")
        layout = shape.layout
    if layout.rank != len(dims):
        raise HloIndexingError(f"layout '{text}' is for rank {layout.rank}, the value has rank {len(dims)}")
    return layout


def _static_dims(value_type: "ir.Type") -> tuple[int, ...] | None:
    if not (isinstance(value_type, ir.RankedTensorType) or isinstance(value_type, ir.MemRefType)):
        return None
    shaped = ir.ShapedType(value_type)
    if not shaped.has_static_shape:
        return None
    return tuple(shaped.shape)


def _lowered(
    layout_attr: "ir.Attribute", value_type: "ir.Type", location: "ir.Location", diagnostics: Diagnostics, what: str
) -> dict[str, "ir.Attribute"] | None:
    """The attributes describing the lowered layout of a value, or None after an error."""
    dims = _static_dims(value_type)
    if dims is None:
        diagnostics.error(location, f"{what}: a tiled layout needs a statically shaped tensor or memref, got {value_type}")
        return None
    try:
        layout = _parse_layout(layout_attr, dims)
        p = plan(dims, layout)
        if p.padded_size > INT64_MAX:
            raise HloIndexingError(f"padded size {p.padded_size} of layout {layout} overflows int64")
    except HloIndexingError as exc:
        # the attribute's text lets the driver point at the column inside it (attributes have no location)
        text = ir.StringAttr(layout_attr).value if isinstance(layout_attr, ir.StringAttr) else str(layout_attr)
        diagnostics.error(location, f"{what}: {exc.message} (in {LAYOUT_ATTRIBUTE} = {json.dumps(text)})")
        return None
    context = value_type.context
    maps = {
        "hlo_indexing.linear_offset_map": linear_offset_map(dims, layout, context),
        "hlo_indexing.tiled_coordinates_map": tiled_coordinates_map(dims, layout, context),
        "hlo_indexing.logical_index_map": logical_index_map(dims, layout, context),
    }
    attributes = {name: indexing_map_to_attribute(m, context) for name, m in maps.items()}
    attributes["hlo_indexing.physical_shape"] = ir.DenseI64ArrayAttr.get(list(p.tiled_shape), context)
    attributes["hlo_indexing.padded_size"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64, context), p.padded_size)
    return attributes


def _rewrite_argument_type(func: "ir.Operation", index: int, layout_attr: "ir.Attribute") -> None:
    """Give memref argument ``index`` of ``func`` the tiled layout map (type and block
    argument both)."""
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    memref = ir.MemRefType(function_type.inputs[index])
    dims = tuple(memref.shape)
    shape = Shape("", dims, _parse_layout(layout_attr, dims))
    new_type = ir.Type.parse(memref_type_text(shape, element_type=str(memref.element_type)), func.context)
    inputs = list(function_type.inputs)
    inputs[index] = new_type
    new_function_type = ir.FunctionType.get(inputs, list(function_type.results), func.context)
    func.attributes["function_type"] = ir.TypeAttr.get(new_function_type, context=func.context)
    body = func.regions[0]
    if len(body.blocks):
        body.blocks[0].arguments[index].set_type(new_type)


# -- XLA's entry-computation layouts


def _entry_layouts(module: "ir.Operation", diagnostics: Diagnostics) -> tuple[dict[int, Layout], dict[int, Layout]]:
    """``({argument: layout}, {result: layout})`` from the module's XLA entry layouts."""
    attributes = module.attributes
    parameters: dict[int, Layout] = {}
    results: dict[int, Layout] = {}
    if ENTRY_PARAMETER_LAYOUTS in attributes:
        tiles = attributes[ENTRY_PARAMETER_TILES] if ENTRY_PARAMETER_TILES in attributes else None
        _collect(attributes[ENTRY_PARAMETER_LAYOUTS], tiles, parameters, "parameter", module.location, diagnostics)
    if ENTRY_RESULT_LAYOUT in attributes:
        layout = attributes[ENTRY_RESULT_LAYOUT]
        tiles = attributes[ENTRY_RESULT_TILES] if ENTRY_RESULT_TILES in attributes else None
        if isinstance(layout, ir.ArrayAttr):
            _collect(layout, tiles, results, "result", module.location, diagnostics)
        else:  # a single result: the tiles attribute is that result's list of tiles
            single = ir.ArrayAttr.get([layout], context=module.context)
            wrapped = None if tiles is None else ir.ArrayAttr.get([tiles], context=module.context)
            _collect(single, wrapped, results, "result", module.location, diagnostics)
    return parameters, results


def _collect(
    layouts: "ir.Attribute",
    tiles: "ir.Attribute | None",
    into: dict[int, Layout],
    what: str,
    location: "ir.Location",
    diagnostics: Diagnostics,
) -> None:
    if not isinstance(layouts, ir.ArrayAttr):
        diagnostics.error(location, f"XLA entry {what} layouts must be an array, got {layouts}")
        return
    tile_lists = list(ir.ArrayAttr(tiles)) if tiles is not None and isinstance(tiles, ir.ArrayAttr) else []
    for i, entry in enumerate(ir.ArrayAttr(layouts)):
        if isinstance(entry, ir.ArrayAttr):
            diagnostics.warning(location, f"XLA entry {what} #{i} is a tuple: its layout is not lowered")
            continue
        try:
            minor_to_major = _integers(entry)
            entry_tiles = tuple(
                tuple(COMBINE if t in (COMBINE, -(2**63)) else t for t in _integers(tile))
                for tile in (ir.ArrayAttr(tile_lists[i]) if i < len(tile_lists) else [])
            )
            into[i] = Layout(tuple(minor_to_major), entry_tiles)
        except (TypeError, ValueError, LimitExceededError) as exc:
            diagnostics.error(location, f"XLA entry {what} #{i}: {exc}")


def _integers(attribute: "ir.Attribute") -> list[int]:
    """The integers of a ``dense<...>`` or ``array<i64: ...>`` attribute: a layout or a
    tile, one entry per dimension, so at most ``limits.MAX_DIMENSION_INDEX + 1`` of them
    (else :class:`LimitExceededError`, before reading them)."""
    if isinstance(attribute, (ir.DenseIntElementsAttr, ir.DenseI64ArrayAttr)):
        count = len(attribute)
        if count > MAX_DIMENSION_INDEX + 1:
            raise LimitExceededError(
                f"{count} entries, more dimensions than the limit of {MAX_DIMENSION_INDEX + 1} (limits.MAX_DIMENSION_INDEX)",
                limit="MAX_DIMENSION_INDEX",
                value=count,
            )
        return list(attr_to_ints(attribute))
    raise TypeError(f"expected dense integers, got {attribute}")
