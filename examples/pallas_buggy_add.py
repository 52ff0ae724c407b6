"""A Pallas kernel with three bugs, for ``python -m hlo_indexing.pallas`` (README,
"Checking a Pallas kernel before it runs")::

    python -m hlo_indexing.pallas examples/pallas_buggy_add.py:add \\
        --arg 'f32[64,256]' --arg 'f32[64,256]' --device tpu-v5e

``y``'s index map is one block off (``j + 1``), the output's ignores ``j`` (every column
block lands on column block 0, and both grid axes are marked parallel).
``add_fixed`` is the same kernel without the bugs.
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def _add(x, y, y_map, out_map):
    return pl.pallas_call(
        add_kernel,
        grid=(x.shape[0] // 8, x.shape[1] // 128),
        in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j)), pl.BlockSpec((8, 128), y_map)],
        out_specs=pl.BlockSpec((8, 128), out_map),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(x, y)


def add(x, y):
    return _add(x, y, lambda i, j: (i, j + 1), lambda i, j: (i, 0))


def add_fixed(x, y):
    return _add(x, y, lambda i, j: (i, j), lambda i, j: (i, j))
