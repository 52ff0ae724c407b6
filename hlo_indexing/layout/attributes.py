"""Layouts written in a program: the ``hlo_indexing.layout`` attribute (XLA's layout text)
on ``func.func`` arguments and results (``arg_attrs``/``res_attrs``) and on ops (one
per result, as the HLO importer writes them), read for the analyses that need a value's
layout (coalescing, tiling footprints).

Example::

    layouts, result_layouts = declared_layouts(func)   # e.g. (["{0,1}", None], [None])
    as_layout(layouts[0], 2)                            # Layout((0, 1))
"""

from __future__ import annotations

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
    if isinstance(attribute, ir.ArrayAttr):
        attribute = ir.ArrayAttr(attribute)[index]
    return ir.StringAttr(attribute).value if isinstance(attribute, ir.StringAttr) else None


def _value_attr(func: ir.Operation, key: str, index: int) -> str | None:
    if key not in func.attributes:
        return None
    entry = ir.DictAttr(ir.ArrayAttr(func.attributes[key])[index])
    return _layout_attr(entry[LAYOUT_ATTRIBUTE]) if LAYOUT_ATTRIBUTE in entry else None


def layout_of_value(value: SsaValue) -> str | None:
    """The ``hlo_indexing.layout`` of a func argument or an op result, if written (for an
    argument of an ``mhlo.fusion`` region: its operand's)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner.operation
        if parent.name == "func.func":
            return _value_attr(parent, "arg_attrs", ir.BlockArgument(value).arg_number)
        if parent.name == "mhlo.fusion":
            return layout_of_value(parent.operands[ir.BlockArgument(value).arg_number])
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    try:
        attribute = op.attributes[LAYOUT_ATTRIBUTE]  # one read of the attributes through the bindings
    except KeyError:
        return None
    return _layout_attr(attribute, ir.OpResult(value).result_number)


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
