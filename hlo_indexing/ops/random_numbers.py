"""Random number generation: ``rng_bit_generator`` and ``rng``.

- ``rng_bit_generator(state) -> (output_state, output)``: every element of ``output``
  reads every element of ``state`` (each generated word is a function of the whole key
  and counter: exact, changing any state word changes every output word). Every element
  of ``output_state`` is taken to read every element of ``state`` too, with a note that
  this over-approximates: the algorithm is implementation-defined, and XLA's generators
  keep the key and advance the counter, so an element of the new state reads fewer words.
- ``rng(a, b, shape)``: every result element reads the scalars ``a`` and ``b`` (the
  bounds of the uniform distribution, or the normal's mean and deviation) and every
  element of ``shape``.

Input -> output maps are the exact inverses (with the same note).

Example: ``rng_bit_generator`` of ``tensor<2xui64>`` to ``tensor<3x4xui32>`` gives, for
``output``, ``(d0, d1)[s0] -> (s0)`` with ``s0 in [0, 1]``.
"""

from __future__ import annotations

from hlo_indexing.ops.inversion import inverse_rule
from hlo_indexing.ops.map_builders import whole_map
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult

#: Result 0 of ``rng_bit_generator``: the new state.
_OUTPUT_STATE = 0

_STATE_NOTE = (
    "the new state is taken to read every word of the state (the algorithm is implementation-defined; "
    "XLA's keep the key and advance the counter)"
)


def rng_bit_generator_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Every element of either result reads every element of the state."""
    maps = (whole_map(info.context, info.result(result_index), info.operand(0)),)
    return [Entry(maps, note=_STATE_NOTE if result_index == _OUTPUT_STATE else "")]


def rng_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Every result element reads ``a``, ``b`` and every element of ``shape``."""
    space = info.result(result_index)
    return [[whole_map(info.context, space, info.operand(k))] for k in range(info.num_operands)]


rng_bit_generator_input_to_output = inverse_rule(rng_bit_generator_output_to_input)
rng_input_to_output = inverse_rule(rng_output_to_input)
