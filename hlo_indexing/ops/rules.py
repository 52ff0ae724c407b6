"""The table op kind -> indexing rule, shared by StableHLO, MHLO and CHLO (a kind is the
op name without its dialect: ``stablehlo.add`` and ``mhlo.add`` are both ``add``).
Ops missing from the table get ``unknown indexing``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from hlo_indexing.dialect_glue.call_like import CALL_LIKE_OPS
from hlo_indexing.dialect_glue.op_attrs import HLO_DIALECTS
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops import (
    calls,
    collectives,
    contraction,
    custom_calls,
    dynamic,
    elementwise,
    linalg,
    loops,
    manual_computation,
    random_numbers,
    reduction,
    scan,
    shape_ops,
    sorting,
)
from hlo_indexing.ops.rule import OpInfo, RuleResult, unknown

class OutputToInputRule(Protocol):
    """``rule(info, result_index)``: for result ``result_index`` of the op described by
    ``info``, one entry per operand (the operand elements each result element reads).
    May raise :class:`~hlo_indexing.ops.map_builders.UnknownIndexing`."""

    def __call__(self, info: OpInfo, result_index: int, /) -> RuleResult: ...


class InputToOutputRule(Protocol):
    """``rule(info, operand_index)``: for operand ``operand_index``, one entry per result
    (the result elements each operand element contributes to). May raise
    :class:`~hlo_indexing.ops.map_builders.UnknownIndexing`."""

    def __call__(self, info: OpInfo, operand_index: int, /) -> RuleResult: ...


class ReplicaRule(Protocol):
    """``rule(info, result_index)``: the map from result ``result_index``'s index space to
    the id of the replica whose operand each element reads (collectives)."""

    def __call__(self, info: OpInfo, result_index: int, /) -> IndexingMap: ...


@dataclass(frozen=True)
class Rule:
    """The indexing rule of an op kind, one function per direction; ``replicas`` (for
    collectives) gives the replica-id map of a result."""

    output_to_input: OutputToInputRule
    input_to_output: InputToOutputRule
    replicas: ReplicaRule | None = None


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
#: module, loop bounds computed before the loop, a mesh): never cached.
CONTEXT_KINDS = frozenset({"while", "case", "if", "manual_computation"})

#: Kinds known to be beyond per-op affine indexing, with the reason.
UNKNOWN_KINDS = {
    "dynamic_broadcast_in_dim": "dynamic shapes",
    "dynamic_conv": "dynamic shapes",
    "dynamic_gather": "dynamic shapes",
    "dynamic_iota": "dynamic shapes",
    "dynamic_pad": "dynamic shapes",
    "dynamic_reshape": "dynamic shapes",
    "real_dynamic_slice": "dynamic shapes",
    "set_dimension_size": "dynamic shapes",
    "get_dimension_size": "dynamic shapes",
    # its result is a bundle, not a tensor: the computation's maps are its done op's
    "async_start": "an asynchronous start: the maps of its computation are its async_done's",
    "async_update": "an asynchronous update: the maps of its computation are its async_done's",
}

RULES: dict[str, Rule] = {}

#: The rule of every call-like op (:data:`~hlo_indexing.dialect_glue.call_like.CALL_LIKE_OPS`).
CALL = Rule(calls.call_output_to_input, calls.call_input_to_output)

#: Shardy ops that only annotate a value (JAX's ``with_sharding_constraint``): result
#: ``i`` is operand ``i``.
SDY_IDENTITY_KINDS = frozenset({"sharding_constraint", "reshard", "propagation_barrier"})
SDY_IDENTITY = Rule(elementwise.pairwise_output_to_input, elementwise.pairwise_input_to_output)
#: ``sdy.manual_computation`` (``shard_map``): global maps from its body's per-device maps.
MANUAL_COMPUTATION = Rule(manual_computation.manual_output_to_input, manual_computation.manual_input_to_output)


def _register(
    kinds: str | Iterable[str],
    output_to_input: OutputToInputRule,
    input_to_output: InputToOutputRule,
    replicas: ReplicaRule | None = None,
) -> None:
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        RULES[kind] = Rule(output_to_input, input_to_output, replicas)


_register(ELEMENTWISE_KINDS, elementwise.elementwise_output_to_input, elementwise.elementwise_input_to_output)
_register(
    [k for k in """broadcast_add broadcast_and broadcast_atan2 broadcast_compare broadcast_complex
    broadcast_divide broadcast_maximum broadcast_minimum broadcast_multiply broadcast_next_after
    broadcast_or broadcast_polygamma broadcast_power broadcast_remainder broadcast_select
    broadcast_shift_left broadcast_shift_right_arithmetic broadcast_shift_right_logical
    broadcast_subtract broadcast_xor broadcast_zeta""".split()],
    elementwise.broadcasting_output_to_input,
    elementwise.broadcasting_input_to_output,
)
_register("optimization_barrier", elementwise.pairwise_output_to_input, elementwise.pairwise_input_to_output)
_register("add_dependency", elementwise.pairwise_output_to_input, elementwise.add_dependency_input_to_output)
_register("bitcast_convert", elementwise.bitcast_convert_output_to_input, elementwise.bitcast_convert_input_to_output)
_register(["broadcast_in_dim", "broadcast"], shape_ops.broadcast_output_to_input, shape_ops.broadcast_input_to_output)
_register("transpose", shape_ops.transpose_output_to_input, shape_ops.transpose_input_to_output)
_register("reverse", shape_ops.reverse_output_to_input, shape_ops.reverse_input_to_output)
_register("slice", shape_ops.slice_output_to_input, shape_ops.slice_input_to_output)
_register("reshape", shape_ops.reshape_output_to_input, shape_ops.reshape_input_to_output)
_register("bitcast", shape_ops.bitcast_output_to_input, shape_ops.bitcast_input_to_output)
_register("concatenate", shape_ops.concatenate_output_to_input, shape_ops.concatenate_input_to_output)
_register("pad", shape_ops.pad_output_to_input, shape_ops.pad_input_to_output)
_register(["constant", "iota"], shape_ops.no_operands, shape_ops.no_operands)
_register("get_tuple_element", shape_ops.get_tuple_element_output_to_input, shape_ops.get_tuple_element_input_to_output)
_register("tuple", shape_ops.tuple_output_to_input, shape_ops.tuple_input_to_output)
_register("reduce", reduction.reduce_output_to_input, reduction.reduce_input_to_output)
_register("reduce_window", reduction.reduce_window_output_to_input, reduction.reduce_window_input_to_output)
_register("sort", reduction.sort_output_to_input, reduction.sort_input_to_output)
_register("scan", scan.scan_output_to_input, scan.scan_input_to_output)
_register("select_and_scatter", reduction.select_and_scatter_output_to_input, reduction.select_and_scatter_input_to_output)
_register(["dot", "dot_general"], contraction.dot_output_to_input, contraction.dot_input_to_output)
_register("convolution", contraction.convolution_output_to_input, contraction.convolution_input_to_output)
_register("dynamic_slice", dynamic.dynamic_slice_output_to_input, dynamic.dynamic_slice_input_to_output)
_register("dynamic_update_slice", dynamic.dynamic_update_slice_output_to_input, dynamic.dynamic_update_slice_input_to_output)
_register("gather", dynamic.gather_output_to_input, dynamic.gather_input_to_output)
_register("scatter", dynamic.scatter_output_to_input, dynamic.scatter_input_to_output)
_register("top_k", sorting.top_k_output_to_input, sorting.top_k_input_to_output)
_register("while", loops.while_output_to_input, loops.while_input_to_output)
_register(["case", "if"], loops.case_output_to_input, loops.case_input_to_output)
_register("custom_call", custom_calls.custom_call_output_to_input, custom_calls.custom_call_input_to_output)
_register("rng", random_numbers.rng_output_to_input, random_numbers.rng_input_to_output)
_register(
    "rng_bit_generator",
    random_numbers.rng_bit_generator_output_to_input,
    random_numbers.rng_bit_generator_input_to_output,
)
_register("fft", linalg.fft_output_to_input, linalg.fft_input_to_output)
_register("cholesky", linalg.cholesky_output_to_input, linalg.cholesky_input_to_output)
_register("triangular_solve", linalg.triangular_solve_output_to_input, linalg.triangular_solve_input_to_output)
_register(
    "all_gather",
    collectives.all_gather_output_to_input,
    collectives.all_gather_input_to_output,
    collectives.all_gather_replicas,
)
_register(
    ["all_reduce", "cross-replica-sum"],
    collectives.all_reduce_output_to_input,
    collectives.all_reduce_input_to_output,
    collectives.every_device,
)
_register(
    "reduce_scatter",
    collectives.reduce_scatter_output_to_input,
    collectives.reduce_scatter_input_to_output,
    collectives.every_device,
)
_register(
    "all_to_all",
    collectives.all_to_all_output_to_input,
    collectives.all_to_all_input_to_output,
    collectives.all_to_all_replicas,
)
_register(
    "collective_permute", collectives.collective_permute_output_to_input, collectives.collective_permute_input_to_output
)
_register(
    "collective_broadcast",
    collectives.collective_permute_output_to_input,
    collectives.collective_permute_input_to_output,
    collectives.first_device,
)
for _kind, _reason in UNKNOWN_KINDS.items():
    _register(_kind, *unknown(_reason))


def rule_for(dialect: str, kind: str) -> Rule:
    """The rule of an op kind of the StableHLO/MHLO/CHLO dialects, of a call-like op
    and of Shardy's annotations; an *unknown* rule for kinds without one and for ops of
    other dialects (``tosa.transpose`` is not ``stablehlo.transpose``)."""
    if f"{dialect}.{kind}" in CALL_LIKE_OPS:
        return CALL
    if dialect == "sdy" and kind in SDY_IDENTITY_KINDS:
        return SDY_IDENTITY
    if dialect == "sdy" and kind == "manual_computation":
        return MANUAL_COMPUTATION
    if dialect not in HLO_DIALECTS:
        return Rule(*unknown("not a StableHLO, MHLO or CHLO op"))
    rule = RULES.get(kind)
    if rule is None:
        rule = Rule(*unknown("no indexing rule for this op"))
    return rule
