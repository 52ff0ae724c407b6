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

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from hlo_indexing.dialect_glue.bindings import OpLike, ir, mhlo, stablehlo
from hlo_indexing.dialect_glue.hlo_import import LAYOUT_ATTRIBUTE, dropped_attribute
from hlo_indexing.dialect_glue.hlo_text import DOT_DIMS_ATTRIBUTE
from hlo_indexing.dialect_glue.locations import located
from hlo_indexing.errors import InvalidAttributeError, LimitExceededError, UnsupportedError
from hlo_indexing.limits import MAX_ATTRIBUTE_ELEMENTS

Shape = tuple[int, ...]

#: Dialects whose ops share one indexing rule per op kind.
HLO_DIALECTS = ("stablehlo", "mhlo", "chlo")


def op_kind(op: OpLike) -> tuple[str, str]:
    """``(dialect, kind)`` of an op, e.g. ``("mhlo", "add")`` for ``mhlo.add``."""
    name = op.operation.name if hasattr(op, "operation") else op.name
    dialect, _, kind = name.partition(".")
    return dialect, kind


#: Names of the attributes read while :func:`tracking_reads` is active (per thread and
#: task), so that an error a rule trips over can name the attributes it read.
_reads: ContextVar[list[str] | None] = ContextVar("hlo_indexing_attribute_reads", default=None)


@contextmanager
def tracking_reads() -> Iterator[list[str]]:
    """The names of the attributes read through this module inside the block, in order."""
    reads: list[str] = []
    token = _reads.set(reads)
    try:
        yield reads
    finally:
        _reads.reset(token)


def _operation(op: OpLike) -> ir.Operation:
    return cast(ir.Operation, op.operation if hasattr(op, "operation") else op)


def _attribute(op: OpLike, name: str) -> ir.Attribute | None:
    reads = _reads.get()
    if reads is not None:
        reads.append(name)
    attributes = _operation(op).attributes
    return attributes[name] if name in attributes else None


def invalid(op: OpLike, name: str, problem: str) -> InvalidAttributeError:
    """An :class:`InvalidAttributeError` naming ``op`` and its attribute ``name``, located at the op."""
    operation = _operation(op)
    error = located(InvalidAttributeError(operation.name, name, problem), operation)
    assert isinstance(error, InvalidAttributeError)
    return error


def has_attr(op: OpLike, name: str) -> bool:
    """Whether ``op`` (an ``OpView`` or ``Operation``) carries the attribute ``name``."""
    return name in _operation(op).attributes


def attr_to_ints(attr: ir.Attribute) -> tuple[int, ...]:
    """The integers of ``array<i64|i32|i1: ...>``, ``dense<...> : tensor<...>`` (splats
    expanded, row-major for 2-D), an ``ArrayAttr`` of integers or a single ``IntegerAttr``;
    :class:`UnsupportedError` for another attribute, :class:`LimitExceededError` past
    ``limits.MAX_ATTRIBUTE_ELEMENTS`` integers."""
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
        if len(attr) > MAX_ATTRIBUTE_ELEMENTS:
            raise LimitExceededError(
                f"an array attribute of {len(attr)} elements exceeds the limit of {MAX_ATTRIBUTE_ELEMENTS} "
                "(limits.MAX_ATTRIBUTE_ELEMENTS)",
                limit="MAX_ATTRIBUTE_ELEMENTS",
                value=len(attr),
            )
        return tuple(v for item in attr for v in attr_to_ints(item))
    if isinstance(attr, ir.BoolAttr):
        return (int(attr.value),)
    if isinstance(attr, ir.IntegerAttr):
        return (attr.value,)
    raise UnsupportedError(f"expected an integer array attribute, got {attr}")


def int_array(op: OpLike, name: str, default: tuple[int, ...] | None = None, *, minimum: int | None = None) -> tuple[int, ...]:
    """Attribute ``name`` as a tuple of ints; ``default`` when absent. Every entry at least
    ``minimum`` when given. :class:`InvalidAttributeError` naming the op and the attribute
    when it is missing (and has no default), not integers, or has an entry below ``minimum``."""
    attr = _attribute(op, name)
    if attr is None:
        if default is None:
            raise invalid(op, name, "is missing")
        return default
    try:
        values = attr_to_ints(attr)
    except UnsupportedError:
        raise invalid(op, name, f"is not a list of integers: {_short(attr)}") from None
    except LimitExceededError as exc:
        exc.message = f"{_operation(op).name}: attribute '{name}': {exc.message}"
        raise located(exc, _operation(op)) from None
    if minimum is not None:
        for value in values:
            if value < minimum:
                raise invalid(op, name, f"has entry {value}, expected at least {minimum}: {list(values)}")
    return values


def _short(attr: object, limit: int = 120) -> str:
    text = str(attr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def int_attr(op: OpLike, name: str, default: int | None = None, *, minimum: int | None = None) -> int:
    """A scalar integer attribute (``dimension = 1 : i64``); :class:`InvalidAttributeError`
    when it is not exactly one integer (or is below ``minimum``)."""
    values = int_array(op, name, None if default is None else (default,), minimum=minimum)
    if len(values) != 1:
        raise invalid(op, name, f"is not a single integer: {list(values)}")
    return values[0]


def dimension_attr(op: OpLike, name: str, rank: int, default: int | None = None, *, negative: bool = False) -> int:
    """A scalar dimension number in ``[0, rank)`` (``[-rank, rank)`` when ``negative``
    counts from the end; returned as given), else :class:`InvalidAttributeError`."""
    value = int_attr(op, name, default)
    low = -rank if negative else 0
    if not low <= value < rank:
        raise invalid(op, name, f"is dimension {value}, outside [{low}, {rank}) for rank {rank}")
    return value


def check_dimensions(op: OpLike, name: str, values: tuple[int, ...], rank: int, *, what: str = "", distinct: bool = True) -> None:
    """:class:`InvalidAttributeError` unless every entry of ``values`` (attribute ``name``,
    its field ``what`` when given) is a dimension in ``[0, rank)``, each at most once when
    ``distinct``."""
    field_text = f"{what} " if what else ""
    for value in values:
        if not 0 <= value < rank:
            raise invalid(op, name, f"{field_text}{list(values)} names dimension {value}, outside [0, {rank})")
    if distinct and len(set(values)) != len(values):
        raise invalid(op, name, f"{field_text}{list(values)} repeats a dimension")


def dimension_array(
    op: OpLike, name: str, rank: int, default: tuple[int, ...] | None = None, *, size: int | None = None, distinct: bool = True
) -> tuple[int, ...]:
    """A list of dimension numbers in ``[0, rank)`` (distinct unless told otherwise; exactly
    ``size`` of them when given), else :class:`InvalidAttributeError`."""
    values = int_array(op, name, default)
    if size is not None and len(values) != size:
        raise invalid(op, name, f"has {len(values)} entries, expected {size}")
    check_dimensions(op, name, values, rank, distinct=distinct)
    return values


def permutation(op: OpLike, name: str, rank: int) -> tuple[int, ...]:
    """A permutation of ``0 .. rank-1``, else :class:`InvalidAttributeError`."""
    values = int_array(op, name)
    if sorted(values) != list(range(rank)):
        raise invalid(op, name, f"{list(values)} is not a permutation of the {rank} dimensions")
    return values


def sized_int_array(
    op: OpLike, name: str, size: int, default: tuple[int, ...] | None = None, *, minimum: int | None = None
) -> tuple[int, ...]:
    """:func:`int_array` with exactly ``size`` entries (each at least ``minimum``), else
    :class:`InvalidAttributeError` naming the op and the attribute, at the op (the
    verifier accepts e.g. an empty ``lhs_dilate = []`` on a 2-d convolution)."""
    values = int_array(op, name, default, minimum=minimum)
    if len(values) != size:
        raise invalid(op, name, f"has {len(values)} entries, expected {size}")
    return values


def broadcast_dimensions(op: OpLike, name: str, operand: Shape, result: Shape) -> tuple[int, ...]:
    """The result dimension of each operand dimension (``broadcast_dimensions``): one per
    operand dimension, distinct, in range, each operand dimension of size 1 or of its
    result dimension's size; else :class:`InvalidAttributeError`."""
    values = dimension_array(op, name, len(result), size=len(operand))
    for j, p in enumerate(values):
        if operand[j] not in (1, result[p]):
            raise invalid(op, name, f"{list(values)} maps operand dimension {j} (size {operand[j]}) to result dimension {p} (size {result[p]})")
    return values


def padding_pairs(op: OpLike, name: str, rank: int) -> tuple[tuple[int, int], ...]:
    """``padding = dense<[[lo, hi], ...]>`` as ``((lo, hi), ...)``; zeros when absent."""
    flat = sized_int_array(op, name, 2 * rank, (0,) * (2 * rank))
    return tuple((flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2))


def _structured(op: OpLike, name: str, class_name: str) -> Any:
    """Attribute ``name`` of ``op`` as the bindings' ``class_name`` (StableHLO's or MHLO's);
    :class:`InvalidAttributeError` when it is missing or of another kind."""
    attr = _attribute(op, name)
    if attr is None:
        raise invalid(op, name, "is missing")
    for dialect in (stablehlo, mhlo):
        cls = getattr(dialect, class_name, None) if dialect is not None else None
        if cls is not None and cls.isinstance(attr):
            return cls(attr)
    raise invalid(op, name, f"is not a {class_name} attribute: {_short(attr)}")


def _require(op: OpLike, name: str, condition: bool, problem: str) -> None:
    if not condition:
        raise invalid(op, name, problem)


@dataclass(frozen=True)
class DotDimensions:
    """The dimension numbers of ``dot_general``: batch and contracting dimensions of each side."""
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]


def dot_dimensions(op: OpLike, lhs: Shape, rhs: Shape, result: Shape | None = None) -> DotDimensions:
    """Dimension numbers of ``dot_general``; for plain ``dot`` (no attribute) the
    contraction of the lhs's last dimension with the rhs's first. Checked against the
    operand shapes (and the result's when given): dimensions in range and distinct, paired
    dimensions of equal sizes, the result shape they imply; else
    :class:`InvalidAttributeError` naming ``dot_dimension_numbers``."""
    name = "dot_dimension_numbers"
    attr = _attribute(op, name)
    if attr is None:
        _require(op, name, bool(lhs) and bool(rhs), f"is absent and {list(lhs)} x {list(rhs)} is not a matrix/vector product")
        dn = DotDimensions((), (), (len(lhs) - 1,), (0,))
    else:
        read = _structured(op, name, "DotDimensionNumbers")
        dn = DotDimensions(
            tuple(read.lhs_batching_dimensions),
            tuple(read.rhs_batching_dimensions),
            tuple(read.lhs_contracting_dimensions),
            tuple(read.rhs_contracting_dimensions),
        )
    return _checked_dot_dimensions(op, name, dn, lhs, rhs, result)


def scaled_dot_dimensions(op: OpLike, lhs: Shape, rhs: Shape, result: Shape | None = None) -> DotDimensions:
    """Dimension numbers of a scaled dot imported from HLO (a custom call to
    ``hlo_text.SCALED_DOT_TARGET`` whose ``backend_config`` is XLA's attribute text,
    ``lhs_contracting_dims={1}, rhs_contracting_dims={0}``), checked as
    :func:`dot_dimensions` checks them; else :class:`InvalidAttributeError` naming
    ``backend_config``."""
    name = "backend_config"
    attr = _attribute(op, name)
    if not isinstance(attr, ir.StringAttr):
        raise invalid(op, name, "is not the string of a scaled dot's dimension numbers")
    text = attr.value
    found = {(side, kind): tuple(int(d) for d in dims.replace(" ", "").split(",") if d) for side, kind, dims in DOT_DIMS_ATTRIBUTE.findall(text)}
    _require(op, name, DOT_DIMS_ATTRIBUTE.sub("", text).strip(", ") == "", f"{text!r} is not a list of dot dimension numbers")
    dn = DotDimensions(
        found.get(("lhs", "batch"), ()), found.get(("rhs", "batch"), ()),
        found.get(("lhs", "contracting"), ()), found.get(("rhs", "contracting"), ()),
    )
    return _checked_dot_dimensions(op, name, dn, lhs, rhs, result)


@dataclass(frozen=True)
class GemmConfig:
    """What the analysis reads of a cuBLAS GEMM's ``backend_config``: the dot's dimension
    numbers and the epilogue (``DEFAULT``, ``BIAS``, ``BIAS_RELU``, ...)."""
    dimensions: DotDimensions
    epilogue: str


def gemm_config(op: OpLike, lhs: Shape, rhs: Shape, result: Shape | None = None) -> GemmConfig:
    """The :class:`GemmConfig` of a cuBLAS GEMM custom call of an XLA GPU module
    (``__cublas$gemm``, ``__cublas$lt$matmul``), from its ``backend_config`` JSON's
    ``gemm_backend_config``: ``dot_dimension_numbers`` (dimension lists of strings or
    integers, an absent one empty; checked as :func:`dot_dimensions` checks them) and
    ``epilogue`` (``DEFAULT`` when absent); else :class:`InvalidAttributeError` naming
    ``backend_config``."""
    name = "backend_config"
    attr = _attribute(op, name)
    if not isinstance(attr, ir.StringAttr):
        raise invalid(op, name, "is not the JSON of a GEMM's configuration")
    try:
        config = json.loads(attr.value)["gemm_backend_config"]
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid(op, name, f"has no gemm_backend_config ({type(exc).__name__}: {exc})") from None
    if not isinstance(config, dict):
        raise invalid(op, name, "has a gemm_backend_config that is not an object")
    try:
        numbers = config["dot_dimension_numbers"]
        dn = DotDimensions(*(
            tuple(int(d) for d in numbers.get(f"{side}_{kind}_dimensions", []))
            for kind, side in (("batch", "lhs"), ("batch", "rhs"), ("contracting", "lhs"), ("contracting", "rhs"))
        ))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise invalid(op, name, f"has no gemm_backend_config.dot_dimension_numbers ({type(exc).__name__}: {exc})") from None
    epilogue = config.get("epilogue", "DEFAULT")
    if not isinstance(epilogue, str):
        raise invalid(op, name, f"has an epilogue {epilogue!r} that is not a name")
    return GemmConfig(_checked_dot_dimensions(op, name, dn, lhs, rhs, result), epilogue)


def _checked_dot_dimensions(op: OpLike, name: str, dn: DotDimensions, lhs: Shape, rhs: Shape, result: Shape | None) -> DotDimensions:
    """``dn`` once checked against the operand shapes (and the result's when given)."""
    check_dimensions(op, name, dn.lhs_batch + dn.lhs_contracting, len(lhs), what="lhs batching + contracting")
    check_dimensions(op, name, dn.rhs_batch + dn.rhs_contracting, len(rhs), what="rhs batching + contracting")
    _require(op, name, len(dn.lhs_batch) == len(dn.rhs_batch), f"pairs {len(dn.lhs_batch)} lhs with {len(dn.rhs_batch)} rhs batching dimensions")
    _require(
        op, name, len(dn.lhs_contracting) == len(dn.rhs_contracting),
        f"pairs {len(dn.lhs_contracting)} lhs with {len(dn.rhs_contracting)} rhs contracting dimensions",
    )
    for i, j in zip(dn.lhs_batch + dn.lhs_contracting, dn.rhs_batch + dn.rhs_contracting):
        _require(op, name, lhs[i] == rhs[j], f"pairs lhs dimension {i} (size {lhs[i]}) with rhs dimension {j} (size {rhs[j]})")
    if result is not None:
        implied = (
            [lhs[i] for i in dn.lhs_batch]
            + [n for i, n in enumerate(lhs) if i not in dn.lhs_batch + dn.lhs_contracting]
            + [n for j, n in enumerate(rhs) if j not in dn.rhs_batch + dn.rhs_contracting]
        )
        _require(op, name, tuple(implied) == tuple(result), f"implies a result of shape {implied}, the op's is {list(result)}")
    return dn


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


def conv_dimensions(op: OpLike, lhs: Shape, rhs: Shape, result: Shape) -> ConvDimensions:
    """The :class:`ConvDimensions` of a convolution op, checked against the input, kernel
    and output shapes (each a permutation of that value's dimensions, as many spatial
    dimensions in all three), else :class:`InvalidAttributeError` naming ``dimension_numbers``."""
    name = "dimension_numbers"
    read = _structured(op, name, "ConvDimensionNumbers")
    dn = ConvDimensions(
        read.input_batch_dimension,
        read.input_feature_dimension,
        tuple(read.input_spatial_dimensions),
        read.kernel_input_feature_dimension,
        read.kernel_output_feature_dimension,
        tuple(read.kernel_spatial_dimensions),
        read.output_batch_dimension,
        read.output_feature_dimension,
        tuple(read.output_spatial_dimensions),
    )
    for what, values, shape in (
        ("input", (dn.input_batch, dn.input_feature) + dn.input_spatial, lhs),
        ("kernel", (dn.kernel_input_feature, dn.kernel_output_feature) + dn.kernel_spatial, rhs),
        ("output", (dn.output_batch, dn.output_feature) + dn.output_spatial, result),
    ):
        check_dimensions(op, name, values, len(shape), what=f"{what} dimensions")
        _require(op, name, len(values) == len(shape), f"names {len(values)} {what} dimensions for rank {len(shape)}")
    return dn


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
    """The window of ``reduce_window`` / ``select_and_scatter`` (defaults filled in); sizes,
    strides and dilations at least 1."""
    ones = (1,) * rank
    return Window(
        sized_int_array(op, "window_dimensions", rank, minimum=1),
        sized_int_array(op, "window_strides", rank, ones, minimum=1),
        padding_pairs(op, "padding", rank),
        sized_int_array(op, "base_dilations", rank, ones, minimum=1),
        sized_int_array(op, "window_dilations", rank, ones, minimum=1),
        (False,) * rank,
    )


def conv_window(op: OpLike, kernel_sizes: tuple[int, ...]) -> Window:
    """The window of a convolution; ``kernel_sizes`` are the kernel's spatial sizes;
    strides and dilations at least 1."""
    n = len(kernel_sizes)
    ones = (1,) * n
    return Window(
        kernel_sizes,
        sized_int_array(op, "window_strides", n, ones, minimum=1),
        padding_pairs(op, "padding", n),
        sized_int_array(op, "lhs_dilation", n, ones, minimum=1),
        sized_int_array(op, "rhs_dilation", n, ones, minimum=1),
        tuple(bool(v) for v in sized_int_array(op, "window_reversal", n, (0,) * n)),
    )


def _text_attribute(op: OpLike, name: str) -> str | None:
    """A custom call's attribute ``name`` as written in XLA's text (kept by the importer,
    :func:`~.hlo_import.dropped_attribute`), None when absent."""
    attr = _attribute(op, dropped_attribute(name))
    if attr is None:
        return None
    if not isinstance(attr, ir.StringAttr):
        raise invalid(op, dropped_attribute(name), f"is not XLA's text of {name}: {_short(attr)}")
    return attr.value


def _labelled(op: OpLike, name: str, labels: str, letters: str, rank: int, what: str) -> tuple[int, int, tuple[int, ...]]:
    """The positions of ``letters`` (two, e.g. ``bf``) and of the spatial dimensions
    ``0, 1, ...`` in one array's ``labels`` (``b01f``), checked against its rank."""
    spatial = sorted((c, k) for k, c in enumerate(labels) if c.isdigit())
    _require(
        op, name, sorted(labels) == sorted(letters + "".join(str(j) for j in range(len(spatial)))) and len(labels) == rank,
        f"labels the {what} (rank {rank}) {labels!r}: expected '{letters[0]}', '{letters[1]}' and the spatial dimensions "
        "0, 1, ... once each",
    )
    return labels.index(letters[0]), labels.index(letters[1]), tuple(k for _, k in spatial)


def hlo_conv_dimensions(op: OpLike, lhs: Shape, rhs: Shape, result: Shape) -> ConvDimensions:
    """The :class:`ConvDimensions` of a convolution custom call from its ``dim_labels``
    as XLA writes them (``bf01_oi01->bf01``: per array one letter per dimension, ``b`` and
    ``f`` for the input's and output's batch and feature, ``i`` and ``o`` for the kernel's
    input and output features, the spatial dimensions numbered in order), checked against
    the input, kernel and output shapes; else :class:`InvalidAttributeError`."""
    name = dropped_attribute("dim_labels")
    text = _text_attribute(op, "dim_labels")
    if text is None:
        raise invalid(op, name, "is missing (XLA writes a convolution's dim_labels=...)")
    parts = text.replace("->", "_").split("_")
    _require(op, name, len(parts) == 3, f"{text!r} is not input_kernel->output labels")
    input_batch, input_feature, input_spatial = _labelled(op, name, parts[0], "bf", len(lhs), "input")
    kernel_input, kernel_output, kernel_spatial = _labelled(op, name, parts[1], "io", len(rhs), "kernel")
    output_batch, output_feature, output_spatial = _labelled(op, name, parts[2], "bf", len(result), "output")
    _require(op, name, len(input_spatial) == len(kernel_spatial) == len(output_spatial), f"{text!r} has different spatial ranks")
    return ConvDimensions(
        input_batch, input_feature, input_spatial, kernel_input, kernel_output, kernel_spatial,
        output_batch, output_feature, output_spatial,
    )


#: One field of XLA's window text (``size=3x3``, ``pad=1_1x0_-1``): name, value.
_WINDOW_FIELD = re.compile(r"(\w+)=(\S+)")


def hlo_conv_window(op: OpLike, kernel_sizes: tuple[int, ...]) -> Window:
    """The window of a convolution custom call as XLA writes it (``size=3x3 stride=2x2
    pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1``; fields absent take their
    defaults), its sizes the kernel's spatial sizes; else :class:`InvalidAttributeError`."""
    name = dropped_attribute("window")
    n = len(kernel_sizes)
    text = _text_attribute(op, "window")
    if text is None:
        _require(op, name, n == 0, "is missing (XLA writes a convolution's window={...})")
        text = ""
    fields = dict(_WINDOW_FIELD.findall(text))
    _require(op, name, _WINDOW_FIELD.sub("", text).strip() == "", f"{text!r} is not XLA's window text")

    def values(field: str, default: int) -> tuple[str, ...]:
        found = tuple(fields[field].split("x")) if field in fields else (str(default),) * n
        _require(op, name, len(found) == n, f"{field}={fields.get(field)} has {len(found)} entries for {n} spatial dimensions")
        return found

    try:
        sizes = tuple(int(v) for v in values("size", 1))
        strides = tuple(int(v) for v in values("stride", 1))
        padding = tuple((int(lo), int(hi)) for lo, hi in (v.split("_") for v in values("pad", 0))) if "pad" in fields else ((0, 0),) * n
        base = tuple(int(v) for v in values("lhs_dilate", 1))
        dilations = tuple(int(v) for v in values("rhs_dilate", 1))
        reversal = tuple(bool(int(v)) for v in values("rhs_reversal", 0))
    except ValueError:
        raise invalid(op, name, f"{text!r} is not XLA's window text") from None
    _require(op, name, sizes == kernel_sizes, f"size {list(sizes)} is not the kernel's spatial sizes {list(kernel_sizes)}")
    _require(op, name, min(strides + base + dilations, default=1) >= 1, f"{text!r} has a stride or dilation below 1")
    return Window(sizes, strides, padding, base, dilations, reversal)


def hlo_group_count(op: OpLike, name: str) -> int:
    """A convolution custom call's ``feature_group_count`` or ``batch_group_count`` as
    written (1 when absent), at least 1; else :class:`InvalidAttributeError`."""
    text = _text_attribute(op, name)
    if text is None:
        return 1
    _require(op, dropped_attribute(name), text.isdigit() and int(text) >= 1, f"{text!r} is not a count of at least 1")
    return int(text)


def _check_batch_vector(op: OpLike, name: str, index_vector_dim: int, indices: Shape, batching: tuple[int, ...], what: str) -> int:
    """Check ``index_vector_dim`` (in ``[0, rank]``) and the indices' batching dimensions;
    the size of the index vector."""
    _require(
        op, name, 0 <= index_vector_dim <= len(indices),
        f"index_vector_dim {index_vector_dim} is outside [0, {len(indices)}] for indices of rank {len(indices)}",
    )
    check_dimensions(op, name, batching, len(indices), what=what)
    _require(op, name, index_vector_dim not in batching, f"{what} {list(batching)} include index_vector_dim {index_vector_dim}")
    return indices[index_vector_dim] if index_vector_dim < len(indices) else 1


@dataclass(frozen=True)
class GatherDimensions:
    """The dimension numbers of ``gather`` (StableHLO's ``GatherDimensionNumbers``)."""
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    start_indices_batching_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int


def gather_dimensions(op: OpLike, operand: Shape, indices: Shape, result: Shape) -> GatherDimensions:
    """The :class:`GatherDimensions` of a gather op (batching dimensions empty when the
    dialect has none), checked against the shapes: every list in range and distinct, one
    offset dimension per operand dimension neither collapsed nor batching, one
    ``start_index_map`` entry per index vector component, the result's rank;
    else :class:`InvalidAttributeError` naming ``dimension_numbers``."""
    name = "dimension_numbers"
    read = _structured(op, name, "GatherDimensionNumbers")
    dn = GatherDimensions(
        tuple(read.offset_dims),
        tuple(read.collapsed_slice_dims),
        tuple(getattr(read, "operand_batching_dims", ())),
        tuple(getattr(read, "start_indices_batching_dims", ())),
        tuple(read.start_index_map),
        read.index_vector_dim,
    )
    check_dimensions(op, name, dn.offset_dims, len(result), what="offset_dims")
    check_dimensions(op, name, dn.collapsed_slice_dims + dn.operand_batching_dims, len(operand), what="collapsed_slice_dims + operand_batching_dims")
    check_dimensions(op, name, dn.start_index_map, len(operand), what="start_index_map")
    vector = _check_batch_vector(op, name, dn.index_vector_dim, indices, dn.start_indices_batching_dims, "start_indices_batching_dims")
    windowed = len(operand) - len(dn.collapsed_slice_dims) - len(dn.operand_batching_dims)
    _require(op, name, len(dn.offset_dims) == windowed, f"has {len(dn.offset_dims)} offset_dims for {windowed} window dimensions of the operand")
    _require(op, name, len(dn.start_index_map) == vector, f"start_index_map has {len(dn.start_index_map)} entries for an index vector of {vector}")
    _require(
        op, name, len(dn.operand_batching_dims) == len(dn.start_indices_batching_dims),
        "pairs {} operand with {} indices batching dimensions".format(len(dn.operand_batching_dims), len(dn.start_indices_batching_dims)),
    )
    batch_rank = len(indices) - (1 if dn.index_vector_dim < len(indices) else 0)
    _require(op, name, len(result) == len(dn.offset_dims) + batch_rank, f"implies a result of rank {len(dn.offset_dims) + batch_rank}, the op's has {len(result)}")
    return dn


def gather_slice_sizes(op: OpLike, dn: GatherDimensions, operand: Shape, result: Shape) -> tuple[int, ...]:
    """``slice_sizes`` of a gather: one per operand dimension within its size, at most 1 for
    collapsed and batching dimensions, the result's offset dimensions' sizes for the others."""
    name = "slice_sizes"
    sizes = sized_int_array(op, name, len(operand), minimum=0)
    for i, (size, n) in enumerate(zip(sizes, operand)):
        _require(op, name, size <= n, f"{list(sizes)}: slice size {size} exceeds operand dimension {i} of size {n}")
    windowed = [i for i in range(len(operand)) if i not in dn.collapsed_slice_dims + dn.operand_batching_dims]
    for i in dn.collapsed_slice_dims + dn.operand_batching_dims:
        _require(op, name, sizes[i] <= 1, f"{list(sizes)}: collapsed or batching dimension {i} has slice size {sizes[i]}")
    for position, i in enumerate(windowed):
        _require(
            op, name, result[dn.offset_dims[position]] == sizes[i],
            f"{list(sizes)}: operand dimension {i} slices {sizes[i]}, result dimension {dn.offset_dims[position]} has {result[dn.offset_dims[position]]}",
        )
    return sizes


@dataclass(frozen=True)
class ScatterDimensions:
    """The dimension numbers of ``scatter`` (StableHLO's ``ScatterDimensionNumbers``)."""
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int


def scatter_dimensions(op: OpLike, operand: Shape, indices: Shape, update: Shape) -> ScatterDimensions:
    """The :class:`ScatterDimensions` of a scatter op (batching dimensions empty when the
    dialect has none), checked against the shapes of the first input, the indices and an
    update as :func:`gather_dimensions` is (update windows within the operand); else
    :class:`InvalidAttributeError` naming ``scatter_dimension_numbers``."""
    name = "scatter_dimension_numbers"
    read = _structured(op, name, "ScatterDimensionNumbers")
    dn = ScatterDimensions(
        tuple(read.update_window_dims),
        tuple(read.inserted_window_dims),
        tuple(getattr(read, "input_batching_dims", ())),
        tuple(getattr(read, "scatter_indices_batching_dims", ())),
        tuple(read.scattered_dims_to_operand_dims),
        read.index_vector_dim,
    )
    check_dimensions(op, name, dn.update_window_dims, len(update), what="update_window_dims")
    check_dimensions(op, name, dn.inserted_window_dims + dn.input_batching_dims, len(operand), what="inserted_window_dims + input_batching_dims")
    check_dimensions(op, name, dn.scatter_dims_to_operand_dims, len(operand), what="scatter_dims_to_operand_dims")
    vector = _check_batch_vector(op, name, dn.index_vector_dim, indices, dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
    windowed = [i for i in range(len(operand)) if i not in dn.inserted_window_dims + dn.input_batching_dims]
    _require(
        op, name, len(dn.update_window_dims) == len(windowed),
        f"has {len(dn.update_window_dims)} update_window_dims for {len(windowed)} window dimensions of the operand",
    )
    _require(
        op, name, len(dn.scatter_dims_to_operand_dims) == vector,
        f"scatter_dims_to_operand_dims has {len(dn.scatter_dims_to_operand_dims)} entries for an index vector of {vector}",
    )
    _require(
        op, name, len(dn.input_batching_dims) == len(dn.scatter_indices_batching_dims),
        "pairs {} input with {} indices batching dimensions".format(len(dn.input_batching_dims), len(dn.scatter_indices_batching_dims)),
    )
    batch_rank = len(indices) - (1 if dn.index_vector_dim < len(indices) else 0)
    _require(
        op, name, len(update) == len(dn.update_window_dims) + batch_rank,
        f"implies updates of rank {len(dn.update_window_dims) + batch_rank}, the op's have {len(update)}",
    )
    for position, i in enumerate(windowed):
        size = update[dn.update_window_dims[position]]
        _require(op, name, size <= operand[i], f"an update window of {size} along operand dimension {i} of size {operand[i]}")
    return dn


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
        if name.startswith("hlo_indexing.") and name != LAYOUT_ATTRIBUTE:  # imported HLO ops all have the layout
            return tuple([item for item in items if not item[0].startswith("hlo_indexing.") or item[0] == LAYOUT_ATTRIBUTE])
    return tuple(items)
