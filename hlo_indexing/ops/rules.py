"""The table op kind -> indexing rule, shared by StableHLO, MHLO and CHLO (a kind is the
op name without its dialect: ``stablehlo.add`` and ``mhlo.add`` are both ``add``).
Ops missing from the table get ``unknown indexing``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hlo_indexing.dialect_glue.call_like import CALL_LIKE_OPS
from hlo_indexing.dialect_glue.op_attrs import HLO_DIALECTS
from hlo_indexing.ops import (
    calls,
    collectives,
    contraction,
    custom_calls,
    dynamic,
    elementwise,
    linalg,
    loops,
    misc,
    reduction,
    scan,
    shape_ops,
    sorting,
)


@dataclass(frozen=True)
class Rule:
    """``output_to_input(info, result_index)`` returns one entry per operand,
    ``input_to_output(info, operand_index)`` one per result; each entry is a list of
    maps or an :class:`~hlo_indexing.ops.builders.Entry`. ``replicas`` (for
    collectives) gives the replica-id map of a result."""

    output_to_input: Callable
    input_to_output: Callable
    replicas: Callable | None = None


ELEMENTWISE_KINDS = frozenset(
    """abs acos acosh add and asin asinh atan atan2 atanh bessel_i1e cbrt ceil clamp compare
    complex conj convert copy cosh cosine count_leading_zeros digamma divide erf erf_inv erfc
    exponential exponential_minus_one floor imag is_finite is_inf is_neg_inf is_pos_inf lgamma
    log log_plus_one logistic map maximum minimum mulhi multiply negate next_after not or
    polygamma popcnt power real reduce_precision remainder round_nearest_afz
    round_nearest_even rsqrt select shift_left shift_right_arithmetic shift_right_logical sign
    sine sinh sqrt square stochastic_convert subtract tan tanh uniform_dequantize
    uniform_quantize xor zeta""".split()
)

#: Kinds whose maps depend on the op's body (it is part of their cache key).
BODY_KINDS = frozenset({"scan"})

#: Ops whose maps depend on more than the op itself (a callee's body elsewhere in the
#: module, loop bounds computed before the loop): never cached.
CONTEXT_KINDS = frozenset({"while", "case", "if"})

#: The rule of every call-like op (:data:`~hlo_indexing.dialect_glue.call_like.CALL_LIKE_OPS`).
CALL = Rule(calls.call, calls.call_inverse)

#: Kinds known to be beyond per-op affine indexing, with the reason.
UNKNOWN_KINDS = {
    "rng": "random number generation",
    "rng_bit_generator": "random number generation",
    "dynamic_broadcast_in_dim": "dynamic shapes",
    "dynamic_conv": "dynamic shapes",
    "dynamic_gather": "dynamic shapes",
    "dynamic_iota": "dynamic shapes",
    "dynamic_pad": "dynamic shapes",
    "dynamic_reshape": "dynamic shapes",
    "real_dynamic_slice": "dynamic shapes",
    "set_dimension_size": "dynamic shapes",
    "get_dimension_size": "dynamic shapes",
}

RULES: dict[str, Rule] = {}

#: Shardy ops that only annotate a value (JAX's ``with_sharding_constraint``): result
#: ``i`` is operand ``i``.
SDY_IDENTITY_KINDS = frozenset({"sharding_constraint", "reshard", "propagation_barrier"})
SDY_IDENTITY = Rule(elementwise.pairwise, elementwise.pairwise_inverse)


def _register(kinds, forward, inverse, replicas=None) -> None:
    for kind in kinds if isinstance(kinds, (list, tuple, frozenset, set)) else [kinds]:
        RULES[kind] = Rule(forward, inverse, replicas)


_register(ELEMENTWISE_KINDS, elementwise.elementwise, elementwise.elementwise_inverse)
_register(
    [k for k in """broadcast_add broadcast_and broadcast_atan2 broadcast_compare broadcast_complex
    broadcast_divide broadcast_maximum broadcast_minimum broadcast_multiply broadcast_next_after
    broadcast_or broadcast_polygamma broadcast_power broadcast_remainder broadcast_select
    broadcast_shift_left broadcast_shift_right_arithmetic broadcast_shift_right_logical
    broadcast_subtract broadcast_xor broadcast_zeta""".split()],
    elementwise.broadcasting,
    elementwise.broadcasting_inverse,
)
_register("optimization_barrier", elementwise.pairwise, elementwise.pairwise_inverse)
_register("bitcast_convert", elementwise.bitcast_convert, elementwise.bitcast_convert_inverse)
_register(["broadcast_in_dim", "broadcast"], shape_ops.broadcast, shape_ops.broadcast_inverse)
_register("transpose", shape_ops.transpose, shape_ops.transpose_inverse)
_register("reverse", shape_ops.reverse, shape_ops.reverse_inverse)
_register("slice", shape_ops.slice_, shape_ops.slice_inverse)
_register("reshape", shape_ops.reshape, shape_ops.reshape_inverse)
_register("bitcast", shape_ops.bitcast, shape_ops.bitcast_inverse)
_register("concatenate", shape_ops.concatenate, shape_ops.concatenate_inverse)
_register("pad", shape_ops.pad, shape_ops.pad_inverse)
_register(["constant", "iota"], shape_ops.no_operands, shape_ops.no_operands)
_register("get_tuple_element", shape_ops.get_tuple_element, shape_ops.get_tuple_element_inverse)
_register("tuple", shape_ops.tuple_, shape_ops.tuple_inverse)
_register("reduce", reduction.reduce, reduction.reduce_inverse)
_register("reduce_window", reduction.reduce_window, reduction.reduce_window_inverse)
_register("sort", reduction.sort, reduction.sort_inverse)
_register("scan", scan.scan, scan.scan_inverse)
_register("select_and_scatter", reduction.select_and_scatter, reduction.select_and_scatter_inverse)
_register(["dot", "dot_general"], contraction.dot, contraction.dot_inverse)
_register("convolution", contraction.convolution, contraction.convolution_inverse)
_register("dynamic_slice", dynamic.dynamic_slice, dynamic.dynamic_slice_inverse)
_register("dynamic_update_slice", dynamic.dynamic_update_slice, dynamic.dynamic_update_slice_inverse)
_register("gather", dynamic.gather, dynamic.gather_inverse)
_register("scatter", dynamic.scatter, dynamic.scatter_inverse)
_register("top_k", sorting.top_k, sorting.top_k_inverse)
_register("while", loops.while_, loops.while_inverse)
_register(["case", "if"], loops.case, loops.case_inverse)
_register("custom_call", custom_calls.custom_call, custom_calls.custom_call_inverse)
_register("fft", linalg.fft, linalg.fft_inverse)
_register("cholesky", linalg.cholesky, linalg.cholesky_inverse)
_register("triangular_solve", linalg.triangular_solve, linalg.triangular_solve_inverse)
_register("all_gather", collectives.all_gather, collectives.all_gather_inverse, collectives.all_gather_replicas)
_register(["all_reduce", "cross-replica-sum"], collectives.all_reduce, collectives.all_reduce_inverse, collectives.every_device)
_register("reduce_scatter", collectives.reduce_scatter, collectives.reduce_scatter_inverse, collectives.every_device)
_register("all_to_all", collectives.all_to_all, collectives.all_to_all_inverse, collectives.all_to_all_replicas)
_register("collective_permute", collectives.collective_permute, collectives.collective_permute_inverse)
_register(
    "collective_broadcast", collectives.collective_permute, collectives.collective_permute_inverse, collectives.first_device
)
for _kind, _reason in UNKNOWN_KINDS.items():
    _register(_kind, *misc.unknown(_reason))


def rule_for(dialect: str, kind: str) -> Rule:
    """The rule of an op kind of the StableHLO/MHLO/CHLO dialects, of a call-like op
    and of Shardy's annotations; an *unknown* rule for kinds without one and for ops of
    other dialects (``tosa.transpose`` is not ``stablehlo.transpose``)."""
    if f"{dialect}.{kind}" in CALL_LIKE_OPS:
        return CALL
    if dialect == "sdy" and kind in SDY_IDENTITY_KINDS:
        return SDY_IDENTITY
    if dialect not in HLO_DIALECTS:
        return Rule(*misc.unknown("not a StableHLO, MHLO or CHLO op"))
    rule = RULES.get(kind)
    if rule is None:
        rule = Rule(*misc.unknown("no indexing rule for this op"))
    return rule
