"""Writes examples/jax_fusions_cpu.hlo: the compiled HLO of a row softmax and a matmul,
as XLA's CPU backend fuses them (``jax.jit(f).lower(...).compile().as_text()``), for the
README's tiling section. The committed file lets the README run without JAX; rerun
this script (``python examples/jax_tiling_fusions.py``) to regenerate it (the fusion
names and their split may change with the JAX version)."""

from pathlib import Path

import jax
import jax.numpy as jnp


def softmax_and_matmul(x, a, b):
    """A row softmax of ``x`` and the product ``a @ b``."""
    return jax.nn.softmax(x, axis=-1), a @ b


x = jnp.zeros((32, 128), jnp.float32)
a = jnp.zeros((128, 256), jnp.float32)
b = jnp.zeros((256, 128), jnp.float32)
text = jax.jit(softmax_and_matmul).lower(x, a, b).compile().as_text()
target = Path(__file__).with_name("jax_fusions_cpu.hlo")
target.write_text(text)
print(f"wrote {target.name} (jax {jax.__version__}, {len(text.splitlines())} lines)")
