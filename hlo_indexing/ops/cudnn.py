"""cuDNN convolutions of XLA GPU modules.

XLA's GPU backend writes a convolution as a custom call to cuDNN. Its ``window`` and
``dim_labels`` (kept by the importer: :func:`~hlo_indexing.dialect_glue.hlo_import.dropped_attribute`)
describe a *forward* convolution ``output = conv(input, kernel)``, and the call computes
one of its three arrays from the other two, returned in a tuple with a scratch buffer:

* ``__cudnn$convForward``: the output, from (input, kernel);
* ``__cudnn$convBiasActivationForward``: the output, from (input, kernel, bias[, side
  input]), ``activation(scale * conv + side_scale * side_input + bias)``: the bias holds
  one value per output feature, the side input has the output's shape;
* ``__cudnn$convBackwardInput``: the input (its gradient), from (output, kernel);
* ``__cudnn$convBackwardFilter``: the kernel (its gradient), from (input, output).

Each map is the forward convolution's relation (an output element, a window position, an
input feature of its group) seen from the array computed, so each is exact. Example: a
backward input of stride 2 reads, at input position ``x``, the output positions ``y``
with ``2 * y + w = x + pad`` for a window position ``w``: ``x + pad - w`` even. The
scratch result reads every element of every operand, as a GEMM's workspace does.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.hlo_import import dropped_attribute
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.ops.contraction import checked_groups, conv_maps
from hlo_indexing.ops.map_builders import dims, make_map, syms, whole_map
from hlo_indexing.ops.rule import OpInfo, RuleResult, UnknownIndexing

#: The cuDNN convolution targets, by the array each computes.
FORWARD_TARGETS = ("__cudnn$convForward", "__cudnn$convBiasActivationForward")
BACKWARD_INPUT_TARGET = "__cudnn$convBackwardInput"
BACKWARD_FILTER_TARGET = "__cudnn$convBackwardFilter"
TARGETS = (*FORWARD_TARGETS, BACKWARD_INPUT_TARGET, BACKWARD_FILTER_TARGET)

Shapes = tuple[op_attrs.Shape, op_attrs.Shape, op_attrs.Shape]


def cudnn_conv_output_to_input(info: OpInfo, target: str, result_index: int) -> RuleResult:
    """Output -> input maps of the cuDNN convolution custom call ``target`` (one of
    :data:`TARGETS`; see the module docstring)."""
    if result_index > 0:
        space = info.result(result_index)
        return [[whole_map(info.context, space, info.operand(k))] for k in range(info.num_operands)]
    if target in FORWARD_TARGETS:
        return _forward(info, target)
    if info.num_operands != 2:
        raise op_attrs.invalid(info.op, "operands", f"{target} takes 2 operands, not {info.num_operands}")
    if target == BACKWARD_INPUT_TARGET:
        shapes = (info.result(0), info.operand(1), info.operand(0))
        dn, window, groups = _convolution(info, shapes, target)
        return [[m] for m in _backward_input_maps(info.context, shapes, dn, window, groups)]
    shapes = (info.operand(0), info.result(0), info.operand(1))
    dn, window, groups = _convolution(info, shapes, target)
    return [[m] for m in _backward_filter_maps(info.context, shapes, dn, window, groups)]


def _forward(info: OpInfo, target: str) -> RuleResult:
    """The output reads the input and kernel as a convolution's; a bias at its output
    feature; a side input at its own index."""
    output = info.result(0)
    if not 2 <= info.num_operands <= 4:
        raise op_attrs.invalid(info.op, "operands", f"{target} takes 2 to 4 operands, not {info.num_operands}")
    shapes = (info.operand(0), info.operand(1), output)
    dn, window, groups = _convolution(info, shapes, target)
    out: list[list[IndexingMap]] = [[m] for m in conv_maps(info.context, shapes, dn, window, groups)]
    d = dims(len(output), info.context)
    if info.num_operands >= 3:
        if info.operand(2) != (output[dn.output_feature],):
            raise op_attrs.invalid(info.op, "operands", f"the bias {list(info.operand(2))} is not one value per output feature")
        out.append([make_map(info.context, output, [d[dn.output_feature]])])
    if info.num_operands == 4:
        if info.operand(3) != output:
            raise op_attrs.invalid(info.op, "operands", f"the side input {list(info.operand(3))} is not of the output's shape")
        out.append([make_map(info.context, output, d)])
    return out


def _convolution(
    info: OpInfo, shapes: Shapes, target: str
) -> tuple[op_attrs.ConvDimensions, op_attrs.Window, tuple[int, int]]:
    """The forward convolution's dimension numbers, window and (feature, batch) groups of
    the call ``target``, checked against its input, kernel and output ``shapes``: the
    output's spatial sizes must be the window's over the input. :class:`UnknownIndexing`
    for a backward call whose forward convolution dilates its input (cuDNN computes
    none; XLA does not write one)."""
    lhs, rhs, result = shapes
    dn = op_attrs.hlo_conv_dimensions(info.op, lhs, rhs, result)
    window = op_attrs.hlo_conv_window(info.op, tuple(rhs[k] for k in dn.kernel_spatial))
    if target not in FORWARD_TARGETS and any(base != 1 for base in window.base_dilations):
        raise UnknownIndexing(f"{target} with an input dilation ({list(window.base_dilations)}): cuDNN computes none")
    counts = (op_attrs.hlo_group_count(info.op, "feature_group_count"), op_attrs.hlo_group_count(info.op, "batch_group_count"))
    names = (dropped_attribute("feature_group_count"), dropped_attribute("batch_group_count"), dropped_attribute("dim_labels"))
    groups = checked_groups(info, shapes, dn, counts, names)
    implied = [
        _window_positions(lhs[i], size, stride, pad, base, dilation)
        for i, size, stride, pad, base, dilation in zip(
            dn.input_spatial, window.sizes, window.strides, window.padding, window.base_dilations, window.window_dilations
        )
    ]
    actual = [result[k] for k in dn.output_spatial]
    if implied != actual:
        raise op_attrs.invalid(
            info.op, dropped_attribute("window"), f"gives output spatial sizes {implied} over the input, the output has {actual}"
        )
    return dn, window, groups


def _window_positions(size: int, window: int, stride: int, pad: tuple[int, int], base: int, dilation: int) -> int:
    """How many positions a window takes over one spatial dimension (XLA's shape rule)."""
    padded = (size - 1) * base + 1 + pad[0] + pad[1] if size else pad[0] + pad[1]
    extent = (window - 1) * dilation + 1
    return 0 if padded < extent else (padded - extent) // stride + 1


def _backward_filter_maps(
    context: ir.Context, shapes: Shapes, dn: op_attrs.ConvDimensions, window: op_attrs.Window, groups: tuple[int, int]
) -> list[IndexingMap]:
    """Kernel -> (input, output) (no input dilation): a kernel element (window position ``w``, input feature
    ``c``, output feature ``o``) sums, over the output's batch ``b`` and positions ``y``
    (range variables), ``input[b, c of o's group, y * stride + w * dilation - pad]`` times
    ``output[b, o, y]`` where that input position is a real element."""
    lhs, rhs, result = shapes
    feature_groups, batch_groups = groups
    d = dims(len(rhs), context)
    out_features, out_batch = result[dn.output_feature], result[dn.output_batch]
    o, c = d[dn.kernel_output_feature], d[dn.kernel_input_feature]
    b, ys = ax.symbol(0, context), syms(len(dn.output_spatial), context, start=1)
    ranges = [out_batch] + [result[k] for k in dn.output_spatial]
    input_exprs: list[ir.AffineExpr] = [ax.constant(0, context)] * len(lhs)
    output_exprs: list[ir.AffineExpr] = [ax.constant(0, context)] * len(result)
    constraints: dict[ir.AffineExpr, Interval] = {}
    for j, y in enumerate(ys):
        k = d[dn.kernel_spatial[j]]
        tap = k * -1 + (window.sizes[j] - 1) if window.reversal[j] else k
        position = y * window.strides[j] + tap * window.window_dilations[j] - window.padding[j][0]
        input_exprs[dn.input_spatial[j]] = position
        constraints[position] = Interval(0, lhs[dn.input_spatial[j]] - 1)
        output_exprs[dn.output_spatial[j]] = y
    input_exprs[dn.input_batch] = b + ax.floordiv(o, out_features // batch_groups) * out_batch if batch_groups > 1 else b
    group_features = rhs[dn.kernel_input_feature]
    input_exprs[dn.input_feature] = (
        ax.floordiv(o, out_features // feature_groups) * group_features + c if feature_groups > 1 else c
    )
    output_exprs[dn.output_batch], output_exprs[dn.output_feature] = b, o
    return [
        make_map(context, rhs, input_exprs, ranges, constraints=constraints),
        make_map(context, rhs, output_exprs, ranges, constraints=constraints),
    ]


def _backward_input_maps(
    context: ir.Context, shapes: Shapes, dn: op_attrs.ConvDimensions, window: op_attrs.Window, groups: tuple[int, int]
) -> list[IndexingMap]:
    """Input -> (output, kernel) (no input dilation, no batch groups): an input element (batch ``b``, feature ``f``, position
    ``x``) sums, over the window positions ``w`` and the output features ``o`` of ``f``'s
    group (range variables), ``output[b, o, y]`` times ``kernel[w, f within its group, o]``
    for the output positions ``y`` whose window puts ``w`` on ``x``:
    ``y * stride = x + pad - w * dilation``."""
    lhs, rhs, result = shapes
    feature_groups, batch_groups = groups
    if batch_groups > 1:
        raise UnknownIndexing(f"{BACKWARD_INPUT_TARGET} with batch_group_count {batch_groups}: not a gradient cuDNN computes")
    d = dims(len(lhs), context)
    spatial = len(dn.input_spatial)
    ws, o_in_group = syms(spatial, context), ax.symbol(spatial, context)
    out_features = result[dn.output_feature]
    group_features = rhs[dn.kernel_input_feature]
    f = d[dn.input_feature]
    c: ir.AffineExpr
    o: ir.AffineExpr
    if feature_groups > 1:
        c, o = ax.mod(f, group_features), ax.floordiv(f, group_features) * (out_features // feature_groups) + o_in_group
    else:
        c, o = f, o_in_group
    ranges = list(window.sizes) + [out_features // feature_groups]
    output_exprs: list[ir.AffineExpr] = [ax.constant(0, context)] * len(result)
    kernel_exprs: list[ir.AffineExpr] = [ax.constant(0, context)] * len(rhs)
    constraints: dict[ir.AffineExpr, Interval] = {}
    for j, w in enumerate(ws):
        stride = window.strides[j]
        offset = d[dn.input_spatial[j]] + window.padding[j][0] - w * window.window_dilations[j]
        y = ax.floordiv(offset, stride) if stride > 1 else offset
        if stride > 1:
            constraints[ax.mod(offset, stride)] = Interval(0, 0)
        constraints[y] = Interval(0, result[dn.output_spatial[j]] - 1)
        output_exprs[dn.output_spatial[j]] = y
        kernel_exprs[dn.kernel_spatial[j]] = w * -1 + (window.sizes[j] - 1) if window.reversal[j] else w
    output_exprs[dn.output_batch], output_exprs[dn.output_feature] = d[dn.input_batch], o
    kernel_exprs[dn.kernel_input_feature], kernel_exprs[dn.kernel_output_feature] = c, o
    return [
        make_map(context, lhs, output_exprs, ranges, constraints=constraints),
        make_map(context, lhs, kernel_exprs, ranges, constraints=constraints),
    ]
