"""Malformed op attributes (issue #15): whatever attribute of whatever op is wrong, the
per-op analysis raises an :class:`InvalidAttributeError` that names the op and the
attribute and points at the op, never an ``IndexError``/``ValueError`` of a rule and
never a map outside the operand's shape.

Most malformed attributes never reach us through text (the StableHLO/MHLO verifiers
reject them), but a caller's module need not be verified, and some slip through (an
empty ``lhs_dilation``, bitcast layouts). Each case parses a valid module, checks that
its maps stay inside the operand shapes (enumerated), then replaces one attribute through
the bindings, as a caller's pass could, and analyses the unverified op in both directions.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from hlo_indexing.analysis.per_op import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import InvalidAttributeError, InvalidInputError
from hlo_indexing.ops import dispatch

#: (id, function body line defining %0 from the arguments, argument types, result type,
#:  attribute, malformed value, expected problem)
CASES = [
    (
        "dot contracting out of range",
        'stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>',
        ["tensor<4x3xf32>", "tensor<3x5xf32>"], "tensor<4x5xf32>",
        "dot_dimension_numbers", "#stablehlo.dot<lhs_contracting_dimensions = [5], rhs_contracting_dimensions = [0]>",
        r"names dimension 5, outside \[0, 2\)",
    ),
    (
        "dot contracting sizes differ",
        'stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>',
        ["tensor<4x3xf32>", "tensor<3x5xf32>"], "tensor<4x5xf32>",
        "dot_dimension_numbers", "#stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>",
        r"pairs lhs dimension 0 \(size 4\) with rhs dimension 0 \(size 3\)",
    ),
    (
        "dot batching unpaired",
        'stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>',
        ["tensor<4x3xf32>", "tensor<3x5xf32>"], "tensor<4x5xf32>",
        "dot_dimension_numbers",
        "#stablehlo.dot<lhs_batching_dimensions = [0], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>",
        "pairs 1 lhs with 0 rhs batching dimensions",
    ),
    (
        "conv dimension numbers repeat a dimension",
        CONV := "stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]}"
        " {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
        " : (tensor<1x6x5x4xf32>, tensor<3x2x4x8xf32>) -> tensor<1x4x4x8xf32>",
        ["tensor<1x6x5x4xf32>", "tensor<3x2x4x8xf32>"], "tensor<1x4x4x8xf32>",
        "dimension_numbers", None, None,  # CONV_REPEATED below
    ),
    (
        "conv stride zero",
        CONV, ["tensor<1x6x5x4xf32>", "tensor<3x2x4x8xf32>"], "tensor<1x4x4x8xf32>",
        "window_strides", "array<i64: 1, 0>", r"has entry 0, expected at least 1",
    ),
    (
        "conv empty lhs_dilation",
        CONV, ["tensor<1x6x5x4xf32>", "tensor<3x2x4x8xf32>"], "tensor<1x4x4x8xf32>",
        "lhs_dilation", "array<i64>", "has 0 entries, expected 2",
    ),
    (
        "conv padding of the wrong rank",
        CONV, ["tensor<1x6x5x4xf32>", "tensor<3x2x4x8xf32>"], "tensor<1x4x4x8xf32>",
        "padding", "dense<0> : tensor<1x2xi64>", "has 2 entries, expected 4",
    ),
    (
        "conv feature groups",
        CONV, ["tensor<1x6x5x4xf32>", "tensor<3x2x4x8xf32>"], "tensor<1x4x4x8xf32>",
        "feature_group_count", "3 : i64", "does not split 4 input features",
    ),
    (
        "conv batch groups zero",
        CONV, ["tensor<1x6x5x4xf32>", "tensor<3x2x4x8xf32>"], "tensor<1x4x4x8xf32>",
        "batch_group_count", "0 : i64", "has entry 0, expected at least 1",
    ),
    (
        "gather offset dim out of range",
        GATHER := '"stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],'
        " start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}>"
        " : (tensor<5x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>",
        ["tensor<5x3xf32>", "tensor<2x1xi32>"], "tensor<2x3xf32>",
        "dimension_numbers",
        "#stablehlo.gather<offset_dims = [4], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>",
        r"offset_dims \[4\] names dimension 4, outside \[0, 2\)",
    ),
    (
        "gather index_vector_dim out of range",
        GATHER, ["tensor<5x3xf32>", "tensor<2x1xi32>"], "tensor<2x3xf32>",
        "dimension_numbers",
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 7>",
        r"index_vector_dim 7 is outside \[0, 2\]",
    ),
    (
        "gather start_index_map too long",
        GATHER, ["tensor<5x3xf32>", "tensor<2x1xi32>"], "tensor<2x3xf32>",
        "dimension_numbers",
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>",
        "start_index_map has 2 entries for an index vector of 1",
    ),
    (
        "gather slice larger than the operand",
        GATHER, ["tensor<5x3xf32>", "tensor<2x1xi32>"], "tensor<2x3xf32>",
        "slice_sizes", "array<i64: 1, 4>", "slice size 4 exceeds operand dimension 1 of size 3",
    ),
    (
        "scatter update window out of range",
        SCATTER := "%u = stablehlo.constant dense<1.0> : tensor<2x3xf32>\n"
        '  %0 = "stablehlo.scatter"(%a, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],'
        " inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    stablehlo.return %y : tensor<f32>\n  })"
        " : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>",
        ["tensor<5x3xf32>", "tensor<2x1xi32>"], "tensor<5x3xf32>",
        "scatter_dimension_numbers",
        "#stablehlo.scatter<update_window_dims = [3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>",
        r"update_window_dims \[3\] names dimension 3, outside \[0, 2\)",
    ),
    (
        "scatter dims to operand dims repeat",
        SCATTER, ["tensor<5x3xf32>", "tensor<2x1xi32>"], "tensor<5x3xf32>",
        "scatter_dimension_numbers",
        "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0, 0], index_vector_dim = 1>",
        r"repeats a dimension",
    ),
    (
        "broadcast dimension out of range",
        BROADCAST := "stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>",
        ["tensor<3xf32>"], "tensor<2x3xf32>",
        "broadcast_dimensions", "array<i64: 5>", r"names dimension 5, outside \[0, 2\)",
    ),
    (
        "broadcast dimension of another size",
        BROADCAST, ["tensor<3xf32>"], "tensor<2x3xf32>",
        "broadcast_dimensions", "array<i64: 0>", r"maps operand dimension 0 \(size 3\) to result dimension 0 \(size 2\)",
    ),
    (
        "broadcast dimensions too many",
        BROADCAST, ["tensor<3xf32>"], "tensor<2x3xf32>",
        "broadcast_dimensions", "array<i64: 1, 0>", "has 2 entries, expected 1",
    ),
    (
        "transpose permutation repeats",
        TRANSPOSE := "stablehlo.transpose %a, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>",
        ["tensor<4x3xf32>"], "tensor<3x4xf32>",
        "permutation", "array<i64: 0, 0>", r"\[0, 0\] is not a permutation of the 2 dimensions",
    ),
    (
        "transpose permutation of the wrong shape",
        TRANSPOSE, ["tensor<4x3xf32>"], "tensor<3x4xf32>",
        "permutation", "array<i64: 0, 1>", r"\[0, 1\] of \[4, 3\] is not the result shape \[3, 4\]",
    ),
    (
        "slice start past the operand",
        SLICE := "stablehlo.slice %a [1:5:2, 0:3] : (tensor<6x3xf32>) -> tensor<2x3xf32>",
        ["tensor<6x3xf32>"], "tensor<2x3xf32>",
        "start_indices", "array<i64: 9, 0>", "2 result elements leave operand dimension 0 of size 6",
    ),
    (
        "slice stride zero",
        SLICE, ["tensor<6x3xf32>"], "tensor<2x3xf32>",
        "strides", "array<i64: 0, 1>", "has entry 0, expected at least 1",
    ),
    (
        "slice stride too long",
        SLICE, ["tensor<6x3xf32>"], "tensor<2x3xf32>",
        "strides", "array<i64: 7, 1>", "2 result elements leave operand dimension 0 of size 6",
    ),
    (
        "slice limit past the operand",
        SLICE, ["tensor<6x3xf32>"], "tensor<2x3xf32>",
        "limit_indices", "array<i64: 5, 9>", r"limit 9 of dimension 1 is outside \[0, 3\]",
    ),
    (
        "slice starts of the wrong rank",
        SLICE, ["tensor<6x3xf32>"], "tensor<2x3xf32>",
        "start_indices", "array<i64: 1>", "has 1 entries, expected 2",
    ),
    (
        "pad low of the wrong rank",
        PAD := "%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %0 = stablehlo.pad %a, %z, low = [1, 0], high = [0, 1], interior = [1, 0]"
        " : (tensor<3x2xf32>, tensor<f32>) -> tensor<6x3xf32>",
        ["tensor<3x2xf32>"], "tensor<6x3xf32>",
        "edge_padding_low", "array<i64: 1>", "has 1 entries, expected 2",
    ),
    (
        "pad high of the wrong rank",
        PAD, ["tensor<3x2xf32>"], "tensor<6x3xf32>",
        "edge_padding_high", "array<i64: 1, 2, 3>", "has 3 entries, expected 2",
    ),
    (
        "pad negative interior",
        PAD, ["tensor<3x2xf32>"], "tensor<6x3xf32>",
        "interior_padding", "array<i64: -1, 0>", "has entry -1, expected at least 0",
    ),
    (
        "reduce dimension out of range",
        REDUCE := "%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]"
        " : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>",
        ["tensor<4x3xf32>"], "tensor<4xf32>",
        "dimensions", "array<i64: 3>", r"names dimension 3, outside \[0, 2\)",
    ),
    (
        "reduce dimension leaving another shape",
        REDUCE, ["tensor<4x3xf32>"], "tensor<4xf32>",
        "dimensions", "array<i64: 0>", r"leave \[3\], result 0 is \[4\]",
    ),
    (
        "reduce_window size zero",
        "%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        '  %0 = "stablehlo.reduce_window"(%a, %z) <{window_dimensions = array<i64: 2, 1>}> ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %s = stablehlo.add %x, %y : tensor<f32>\n"
        "    stablehlo.return %s : tensor<f32>\n  }) : (tensor<4x3xf32>, tensor<f32>) -> tensor<3x3xf32>",
        ["tensor<4x3xf32>"], "tensor<3x3xf32>",
        "window_dimensions", "array<i64: 0, 1>", "has entry 0, expected at least 1",
    ),
    (
        "concatenate dimension out of range",
        "stablehlo.concatenate %a, %a, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
        ["tensor<2x3xf32>"], "tensor<4x3xf32>",
        "dimension", "4 : i64", r"is dimension 4, outside \[0, 2\) for rank 2",
    ),
    (
        "reverse dimension out of range",
        "stablehlo.reverse %a, dims = [1] : tensor<2x3xf32>",
        ["tensor<2x3xf32>"], "tensor<2x3xf32>",
        "dimensions", "array<i64: 2>", r"names dimension 2, outside \[0, 2\)",
    ),
    (
        "sort dimension out of range",
        '"stablehlo.sort"(%a) <{dimension = 1 : i64}> ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>",
        ["tensor<2x3xf32>"], "tensor<2x3xf32>",
        "dimension", "5 : i64", r"is dimension 5, outside \[-2, 2\)",
    ),
    (
        "all_gather dimension out of range",
        '"stablehlo.all_gather"(%a) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}>'
        " : (tensor<2x3xf32>) -> tensor<2x6xf32>",
        ["tensor<2x3xf32>"], "tensor<2x6xf32>",
        "all_gather_dim", "0 : i64", "operand 0 \\[2, 3\\] does not tile result \\[2, 6\\]",
    ),
    (
        "all_to_all split count",
        '"stablehlo.all_to_all"(%a) <{split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 3 : i64,'
        " replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>}> : (tensor<2x6xf32>) -> tensor<6x2xf32>",
        ["tensor<2x6xf32>"], "tensor<6x2xf32>",
        "split_count", "0 : i64", "has entry 0, expected at least 1",
    ),
    (
        "chlo broadcast dimension out of range",
        "chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
        ["tensor<3xf32>", "tensor<2x3xf32>"], "tensor<2x3xf32>",
        "broadcast_dimensions", "array<i64: 2>", r"names dimension 2, outside \[0, 2\)",
    ),
]

#: A convolution whose dimension numbers repeat the input's batch dimension (the
#: attribute's parser refuses that in the short form; the generic form takes it).
CONV_REPEATED = (
    "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [0, 2],"
    " kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1],"
    " output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>"
)


def _module(body: str, arguments: list[str], result: str) -> str:
    names = ["%a", "%i" if "gather" in body or "scatter" in body else "%b"]
    params = ", ".join(f"{n}: {t}" for n, t in zip(names, arguments))
    first = "" if body.lstrip().startswith("%") else "%0 = "
    return f"func.func @main({params}) -> {result} {{\n  {first}{body}\n  return %0 : {result}\n}}"


def _target_op(module: ir.Module) -> ir.Operation:
    func = module.body.operations[0]
    return next(op.operation for op in func.regions[0].blocks[0].operations if op.operation.name != "stablehlo.constant")


def _static_shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _maps_stay_inside(op: ir.Operation) -> None:
    """Every map of the valid op, enumerated, lands inside its target's shape."""
    for r in range(len(op.results)):
        for k, maps in enumerate(output_to_input_indexing(op, r).maps):
            for m in maps:
                if m.is_undefined or m.is_known_empty():
                    continue
                _points, images = m.enumerate(100_000)
                shape = np.array(_static_shape(op.operands[k]), dtype=np.int64)
                assert images.size == 0 or ((images >= 0).all() and (images < shape).all()), f"{op.name}: {m}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_malformed_attribute_names_op_and_attribute(case) -> None:
    _name, body, arguments, result, attribute, bad, problem = case
    if problem is None:
        bad, problem = CONV_REPEATED, r"input dimensions \[0, 3, 0, 2\] repeats a dimension"
    with make_context():
        module = parse_module(_module(body, arguments, result), filename="case.mlir")
        op = _target_op(module)
        _maps_stay_inside(op)  # the valid op analyses, inside the shapes
        op.attributes[attribute] = ir.Attribute.parse(bad)
        dispatch.clear_cache()
        for analyse, count in ((output_to_input_indexing, len(op.results)), (input_to_output_indexing, len(op.operands))):
            errors = []
            for index in range(count):  # each operand/result either does not read the attribute or fails
                try:
                    analyse(op, index)
                except InvalidAttributeError as exc:
                    errors.append(exc)
            assert errors, f"{analyse.__name__}: no error"
            for error in errors:
                assert (error.op, error.attribute) == (op.name, attribute)
                assert f"{op.name}: attribute '{attribute}'" in str(error)
                assert error.location is not None  # the op's position (a module parsed from a string is "<string>")
                assert f'"-":{error.location.line}:{error.location.column}' in str(op.location)
                assert re.search(problem, error.message), error.message


def test_missing_attribute_is_named() -> None:
    with make_context():
        module = parse_module(_module(TRANSPOSE, ["tensor<4x3xf32>"], "tensor<3x4xf32>"))
        op = _target_op(module)
        del op.attributes["permutation"]
        with pytest.raises(InvalidAttributeError, match="stablehlo.transpose: attribute 'permutation' is missing"):
            output_to_input_indexing(op, 0)


def test_an_attribute_of_another_kind_is_named() -> None:
    """Inherent attributes of the wrong kind cannot be set through the bindings (they
    vanish); a discardable one read as integers can."""
    with make_context():
        module = parse_module(_module(TRANSPOSE, ["tensor<4x3xf32>"], "tensor<3x4xf32>"))
        op = _target_op(module)
        op.attributes["some_list"] = ir.StringAttr.get("zero, one")
        with pytest.raises(InvalidAttributeError, match="attribute 'some_list' is not a list of integers: \"zero, one\""):
            op_attrs.int_array(op, "some_list")
        op.attributes["some_list"] = ir.Attribute.parse("array<i64: 1, 2>")
        with pytest.raises(InvalidAttributeError, match="attribute 'some_list' is not a single integer: \\[1, 2\\]"):
            op_attrs.int_attr(op, "some_list")
        with pytest.raises(InvalidAttributeError, match="attribute 'some_list' \\[1, 2\\] names dimension 2, outside \\[0, 2\\)"):
            op_attrs.dimension_array(op, "some_list", 2)


def test_a_rule_tripping_over_an_unchecked_attribute_names_what_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net for attributes no reader checks: the error names the attributes the
    rule read (the last one first), at the op."""
    class Rule:
        replicas = None

        @staticmethod
        def output_to_input(info, index):
            op_attrs.int_array(info.op, "some_list", (1,))
            return [[None]] * op_attrs.int_array(info.op, "permutation")[5]

    with make_context():
        module = parse_module(_module(TRANSPOSE, ["tensor<4x3xf32>"], "tensor<3x4xf32>"), filename="net.mlir")
        op = _target_op(module)
        monkeypatch.setattr(dispatch, "rule_for", lambda dialect, kind: Rule)
        dispatch.clear_cache()
        with pytest.raises(InvalidAttributeError) as info:
            output_to_input_indexing(op, 0)
        assert info.value.attribute == "permutation"
        assert "read with 'some_list'" in info.value.message and "IndexError" in info.value.message
        assert info.value.location is not None and info.value.location.line == 2
        monkeypatch.setattr(dispatch, "rule_for", lambda dialect, kind: type("R", (Rule,), {"output_to_input": staticmethod(lambda i, k: [][0])}))
        dispatch.clear_cache()
        with pytest.raises(InvalidInputError, match="malformed op") as plain:  # no attribute read: the op is named
            output_to_input_indexing(op, 0)
        assert not isinstance(plain.value, InvalidAttributeError)


def test_custom_call_frontend_attribute_is_named() -> None:
    """A ``num_batch_dims`` frontend attribute that is not a batch count (a discardable
    attribute: a caller can write anything there)."""
    text = (
        "func.func @main(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {\n"
        "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8},"
        ' mhlo.frontend_attributes = {num_batch_dims = "1"}} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)\n'
        "  return %0#0 : tensor<2x3x3xf32>\n}"
    )
    with make_context():
        module = parse_module(text)
        op = _target_op(module)
        _maps_stay_inside(op)
        for bad in ('{num_batch_dims = "one"}', '{num_batch_dims = "2"}', "{num_batch_dims = 1 : i64}"):
            op.attributes["mhlo.frontend_attributes"] = ir.Attribute.parse(bad)
            dispatch.clear_cache()
            with pytest.raises(InvalidAttributeError, match="attribute 'mhlo.frontend_attributes' num_batch_dims .* is not a batch count"):
                output_to_input_indexing(op, 0)
