"""Read op attributes the same way for StableHLO and MHLO.

The two dialects name most attributes alike but encode them differently: StableHLO uses
``array<i64: ...>`` (``DenseI64ArrayAttr``) and ``array<i1: ...>`` where MHLO uses
``dense<...> : tensor<Nxi64>`` (possibly a splat) and ``dense<...> : tensor<Nxi1>``;
structured attributes (``#stablehlo.dot<...>`` vs ``#mhlo.dot<...>``) have the same
fields under both dialects' attribute classes. The functions here turn every encoding
into plain Python values, so that each op's indexing rule is written once.

Example::

    op_kind(op)                       # "broadcast_in_dim" for stablehlo. and mhlo.
    int_array(op, "broadcast_dimensions")   # (1,) from array<i64: 1> or dense<1>
    dot_dimensions(op).lhs_contracting      # (2,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hlo_indexing.dialect_glue.bindings import OpLike, ir, mhlo, stablehlo
from hlo_indexing.dialect_glue.parsing import located
from hlo_indexing.errors import InvalidAttributeError, LimitExceededError, UnsupportedError
from hlo_indexing.limits import MAX_ATTRIBUTE_ELEMENTS

#: Dialects whose ops share one indexing rule per op kind.
HLO_DIALECTS = ("stablehlo", "mhlo", "chlo")


def op_kind(op: OpLike) -> tuple[str, str]:
    """``(dialect, kind)`` of an op, e.g. ``("mhlo", "add")`` for ``mhlo.add``."""
    name = op.operation.name if hasattr(op, "operation") else op.name
    dialect, _, kind = name.partition(".")
    return dialect, kind


def _attribute(op: OpLike, name: str) -> ir.Attribute | None:
    attributes = op.operation.attributes if hasattr(op, "operation") else op.attributes
    return attributes[name] if name in attributes else None


def has_attr(op: OpLike, name: str) -> bool:
    """Whether ``op`` (an ``OpView`` or ``Operation``) carries the attribute ``name``."""
    return _attribute(op, name) is not None


def attr_to_ints(attr: ir.Attribute) -> tuple[int, ...]:
    """The integers of ``array<i64|i32|i1: ...>``, ``dense<...> : tensor<...>`` (splats
    expanded, row-major for 2-D), an ``ArrayAttr`` of integers or a single ``IntegerAttr``."""
    # the bindings hand out attributes already downcast to their concrete class
    if isinstance(attr, (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseBoolArrayAttr, ir.DenseIntElementsAttr)):
        count = len(attr)  # a splat of 2**31 elements is one value in the text
        if count > MAX_ATTRIBUTE_ELEMENTS:
            raise LimitExceededError(
                f"an integer array attribute of {count} elements exceeds the limit of {MAX_ATTRIBUTE_ELEMENTS} "
                "(limits.MAX_ATTRIBUTE_ELEMENTS)",
                limit="MAX_ATTRIBUTE_ELEMENTS",
                value=count,
            )
        return tuple(int(v) for v in attr)  # type: ignore[union-attr]  # iterable (__len__/__getitem__); the stubs lack __iter__
    if isinstance(attr, ir.ArrayAttr):
        return tuple(v for item in attr for v in attr_to_ints(item))
    if isinstance(attr, ir.BoolAttr):
        return (int(attr.value),)
    if isinstance(attr, ir.IntegerAttr):
        return (attr.value,)
    raise UnsupportedError(f"expected an integer array attribute, got {attr}")


def int_array(op: OpLike, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Attribute ``name`` as a tuple of ints; ``default`` when absent (error if None)."""
    attr = _attribute(op, name)
    if attr is None:
        if default is None:
            raise UnsupportedError(f"{op.operation.name}: missing attribute '{name}'")
        return default
    return attr_to_ints(attr)


def int_attr(op: OpLike, name: str, default: int | None = None) -> int:
    """A scalar integer attribute (``dimension = 1 : i64``)."""
    values = int_array(op, name, None if default is None else (default,))
    return values[0]


def sized_int_array(op: OpLike, name: str, size: int, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """:func:`int_array` with exactly ``size`` entries, else :class:`InvalidAttributeError`
    naming the op and the attribute, at the op (the verifier accepts e.g. an empty
    ``lhs_dilate = []`` on a 2-d convolution)."""
    values = int_array(op, name, default)
    if len(values) != size:
        operation = op.operation
        raise located(InvalidAttributeError(operation.name, name, f"has {len(values)} entries, expected {size}"), operation)
    return values


def padding_pairs(op: OpLike, name: str, rank: int) -> tuple[tuple[int, int], ...]:
    """``padding = dense<[[lo, hi], ...]>`` as ``((lo, hi), ...)``; zeros when absent."""
    flat = sized_int_array(op, name, 2 * rank, (0,) * (2 * rank))
    return tuple((flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2))


def _structured(attr: Any, class_name: str) -> Any:
    for dialect in (stablehlo, mhlo):
        cls = getattr(dialect, class_name, None) if dialect is not None else None
        if cls is not None and cls.isinstance(attr):
            return cls(attr)
    raise UnsupportedError(f"cannot read {attr} as {class_name} with these bindings")


@dataclass(frozen=True)
class DotDimensions:
    """The dimension numbers of ``dot_general``: batch and contracting dimensions of each side."""
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]


def dot_dimensions(op: OpLike, lhs_rank: int) -> DotDimensions:
    """Dimension numbers of ``dot_general``; for plain ``dot`` (no attribute) the
    contraction of the lhs's last dimension with the rhs's first."""
    attr = _attribute(op, "dot_dimension_numbers")
    if attr is None:
        return DotDimensions((), (), (lhs_rank - 1,), (0,))
    dn = _structured(attr, "DotDimensionNumbers")
    return DotDimensions(
        tuple(dn.lhs_batching_dimensions),
        tuple(dn.rhs_batching_dimensions),
        tuple(dn.lhs_contracting_dimensions),
        tuple(dn.rhs_contracting_dimensions),
    )


@dataclass(frozen=True)
class ConvDimensions:
    """The dimension numbers of ``convolution``: the batch, feature and spatial dimensions of
    the input, kernel and output."""
    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]


def conv_dimensions(op: OpLike) -> ConvDimensions:
    """The :class:`ConvDimensions` of a convolution op."""
    dn = _structured(_attribute(op, "dimension_numbers"), "ConvDimensionNumbers")
    return ConvDimensions(
        dn.input_batch_dimension,
        dn.input_feature_dimension,
        tuple(dn.input_spatial_dimensions),
        dn.kernel_input_feature_dimension,
        dn.kernel_output_feature_dimension,
        tuple(dn.kernel_spatial_dimensions),
        dn.output_batch_dimension,
        dn.output_feature_dimension,
        tuple(dn.output_spatial_dimensions),
    )


@dataclass(frozen=True)
class Window:
    """A window over ``rank`` dimensions (reduce_window, select_and_scatter, convolution
    spatial dimensions); every field has one entry per dimension."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    base_dilations: tuple[int, ...]
    window_dilations: tuple[int, ...]
    reversal: tuple[bool, ...]


def reduce_window(op: OpLike, rank: int) -> Window:
    """The window of ``reduce_window`` / ``select_and_scatter`` (defaults filled in)."""
    ones = (1,) * rank
    return Window(
        sized_int_array(op, "window_dimensions", rank),
        sized_int_array(op, "window_strides", rank, ones),
        padding_pairs(op, "padding", rank),
        sized_int_array(op, "base_dilations", rank, ones),
        sized_int_array(op, "window_dilations", rank, ones),
        (False,) * rank,
    )


def conv_window(op: OpLike, kernel_sizes: tuple[int, ...]) -> Window:
    """The window of a convolution; ``kernel_sizes`` are the kernel's spatial sizes."""
    n = len(kernel_sizes)
    ones = (1,) * n
    return Window(
        kernel_sizes,
        sized_int_array(op, "window_strides", n, ones),
        padding_pairs(op, "padding", n),
        sized_int_array(op, "lhs_dilation", n, ones),
        sized_int_array(op, "rhs_dilation", n, ones),
        tuple(bool(v) for v in sized_int_array(op, "window_reversal", n, (0,) * n)),
    )


@dataclass(frozen=True)
class GatherDimensions:
    """The dimension numbers of ``gather`` (StableHLO's ``GatherDimensionNumbers``)."""
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    start_indices_batching_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int


def gather_dimensions(op: OpLike) -> GatherDimensions:
    """The :class:`GatherDimensions` of a gather op (batching dimensions empty when the dialect
    has none)."""
    dn = _structured(_attribute(op, "dimension_numbers"), "GatherDimensionNumbers")
    return GatherDimensions(
        tuple(dn.offset_dims),
        tuple(dn.collapsed_slice_dims),
        tuple(getattr(dn, "operand_batching_dims", ())),
        tuple(getattr(dn, "start_indices_batching_dims", ())),
        tuple(dn.start_index_map),
        dn.index_vector_dim,
    )


@dataclass(frozen=True)
class ScatterDimensions:
    """The dimension numbers of ``scatter`` (StableHLO's ``ScatterDimensionNumbers``)."""
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int


def scatter_dimensions(op: OpLike) -> ScatterDimensions:
    """The :class:`ScatterDimensions` of a scatter op (batching dimensions empty when the
    dialect has none)."""
    dn = _structured(_attribute(op, "scatter_dimension_numbers"), "ScatterDimensionNumbers")
    return ScatterDimensions(
        tuple(dn.update_window_dims),
        tuple(dn.inserted_window_dims),
        tuple(getattr(dn, "input_batching_dims", ())),
        tuple(getattr(dn, "scatter_indices_batching_dims", ())),
        tuple(dn.scattered_dims_to_operand_dims),
        dn.index_vector_dim,
    )


def named_attributes(attributes: ir.OpAttributeMap | ir.DictAttr) -> list[tuple[str, ir.Attribute | str]]:
    """``(name, attribute)`` of an op's attributes or a ``DictAttr``, in order. Never
    touches ``NamedAttribute.attr``: for an attribute the bindings cannot downcast
    (``dense<(1.0,2.0)> : tensor<complex<f32>>``) it throws inside C++ and aborts the
    process. Such an attribute comes as its printed text (a ``str``)."""
    entries: list[tuple[str, ir.Attribute | str]] = []
    for i in range(len(attributes)):
        named = attributes[i]
        name = named.name
        try:
            entries.append((name, attributes[name]))
        except TypeError:  # complex dense elements: no Python class to downcast to
            entries.append((name, str(named)))
    return entries


def attribute_dictionary(dictionary: ir.DictAttr) -> dict[str, ir.Attribute]:
    """The entries of a ``DictAttr`` (e.g. one of ``arg_attrs``) to rebuild it;
    :class:`UnsupportedError` if one cannot be read (see :func:`named_attributes`)."""
    entries: dict[str, ir.Attribute] = {}
    for name, value in named_attributes(dictionary):
        if isinstance(value, str):
            raise UnsupportedError(f"attribute '{name}' cannot be read through the MLIR Python bindings: {value}")
        entries[name] = value
    return entries


def attribute_key(op: OpLike) -> tuple:
    """All attributes of ``op`` as a hashable ``((name, attribute), ...)`` (for cache
    keys; attributes are uniqued per context, so equal attributes hash equal), in the
    op's order (MLIR keeps an op's attribute dictionary sorted by name); the analysis's
    own results (``hlo_indexing.*`` other than ``hlo_indexing.layout``) are left out so
    that annotating an op does not change its key."""
    attributes = op.operation.attributes
    items: Sequence[tuple[str, ir.Attribute | str]]
    try:
        items = attributes.items()
    except TypeError:  # an attribute the bindings cannot downcast (complex elements)
        items = named_attributes(attributes)
    for name, _ in items:
        if name.startswith("hlo_indexing."):
            return tuple([item for item in items if not item[0].startswith("hlo_indexing.") or item[0] == "hlo_indexing.layout"])
    return tuple(items)
