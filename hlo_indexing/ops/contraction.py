"""Contractions: dot / dot_general and convolution (strides, padding, lhs/rhs
dilation, window reversal, feature and batch groups)."""

from __future__ import annotations

from dataclasses import replace

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.op_attrs import Window
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.inversion import invert
from hlo_indexing.ops.map_builders import dims, filled, make_map, syms, whole_map
from hlo_indexing.ops.rule import OpInfo, RuleResult
from hlo_indexing.ops.reduction import window_map


def _free_dims(dn: op_attrs.DotDimensions, lhs: tuple[int, ...], rhs: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """The lhs's and the rhs's free dimensions (output dims are batch, lhs free, rhs free)."""
    lhs_free = [i for i in range(len(lhs)) if i not in dn.lhs_batch and i not in dn.lhs_contracting]
    rhs_free = [i for i in range(len(rhs)) if i not in dn.rhs_batch and i not in dn.rhs_contracting]
    return lhs_free, rhs_free


def _dot_layout(info: OpInfo):
    """The dot's dimension numbers and the lhs's and rhs's free dimensions."""
    lhs, rhs = info.operand(0), info.operand(1)
    dn = op_attrs.dot_dimensions(info.op, lhs, rhs, info.result(0))
    return (dn, *_free_dims(dn, lhs, rhs))


def _dot_maps(info: OpInfo, dn: op_attrs.DotDimensions) -> list[IndexingMap]:
    """The lhs's and rhs's maps of a dot with dimension numbers ``dn``: contracting dims
    become range variables shared by both operands."""
    lhs, rhs, result = info.operand(0), info.operand(1), info.result(0)
    lhs_free, rhs_free = _free_dims(dn, lhs, rhs)
    d, s = dims(len(result), info.context), syms(len(dn.lhs_contracting), info.context)
    n_batch = len(dn.lhs_batch)
    lhs_exprs: list[ir.AffineExpr | None] = [None] * len(lhs)
    rhs_exprs: list[ir.AffineExpr | None] = [None] * len(rhs)
    for k, (i, j) in enumerate(zip(dn.lhs_batch, dn.rhs_batch)):
        lhs_exprs[i] = rhs_exprs[j] = d[k]
    for k, (i, j) in enumerate(zip(dn.lhs_contracting, dn.rhs_contracting)):
        lhs_exprs[i] = rhs_exprs[j] = s[k]
    for k, i in enumerate(lhs_free):
        lhs_exprs[i] = d[n_batch + k]
    for k, j in enumerate(rhs_free):
        rhs_exprs[j] = d[n_batch + len(lhs_free) + k]
    ranges = [lhs[i] for i in dn.lhs_contracting]
    return [make_map(info.context, result, filled(lhs_exprs), ranges), make_map(info.context, result, filled(rhs_exprs), ranges)]


def dot_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Contracting dims become range variables shared by both operands."""
    dn = op_attrs.dot_dimensions(info.op, info.operand(0), info.operand(1), info.result(0))
    return [[m] for m in _dot_maps(info, dn)]


def scaled_dot_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """A scaled dot (XLA's ``scaled-dot(lhs, rhs, lhs_scale, rhs_scale)``, imported as a
    custom call): the lhs and rhs are read as a dot's; each scale has its operand's rank
    and holds one value per block of it, so it is read at the operand's index divided,
    dimension by dimension, by the block size ``operand size / scale size`` (the
    contracting dimension's blocks; 1 where the sizes are equal). Example: lhs
    ``f32[2,10]`` with scale ``f32[2,2]``: ``(d0, d1)[s0] -> (d0, s0 floordiv 5)``."""
    lhs, rhs = info.operand(0), info.operand(1)
    if info.num_operands != 4:
        raise op_attrs.invalid(info.op, "operands", f"a scaled dot takes 4 operands, not {info.num_operands}")
    dn = op_attrs.scaled_dot_dimensions(info.op, lhs, rhs, info.result(0))
    maps = _dot_maps(info, dn)
    out: list[list[IndexingMap]] = [[m] for m in maps]
    for operand, scale, m in ((lhs, info.operand(2), maps[0]), (rhs, info.operand(3), maps[1])):
        if len(scale) != len(operand) or any(n % b for n, b in zip(operand, scale)):
            raise op_attrs.invalid(info.op, "operands", f"scale {list(scale)} does not divide its operand {list(operand)} into blocks")
        results = [e if n == b else ax.floordiv(e, n // b) for e, n, b in zip(m.results, operand, scale)]
        out.append([make_map(info.context, info.result(0), results, list(m.range_vars))])
    return out


def gemm_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """A cuBLAS GEMM of an XLA GPU module (a custom call whose ``backend_config`` holds
    the dot's dimension numbers, :func:`~hlo_indexing.dialect_glue.op_attrs.gemm_config`;
    its result is a tuple: the product, then scratch such as the workspace): the product
    reads operands 0 and 1 as a dot's, an operand of its shape (the ``C`` of
    ``alpha * A @ B + beta * C``) at its own index, with a ``BIAS`` epilogue a vector as
    long as its last dimension at that column, and any other operand (scaling factors)
    whole; the scratch results read every element of every operand."""
    space = info.result(result_index)
    if result_index > 0:
        return [[whole_map(info.context, space, info.operand(k))] for k in range(info.num_operands)]
    if info.num_operands < 2:
        raise op_attrs.invalid(info.op, "operands", f"a GEMM takes at least 2 operands, not {info.num_operands}")
    config = op_attrs.gemm_config(info.op, info.operand(0), info.operand(1), space)
    bias = "BIAS" in config.epilogue
    d = dims(len(space), info.context)
    out: list[list[IndexingMap]] = [[m] for m in _dot_maps(info, config.dimensions)]
    for k in range(2, info.num_operands):
        target = info.operand(k)
        if target == space:
            out.append([make_map(info.context, space, d)])
        elif bias and space and target == (space[-1],):
            out.append([make_map(info.context, space, d[-1:])])
        else:
            out.append([whole_map(info.context, space, target)])
    return out


def dot_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """An lhs element reaches every output with its batch and free indices; the rhs's
    free dims are range variables (and symmetrically for the rhs)."""
    shape = info.operand(operand_index)
    dn, lhs_free, rhs_free = _dot_layout(info)
    batch = dn.lhs_batch if operand_index == 0 else dn.rhs_batch
    own_free, other_free = (lhs_free, rhs_free) if operand_index == 0 else (rhs_free, lhs_free)
    other = info.operand(1 - operand_index)
    d, s = dims(len(shape), info.context), syms(len(other_free), info.context)
    free_exprs = [d[i] for i in own_free]
    batch_exprs = [d[i] for i in batch]
    results = batch_exprs + (free_exprs + s if operand_index == 0 else s + free_exprs)
    return [[make_map(info.context, shape, results, [other[i] for i in other_free])]]


def _conv_maps(info: OpInfo):
    """output -> (input, kernel) maps of a convolution op (see :func:`conv_maps`)."""
    lhs, rhs, result = info.operand(0), info.operand(1), info.result(0)
    dn = op_attrs.conv_dimensions(info.op, lhs, rhs, result)
    window = op_attrs.conv_window(info.op, tuple(rhs[k] for k in dn.kernel_spatial))
    counts = tuple(op_attrs.int_attr(info.op, name, 1, minimum=1) for name in ("feature_group_count", "batch_group_count"))
    groups = checked_groups(info, (lhs, rhs, result), dn, (counts[0], counts[1]))
    return conv_maps(info.context, (lhs, rhs, result), dn, window, groups)


def conv_maps(
    context: ir.Context, shapes: tuple[op_attrs.Shape, op_attrs.Shape, op_attrs.Shape], dn: op_attrs.ConvDimensions,
    window: Window, groups: tuple[int, int],
) -> list[IndexingMap]:
    """output -> (input, kernel) maps of the convolution of ``shapes`` (input, kernel,
    output) with dimension numbers ``dn``, ``window`` and ``groups`` (feature, batch; as
    :func:`checked_groups` gives them), sharing range variables: the spatial window
    positions, then the input feature within its group."""
    lhs, rhs, result = shapes
    kernel_sizes = window.sizes
    feature_groups, batch_groups = groups
    # spatial part: reuse the window map over the spatial dims only
    spatial_out = tuple(result[k] for k in dn.output_spatial)
    spatial_in = tuple(lhs[k] for k in dn.input_spatial)
    # reversal flips the kernel index, not the input position
    spatial = window_map(context, spatial_out, spatial_in, replace(window, reversal=(False,) * len(kernel_sizes)))
    d = dims(len(result), context)
    n_spatial_syms = sum(1 for size in kernel_sizes if size > 1)
    group_features = rhs[dn.kernel_input_feature]
    feature_sym = ax.symbol(n_spatial_syms, context) if group_features > 1 else ax.constant(0, context)
    spatial_dims = [d[k] for k in dn.output_spatial]
    in_exprs: list[ir.AffineExpr | None] = [None] * len(lhs)
    for k, expr in zip(dn.input_spatial, spatial.results):
        in_exprs[k] = ax.substitute(expr, spatial_dims, syms(n_spatial_syms, context))
    out_features = result[dn.output_feature]
    out_batch = result[dn.output_batch]
    in_exprs[dn.input_batch] = d[dn.output_batch]
    if batch_groups > 1:
        group = ax.floordiv(d[dn.output_feature], out_features // batch_groups)
        in_exprs[dn.input_batch] = group * out_batch + d[dn.output_batch]
    in_exprs[dn.input_feature] = feature_sym
    if feature_groups > 1:
        group = ax.floordiv(d[dn.output_feature], out_features // feature_groups)
        in_exprs[dn.input_feature] = group * group_features + feature_sym
    kernel_exprs: list[ir.AffineExpr | None] = [None] * len(rhs)
    for position, k in enumerate(dn.kernel_spatial):
        if kernel_sizes[position] == 1:
            kernel_exprs[k] = ax.constant(0, context)
            continue
        s = ax.symbol(_window_symbol(window, position), context)
        kernel_exprs[k] = s * -1 + (kernel_sizes[position] - 1) if window.reversal[position] else s
    kernel_exprs[dn.kernel_input_feature] = feature_sym
    kernel_exprs[dn.kernel_output_feature] = d[dn.output_feature]
    ranges = [size for size in kernel_sizes if size > 1] + ([group_features] if group_features > 1 else [])
    constraints = {ax.substitute(e, spatial_dims, syms(n_spatial_syms, context)): c for e, c in spatial.constraints.items()}
    if spatial.is_known_empty():  # no window position ever meets an input element
        return [
            IndexingMap.known_empty(len(result), len(ranges), len(lhs), context),
            IndexingMap.known_empty(len(result), len(ranges), len(rhs), context),
        ]
    # a kernel tap is read where its input tap is a real element: not in the padding,
    # not in a hole of the input dilation (the same constraints as the input map)
    kernel_map = make_map(context, result, filled(kernel_exprs), ranges, constraints=constraints)
    return [make_map(context, result, filled(in_exprs), ranges, constraints=constraints), kernel_map]


def checked_groups(
    info: OpInfo, shapes: tuple[op_attrs.Shape, op_attrs.Shape, op_attrs.Shape], dn: op_attrs.ConvDimensions,
    groups: tuple[int, int], names: tuple[str, str, str] = ("feature_group_count", "batch_group_count", "dimension_numbers"),
) -> tuple[int, int]:
    """``groups`` (``feature_group_count``, ``batch_group_count``) of the convolution of
    ``shapes`` (input, kernel, output), checked against the shapes (the features and
    batch they split, the kernel's features), else
    :class:`~hlo_indexing.errors.InvalidAttributeError` naming the attribute (``names``:
    the two counts' and the dimension numbers')."""
    lhs, rhs, result = shapes
    feature_groups, batch_groups = groups
    out_features = result[dn.output_feature]
    if lhs[dn.input_feature] != rhs[dn.kernel_input_feature] * feature_groups or out_features % feature_groups:
        raise op_attrs.invalid(
            info.op, names[0],
            f"{feature_groups} does not split {lhs[dn.input_feature]} input features into groups of the kernel's "
            f"{rhs[dn.kernel_input_feature]} (and {out_features} output features evenly)",
        )
    if lhs[dn.input_batch] != result[dn.output_batch] * batch_groups or out_features % batch_groups:
        raise op_attrs.invalid(
            info.op, names[1],
            f"{batch_groups} does not split the input batch {lhs[dn.input_batch]} into output batches of "
            f"{result[dn.output_batch]} (and {out_features} output features evenly)",
        )
    if rhs[dn.kernel_output_feature] != out_features:
        raise op_attrs.invalid(
            info.op, names[2],
            f"pairs kernel output features ({rhs[dn.kernel_output_feature]}) with {out_features} output features",
        )
    return feature_groups, batch_groups


def _window_symbol(window: Window, position: int) -> int:
    """Index of the range variable of window dimension ``position`` (size-1 window
    dimensions have none)."""
    return sum(1 for size in window.sizes[:position] if size > 1)


def convolution_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> input and kernel: each output element reads the window of input positions
    (range variables over the kernel's spatial positions and the input features of its
    group) and the kernel elements of its output feature."""
    return [[m] for m in _conv_maps(info)]


def convolution_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Input or kernel -> output: the inverse relation of the output -> operand map, over the
    operand's index space."""
    maps = _conv_maps(info)
    return [[invert(maps[operand_index], info.operand(operand_index))]]
