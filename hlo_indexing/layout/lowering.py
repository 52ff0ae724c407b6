"""Lowering a tiled layout to affine maps (``IndexingMap``s with ranges) and memref types.

Three maps, all simplified:

* :func:`linear_offset_map`: logical index -> physical linear offset (one result);
* :func:`tiled_coordinates_map`: logical index -> coordinates in the tiled shape (the
  form of an MLIR ``memref`` layout map), see :func:`memref_type`;
* :func:`logical_index_map`: physical offset -> logical index, with constraints that
  hold exactly on the offsets holding an element (padding excluded);
* :func:`coordinates_logical_map`: coordinates in the tiled shape -> logical index (the
  inverse of :func:`tiled_coordinates_map`, padding excluded likewise).

Example::

    >>> m = linear_offset_map(Shape.parse("f32[3,5]{1,0:T(2,2)}"))
    >>> m.evaluate((2, 3))
    (17,)
    >>> str(tiled_coordinates_map(Shape.parse("f32[3,5]{1,0:T(2,2)}")).affine_map)
    '(d0, d1) -> (d0 floordiv 2, d1 floordiv 2, d0 mod 2, d1 mod 2)'

The expressions are built with a value-range shortcut (``x floordiv t`` is 0 and
``x mod t`` is ``x`` when ``x < t``) and the result goes through
:meth:`IndexingMap.simplify`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.layout.tiling import (
    TilingPlan,
    linear_from_coordinates,
    logical_from_offset,
    plan,
    tiled_coordinates,
)
from hlo_indexing.layout.types import Layout, Shape
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap


@dataclass(frozen=True)
class _Bounded:
    """An affine expression with a known inclusive upper bound (the lower bound is 0)."""

    expr: ir.AffineExpr
    hi: int


def _typed(expr: ir.AffineExpr) -> ir.AffineExpr:
    """``expr`` as an object of its real node class (the bindings type the result of
    ``+`` as an add even when MLIR folded it, e.g. ``0 * 128 + d0`` is ``d0``)."""
    return expr.maybe_downcast()


class _AffineArith:
    """:class:`hlo_indexing.layout.tiling.Arith` on bounded affine expressions."""

    def __init__(self, context: "ir.Context"):
        self.context = context

    def zero(self) -> _Bounded:
        return _Bounded(ax.constant(0, self.context), 0)

    def combine(self, major: _Bounded, minor: _Bounded, minor_extent: int) -> _Bounded:
        return _Bounded(_typed(major.expr * minor_extent + minor.expr), major.hi * minor_extent + minor.hi)

    def div(self, value: _Bounded, divisor: int) -> _Bounded:
        if value.hi < divisor:
            return self.zero()
        return _Bounded(_typed(ax.floordiv(value.expr, divisor)), value.hi // divisor)

    def mod(self, value: _Bounded, divisor: int) -> _Bounded:
        if value.hi < divisor:
            return value
        return _Bounded(_typed(ax.mod(value.expr, divisor)), divisor - 1)


def _plan_and_context(shape: Shape | Sequence[int], layout: Layout | None, context: "ir.Context | None") -> tuple[TilingPlan, "ir.Context"]:
    return plan(shape, layout), context or current_or_default_context()


def _logical_inputs(p: TilingPlan, context: "ir.Context") -> list[_Bounded]:
    return [_Bounded(ax.dim(i, context), d - 1) for i, d in enumerate(p.dims)]


def _forward_map(p: TilingPlan, results: list[_Bounded], context: "ir.Context") -> IndexingMap:
    if 0 in p.dims:
        return IndexingMap.known_empty(len(p.dims), 0, len(results), context)
    m = IndexingMap.from_exprs([(0, d - 1) for d in p.dims], [r.expr for r in results], context=context)
    return m.simplify()


def linear_offset_map(
    shape: Shape | Sequence[int], layout: Layout | None = None, context: "ir.Context | None" = None
) -> IndexingMap:
    """``(d0, ..., dn-1) -> (offset)`` over the logical index space."""
    p, context = _plan_and_context(shape, layout, context)
    arith = _AffineArith(context)
    coords = tiled_coordinates(p, _logical_inputs(p, context), arith)
    return _forward_map(p, [linear_from_coordinates(p, coords, arith)], context)


def tiled_coordinates_map(
    shape: Shape | Sequence[int], layout: Layout | None = None, context: "ir.Context | None" = None
) -> IndexingMap:
    """``(d0, ..., dn-1) -> (c0, ..., ck-1)``, coordinates in :func:`physical_shape`."""
    p, context = _plan_and_context(shape, layout, context)
    arith = _AffineArith(context)
    return _forward_map(p, tiled_coordinates(p, _logical_inputs(p, context), arith), context)


def logical_index_map(
    shape: Shape | Sequence[int], layout: Layout | None = None, context: "ir.Context | None" = None
) -> IndexingMap:
    """``(offset) -> (i0, ..., in-1)`` over ``offset in [0, padded_size - 1]``, with
    constraints excluding the padding slots (known empty for a zero-sized array)."""
    p, context = _plan_and_context(shape, layout, context)
    if 0 in p.dims:
        return IndexingMap.known_empty(1, 0, len(p.dims), context)
    arith = _AffineArith(context)
    offset = _Bounded(ax.dim(0, context), p.padded_size - 1)
    logical, checks = logical_from_offset(p, offset, arith)
    m = IndexingMap.from_exprs([(0, p.padded_size - 1)], [v.expr for v in logical], context=context)
    for value, extent in checks:
        if value.hi >= extent:
            m = m.add_constraint(value.expr, (0, extent - 1))
    return m.simplify()


def coordinates_logical_map(
    shape: Shape | Sequence[int], layout: Layout | None = None, context: "ir.Context | None" = None
) -> IndexingMap:
    """``(c0, ..., ck-1) -> (i0, ..., in-1)`` over the coordinates of the tiled shape
    (:func:`~hlo_indexing.layout.tiling.physical_shape`), with constraints excluding the
    padding slots: the inverse of :func:`tiled_coordinates_map` (for a layout without
    tiles, the permutation from the physical order of the dimensions back to the
    logical one). Known empty for a zero-sized array."""
    p, context = _plan_and_context(shape, layout, context)
    tiled = p.tiled_shape
    if 0 in p.dims:
        return IndexingMap.known_empty(len(tiled), 0, len(p.dims), context)
    arith = _AffineArith(context)
    coords = [_Bounded(ax.dim(i, context), n - 1) for i, n in enumerate(tiled)]
    offset = linear_from_coordinates(p, coords, arith)
    to_offset = IndexingMap.from_exprs([(0, n - 1) for n in tiled], [offset.expr], context=context)
    return compose(to_offset, logical_index_map(shape, layout, context)).simplify()


#: XLA element type -> MLIR element type (signless integers, as memrefs use them)
_MLIR_TYPES = {
    "pred": "i1", "s1": "i1", "u1": "i1", "s2": "i2", "u2": "i2", "s4": "i4", "u4": "i4",
    "s8": "i8", "u8": "i8", "s16": "i16", "u16": "i16", "s32": "i32", "u32": "i32",
    "s64": "i64", "u64": "i64", "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "c64": "complex<f32>", "c128": "complex<f64>", "tf32": "tf32",
    "f8e4m3fn": "f8E4M3FN", "f8e5m2": "f8E5M2", "f8e4m3": "f8E4M3", "f8e4m3fnuz": "f8E4M3FNUZ",
    "f8e5m2fnuz": "f8E5M2FNUZ", "f8e4m3b11fnuz": "f8E4M3B11FNUZ", "f8e3m4": "f8E3M4",
    "f8e8m0fnu": "f8E8M0FNU", "f4e2m1fn": "f4E2M1FN", "f6e2m3fn": "f6E2M3FN", "f6e3m2fn": "f6E3M2FN",
}


def mlir_element_type(dtype: str) -> str:
    """The MLIR spelling of an XLA element type (``bf16`` -> ``bf16``, ``s8`` -> ``i8``)."""
    try:
        return _MLIR_TYPES[dtype.lower()]
    except KeyError:
        raise InvalidArgumentError(f"element type '{dtype}' has no MLIR memref equivalent") from None


def _dims_text(dims: Sequence[int], element: str) -> str:
    return "x".join([*map(str, dims), element])


def memref_type_text(shape: Shape, element_type: str | None = None) -> str:
    """``memref<3x5xf32, affine_map<(d0, d1) -> (...)>>``: the logical shape with the
    tiled layout as its layout map (results index :func:`physical_shape`). An untiled
    row-major layout gives the plain memref. ``element_type`` (MLIR spelling) overrides
    the one derived from ``shape.dtype``."""
    element = element_type or mlir_element_type(shape.dtype)
    if not shape.layout.tiles and shape.layout.minor_to_major == Layout.row_major(len(shape.dims)).minor_to_major:
        return f"memref<{_dims_text(shape.dims, element)}>"
    m = tiled_coordinates_map(shape)
    if m.is_known_empty():  # zero-sized: the unsimplified map still states the layout
        p, context = _plan_and_context(shape, None, None)
        results = tiled_coordinates(p, _logical_inputs(p, context), _AffineArith(context))
        affine_map: ir.AffineMap | None = ir.AffineMap.get(len(p.dims), 0, [r.expr for r in results], context)
    else:
        affine_map = m.affine_map
    return f"memref<{_dims_text(shape.dims, element)}, affine_map<{affine_map}>>"


def physical_memref_type_text(shape: Shape) -> str:
    """``memref<2x3x2x2xf32>``: the physical (padded, tiled) buffer shape, computed here
    rather than by ``-normalize-memrefs`` (which mis-sizes constant results)."""
    return f"memref<{_dims_text(plan(shape).tiled_shape, mlir_element_type(shape.dtype))}>"


def memref_type(shape: Shape, context: "ir.Context | None" = None) -> "ir.Type":
    """:func:`memref_type_text` parsed as an ``ir.Type``."""
    return ir.Type.parse(memref_type_text(shape), context or current_or_default_context())


def physical_memref_type(shape: Shape, context: "ir.Context | None" = None) -> "ir.Type":
    """:func:`physical_memref_type_text` parsed as an ``ir.Type``."""
    return ir.Type.parse(physical_memref_type_text(shape), context or current_or_default_context())
