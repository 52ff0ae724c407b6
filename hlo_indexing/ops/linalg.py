"""Transforms and matrix ops whose every output element reads whole rows or matrices:
``fft``, ``cholesky``, ``triangular_solve``.

- ``fft`` with ``fft_length`` of ``k`` entries transforms the last ``k`` dimensions:
  the leading dimensions are elementwise, an output element reads every element of
  the transformed dimensions (all four types, ``RFFT``/``IRFFT`` included, whose last
  dimension changes size).
- ``cholesky`` of ``(..., n, n)``: the batch dimensions are elementwise, an output
  element reads its whole matrix (an over-approximation: the factor reads one triangle,
  and element ``(i, j)`` only its leading rows and columns).
- ``triangular_solve`` of ``a (..., m, m)`` and ``b``: ``x`` reads all of its matrix
  ``a``; with ``left_side`` (``a x = b``) column ``j`` of ``x`` reads column ``j`` of
  ``b``, otherwise (``x a = b``) row ``i`` of ``x`` reads row ``i`` of ``b``.

Example: ``fft`` of ``tensor<2x3x4xcomplex<f32>>`` with ``fft_length = [3, 4]`` gives
``(d0, d1, d2)[s0, s1] -> (d0, s0, s1)``.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.ops.inversion import inverse_rule
from hlo_indexing.ops.map_builders import dims, make_map, syms, whole_map
from hlo_indexing.ops.rule import OpInfo, RuleResult, UnknownIndexing


def fft_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Leading dimensions elementwise, the transformed ones read whole."""
    space, target = info.result(0), info.operand(0)
    transformed = len(op_attrs.int_array(info.op, "fft_length"))
    if len(space) != len(target) or transformed > len(space):
        raise UnknownIndexing(f"fft of {transformed} dimensions from {target} to {space}")
    return [[whole_map(info.context, space, target, len(space) - transformed)]]


def cholesky_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Batch dimensions elementwise, the matrix read whole."""
    space = info.result(0)
    return [[whole_map(info.context, space, info.operand(0), len(space) - 2)]]


def triangular_solve_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """All of ``a``'s matrix; the column (``left_side``) or row of ``b`` being solved."""
    space, a, b = info.result(0), info.operand(0), info.operand(1)
    batch = len(space) - 2
    d, s = dims(len(space), info.context), syms(1, info.context)
    left_side = bool(op_attrs.int_attr(info.op, "left_side", 0))
    exprs = list(d)
    if left_side:
        exprs[batch] = s[0]  # column d[-1] of b
        moving = b[batch]
    else:
        exprs[batch + 1] = s[0]  # row d[-2] of b
        moving = b[batch + 1]
    return [[whole_map(info.context, space, a, batch)], [make_map(info.context, space, exprs, [moving])]]


fft_input_to_output = inverse_rule(fft_output_to_input)
cholesky_input_to_output = inverse_rule(cholesky_output_to_input)
triangular_solve_input_to_output = inverse_rule(triangular_solve_output_to_input)
