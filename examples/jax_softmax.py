"""Fused and per-op indexing maps of a softmax, straight from JAX.

Run: python examples/jax_softmax.py
"""

import jax
import jax.numpy as jnp

import hlo_indexing

lowered = jax.jit(lambda x: jax.nn.softmax(x, axis=-1)).lower(jnp.zeros((2, 65, 125), jnp.float32))
result = hlo_indexing.analyze(lowered)  # reads JAX's module, never changes it
print(result.computation("main"))  # result -> argument maps of the whole function
reduce = next(op for op in result.ops if op.op == "stablehlo.reduce")
print(reduce.indexing[0])  # per-op maps of its result 0, one line per operand
