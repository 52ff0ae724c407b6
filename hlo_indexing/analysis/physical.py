"""Indexing maps between physical indices: per-op and fused maps composed with the
layouts of the values they map between.

A logical map goes from a logical index of one value to logical indices of another;
its physical form goes from a *physical* index of the first to the physical indices of
the second: ``physical_to_logical(from) ; map ; logical_to_physical(to)``. Two physical
index forms:

* ``"coordinates"`` (default): coordinates in the tiled shape of the layout
  (:func:`~hlo_indexing.layout.lowering.tiled_coordinates_map`). Without tiles these are
  the dimensions in physical order, major to minor, which is XLA's physical index
  (``use_physical_layout`` in its tests: for ``f32[10,20,30]{1,0,2}``, index
  ``(d2, d0, d1)``); with tiles (``{1,0:T(8,128)(2,1)}``) the tile grid coordinates
  followed by the coordinates inside each tile.
* ``"offset"``: the linear offset in the buffer, one dimension
  (:func:`~hlo_indexing.layout.lowering.linear_offset_map`).

Padding slots of a tiled layout are no element: a physical index on padding is outside
the map's domain (its constraints exclude it), and no map reads one.

Layouts come from the ``hlo_indexing.layout`` attributes (what the HLO importer writes
for every instruction, and XLA's entry layouts on the function's arguments and
results; :func:`~hlo_indexing.layout.attributes.layout_of_value`), else row-major. The
``layouts``/``result_layout(s)``/``layout`` arguments override them when given (not
None): a :class:`Layout` or its text, and in a list None for row-major. Scalars have
one physical index, the logical one.

Example::

    physical_output_to_input_indexing(exp_op)          # XLA's use_physical_layout=true
    physical_fusion_indexing(func, 0, form="offset")   # result offsets -> argument offsets
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_indexing.analysis.fused_maps import FusionIndexing
from hlo_indexing.analysis.fusion import fusion_indexing
from hlo_indexing.analysis.per_op import indexings, input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of, operand_values
from hlo_indexing.errors import InvalidArgumentError, UnsupportedError
from hlo_indexing.layout.attributes import LayoutLike, as_layout, declared_layouts, layout_of_value
from hlo_indexing.layout.lowering import coordinates_logical_map, linear_offset_map, logical_index_map, tiled_coordinates_map
from hlo_indexing.maps.algebra import compose, remove_unused_symbols
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.dispatch import followed_tuple_elements, tuple_element_shapes
from hlo_indexing.ops.rule import value_shape
from hlo_indexing.ops.result import InstructionIndexing, RuntimeSource

__all__ = [
    "FORMS",
    "logical_to_physical_map",
    "per_op_maps",
    "physical_fusion_indexing",
    "physical_indexings",
    "physical_input_to_output_indexing",
    "physical_map",
    "physical_output_to_input_indexing",
    "physical_to_logical_map",
]

#: The physical index forms (see the module docstring).
FORMS = ("coordinates", "offset")


def _check_form(form: str) -> None:
    if form not in FORMS:
        raise InvalidArgumentError(f"physical index form must be one of {', '.join(FORMS)}, got {form!r}")


def logical_to_physical_map(shape: Sequence[int], layout: LayoutLike, form: str = "coordinates", context: "ir.Context | None" = None) -> IndexingMap:
    """Logical index -> physical index of an array of ``shape`` in ``layout``."""
    _check_form(form)
    if not shape:
        return IndexingMap.identity((), context)
    resolved = as_layout(layout, len(shape))
    if form == "offset":
        return linear_offset_map(tuple(shape), resolved, context)
    return tiled_coordinates_map(tuple(shape), resolved, context)


def physical_to_logical_map(shape: Sequence[int], layout: LayoutLike, form: str = "coordinates", context: "ir.Context | None" = None) -> IndexingMap:
    """Physical index -> logical index of an array of ``shape`` in ``layout``; its domain
    excludes the padding slots."""
    _check_form(form)
    if not shape:
        return IndexingMap.identity((), context)
    resolved = as_layout(layout, len(shape))
    if form == "offset":
        return logical_index_map(tuple(shape), resolved, context)
    return coordinates_logical_map(tuple(shape), resolved, context)


def physical_map(
    m: IndexingMap,
    source: tuple[Sequence[int], LayoutLike],
    target: tuple[Sequence[int], LayoutLike],
    form: str = "coordinates",
) -> IndexingMap:
    """``m`` (logical index of ``source`` -> logical indices of ``target``, each given as
    ``(shape, layout)``) from the physical index of ``source`` to the physical indices
    of ``target``, simplified."""
    if m.is_undefined:
        return m
    inward = physical_to_logical_map(source[0], source[1], form, m.context)
    outward = logical_to_physical_map(target[0], target[1], form, m.context)
    return remove_unused_symbols(compose(compose(inward, m), outward).simplify())


def _shape(value: ir.Value, what: str) -> tuple[int, ...]:
    shape = value_shape(value.type)
    if shape is None:
        raise UnsupportedError(_not_an_array(value, what))
    return shape


def _not_an_array(value: ir.Value, what: str) -> str:
    return f"physical maps need statically shaped tensors; {what} is a {value.type}"


def _physical_indexing(
    indexing: InstructionIndexing,
    source: tuple[Sequence[int] | None, LayoutLike],
    targets: Sequence[tuple[Sequence[int] | None, LayoutLike]],
    form: str,
    named: Sequence[tuple[ir.Value, str]],
) -> InstructionIndexing:
    """Every map of ``indexing`` (from ``source`` to ``targets[k]``) in physical form; the
    maps of runtime variables and replicas start at the physical index of ``source``.
    A source or target that is not an array (a tuple of a custom call, read by
    ``get_tuple_element``) has no physical index: its maps are unknown, saying which
    value of ``named`` (the source's, then each target's, with their names) it is."""
    if source[0] is None:
        unknown = IndexingMap.undefined(_not_an_array(*named[0]))
        return InstructionIndexing(tuple(frozenset({unknown}) if found else frozenset() for found in indexing.maps),
                                   direction=indexing.direction, notes=indexing.notes)
    known_source = (source[0], source[1])
    inward = physical_to_logical_map(source[0], source[1], form)
    maps = tuple(
        frozenset(physical_map(m, known_source, (target[0], target[1]), form) for m in found) if target[0] is not None
        else frozenset({IndexingMap.undefined(_not_an_array(*name))}) if found else frozenset()
        for found, target, name in zip(indexing.maps, targets, named[1:], strict=True)
    )
    runtime = tuple(
        tuple(RuntimeSource(s.operand, compose(inward, s.index_map).simplify(), s.source) for s in sources)
        for sources in indexing.runtime
    )
    replicas = tuple(None if r is None else compose(inward, r).simplify() for r in indexing.replica_maps)
    return InstructionIndexing(maps, runtime, replicas, indexing.direction, indexing.notes)


def physical_output_to_input_indexing(
    op: OpLike,
    result_index: int = 0,
    *,
    layouts: Sequence[LayoutLike] | None = None,
    result_layout: LayoutLike = None,
    form: str = "coordinates",
) -> InstructionIndexing:
    """:func:`hlo_indexing.output_to_input_indexing` from the physical index of result
    ``result_index`` to the physical indices of each operand (XLA's
    ``use_physical_layout=true``). ``layouts`` (per operand) and ``result_layout``
    override the layouts written on the values."""
    _check_form(form)
    results = op.operation.results
    elements = tuple_element_shapes(op) if followed_tuple_elements(op) else None
    count = len(elements) if elements is not None else len(results)
    if not 0 <= result_index < count:
        raise InvalidArgumentError(f"{op.operation.name} has no result {result_index}")
    result = results[0] if elements is not None else results[result_index]  # a tuple element: the tuple, no physical index
    operands = operand_values(op)
    layouts = [layout_of_value(v) for v in operands] if layouts is None else layouts
    source = (value_shape(result.type), result_layout if result_layout is not None else layout_of_value(result))
    targets = [(value_shape(v.type), layout) for v, layout in zip(operands, layouts, strict=True)]
    what = f"result #{result_index}" if elements is None else f"the tuple result holding element {result_index}"
    named = [(result, what)] + [(v, f"operand #{k}") for k, v in enumerate(operands)]
    logical = output_to_input_indexing(op, result_index)
    return _physical_indexing(logical, source, targets, form, named)


def physical_input_to_output_indexing(
    op: OpLike,
    operand_index: int = 0,
    *,
    layout: LayoutLike = None,
    result_layouts: Sequence[LayoutLike] | None = None,
    form: str = "coordinates",
) -> InstructionIndexing:
    """:func:`hlo_indexing.input_to_output_indexing` from the physical index of operand
    ``operand_index`` to the physical indices of each result."""
    _check_form(form)
    operands = operand_values(op)
    if not 0 <= operand_index < len(operands):
        raise InvalidArgumentError(f"{op.operation.name} has no operand {operand_index}")
    operand = operands[operand_index]
    results = list(op.operation.results)
    result_layouts = [layout_of_value(v) for v in results] if result_layouts is None else result_layouts
    source = (value_shape(operand.type), layout if layout is not None else layout_of_value(operand))
    targets = [(value_shape(v.type), r) for v, r in zip(results, result_layouts, strict=True)]
    named = [(operand, f"operand #{operand_index}")] + [(v, f"result #{k}") for k, v in enumerate(results)]
    logical = input_to_output_indexing(op, operand_index)
    if len(logical.maps) != len(targets):  # one per element of a custom call's tuple result: no physical index
        targets, named = [(None, None)] * len(logical.maps), named[:1] + named[1:2] * len(logical.maps)
    return _physical_indexing(logical, source, targets, form, named)


def physical_fusion_indexing(
    region_or_func: ir.Region | OpLike,
    result_index: int = 0,
    *,
    layouts: Sequence[LayoutLike] | None = None,
    result_layout: LayoutLike = None,
    form: str = "coordinates",
    fused: FusionIndexing | None = None,
) -> FusionIndexing:
    """:func:`hlo_indexing.fusion_indexing` of result ``result_index`` from its physical
    index to the physical indices of each block argument. Layouts default to those
    written on the function's arguments and results (the block's values, or the
    ``mhlo.fusion``'s operands and results); ``fused`` passes the logical maps when
    already computed."""
    _check_form(form)
    block = block_of(region_or_func)
    root = list(block.operations)[-1].operands[result_index]
    arguments = list(block.arguments)
    if layouts is None:
        layouts = [layout_of_value(a) for a in arguments]
    if result_layout is None:
        result_layout = _result_layout(region_or_func, result_index)
    logical = fused if fused is not None else fusion_indexing(region_or_func, result_index)
    source = (_shape(root, f"result #{result_index}"), result_layout)
    maps = tuple(
        frozenset(physical_map(m, source, (value_shape(a.type) or (), layout), form) for m in found)
        for found, a, layout in zip(logical.maps, arguments, layouts, strict=True)
    )
    return FusionIndexing(maps, logical.over_approximated, logical.direction, logical.elements)


def _result_layout(region_or_func: ir.Region | OpLike, index: int) -> str | None:
    """The layout written for result ``index`` (on a ``func.func``'s result attributes or
    an ``mhlo.fusion``'s result), else the returned value's."""
    operation = getattr(region_or_func, "operation", None)
    if operation is not None and operation.name in ("func.func", "mhlo.fusion"):
        declared = declared_layouts(operation)[1][index]
        if declared is not None:
            return declared
    return layout_of_value(list(block_of(region_or_func).operations)[-1].operands[index])


def physical_indexings(op: OpLike, direction: str, form: str = "coordinates") -> list[InstructionIndexing]:
    """The physical maps of every result (``direction="output-to-input"``) or every
    operand (``"input-to-output"``) of ``op``, as the per-op passes print them."""
    if direction == "output-to-input":
        elements = tuple_element_shapes(op) if followed_tuple_elements(op) else None  # per element, as the logical maps
        count = len(elements) if elements is not None else len(op.operation.results)
        return [physical_output_to_input_indexing(op, r, form=form) for r in range(count)]
    return [physical_input_to_output_indexing(op, k, form=form) for k in range(len(operand_values(op)))]


def per_op_maps(op: ir.Operation, direction: str, simplify: bool = True, physical: str = "none") -> list[InstructionIndexing]:
    """The maps of ``op`` the per-op passes' options ask for, one indexing per result
    (output-to-input) or operand (input-to-output): logical ones (simplified unless
    ``simplify=False``) for ``physical="none"``, else between physical indices of that
    form (:func:`physical_indexings`, always simplified)."""
    if physical != "none":
        return physical_indexings(op, direction, physical)
    return indexings(op, direction, simplify)
