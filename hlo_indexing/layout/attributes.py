"""Layouts written in a program: the ``hlo_indexing.layout`` attribute (XLA's layout text)
on ``func.func`` arguments and results (``arg_attrs``/``res_attrs``) and on ops (one
per result, as the HLO importer writes them), read for the analyses that need a value's
layout (coalescing, tiling footprints).

Example::

    layouts, result_layouts = declared_layouts(func)   # e.g. (["{0,1}", None], [None])
    as_layout(layouts[0], 2)                            # Layout((0, 1))
"""

from __future__ import annotations

from typing import cast

from hlo_indexing.dialect_glue.bindings import OpLike, SsaValue, ir
from hlo_indexing.dialect_glue.call_like import block_of
from hlo_indexing.dialect_glue.hlo_import import LAYOUT_ATTRIBUTE
from hlo_indexing.errors import InvalidInputError
from hlo_indexing.layout.types import Layout

__all__ = ["LAYOUT_ATTRIBUTE", "LayoutLike", "as_layout", "declared_layouts", "layout_of_value"]

LayoutLike = Layout | str | None


def as_layout(layout: LayoutLike, rank: int) -> Layout:
    """A :class:`Layout` from a Layout, its text (``"{0,1}"``, ``"f32[2,3]{0,1}"``) or
    None (row-major)."""
    if layout is None:
        return Layout.row_major(rank)
    if isinstance(layout, str):
        layout = Layout.parse(layout)
    if layout.rank != rank:
        raise InvalidInputError(f"layout {layout} has rank {layout.rank}, the array has rank {rank}")
    return layout


def _layout_attr(attribute: ir.Attribute, index: int = 0) -> str | None:
    # The bindings hand out attributes downcast (an ArrayAttr's elements too).
    if isinstance(attribute, ir.ArrayAttr):
        attribute = attribute[index]
    return attribute.value if isinstance(attribute, ir.StringAttr) else None


def _value_attr(func: ir.Operation, key: str, index: int) -> str | None:
    attributes = func.attributes
    if key not in attributes:
        return None
    entry = ir.DictAttr(cast(ir.ArrayAttr, attributes[key])[index])
    return _layout_attr(entry[LAYOUT_ATTRIBUTE]) if LAYOUT_ATTRIBUTE in entry else None


def layout_of_value(value: SsaValue) -> str | None:
    """The ``hlo_indexing.layout`` of a func argument or an op result, if written (for an
    argument of an ``mhlo.fusion`` region: its operand's)."""
    if not isinstance(value, (ir.OpResult, ir.BlockArgument)):
        value = value.maybe_downcast()  # the bindings hand out values downcast; a plain ir.Value is not
    if isinstance(value, ir.BlockArgument):
        owner = value.owner.owner
        if owner is None:
            return None
        parent = owner.operation  # an OpView's name may be its symbol (func.func's)
        name = parent.name
        if name == "func.func":
            return _value_attr(parent, "arg_attrs", value.arg_number)
        if name == "mhlo.fusion":
            return layout_of_value(parent.operands[value.arg_number])
        return None
    result = cast("ir.OpResult[ir.Type]", value)
    try:
        attribute = result.owner.attributes[LAYOUT_ATTRIBUTE]  # one read of the attributes through the bindings
    except KeyError:
        return None
    return _layout_attr(attribute, result.result_number)


def declared_layouts(op: OpLike) -> tuple[list[str | None], list[str | None]]:
    """The layouts written on a ``func.func``'s arguments and results, or on an
    ``mhlo.fusion``'s operands (their producers or function arguments) and results."""
    operation = op.operation
    if operation.name == "mhlo.fusion":
        return [layout_of_value(v) for v in operation.operands], [layout_of_value(v) for v in operation.results]
    n_args = len(block_of(operation).arguments)
    n_results = len(block_of(operation).operations[-1].operands)
    if operation.name == "func.func":
        return (
            [_value_attr(operation, "arg_attrs", i) for i in range(n_args)],
            [_value_attr(operation, "res_attrs", i) for i in range(n_results)],
        )
    return [None] * n_args, [None] * n_results
