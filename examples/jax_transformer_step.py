"""Writes examples/transformer_step_cpu.hlo: the compiled HLO of one training step (SGD
on a mean-squared error) of a one-layer pre-norm transformer block, sequence 512, width
512, MLP 2048, float32, as XLA's CPU backend fuses it
(``jax.jit(step).lower(...).compile().as_text()``), for the README's section on tilings
ranked for a device. The committed file lets the README run without compiling; rerun
this script (``python examples/jax_transformer_step.py``) to regenerate it (the fusion
names and their split may change with the JAX version)."""

from pathlib import Path

import jax
import jax.numpy as jnp

SEQUENCE, WIDTH, HIDDEN = 512, 512, 2048


def layer_norm(x, scale, bias):
    """Normalise the rows of ``x``, then scale and shift them."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    variance = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(variance + 1e-5) * scale + bias


def block(x, p):
    """Self-attention (one head) and a GELU MLP, each behind a layer norm and a residual."""
    h = layer_norm(x, p["ln1_scale"], p["ln1_bias"])
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    attention = jax.nn.softmax(q @ k.T / jnp.sqrt(float(WIDTH)), axis=-1)
    x = x + (attention @ v) @ p["wo"]
    h = layer_norm(x, p["ln2_scale"], p["ln2_bias"])
    return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"]


def step(p, x, y):
    """One SGD step on the mean-squared error of the block's output against ``y``."""
    gradients = jax.grad(lambda p: jnp.mean((block(x, p) - y) ** 2))(p)
    return jax.tree.map(lambda value, gradient: value - 1e-3 * gradient, p, gradients)


def zeros(*shape):
    return jnp.zeros(shape, jnp.float32)


params = {
    "ln1_scale": zeros(WIDTH), "ln1_bias": zeros(WIDTH), "ln2_scale": zeros(WIDTH), "ln2_bias": zeros(WIDTH),
    "wq": zeros(WIDTH, WIDTH), "wk": zeros(WIDTH, WIDTH), "wv": zeros(WIDTH, WIDTH), "wo": zeros(WIDTH, WIDTH),
    "w1": zeros(WIDTH, HIDDEN), "b1": zeros(HIDDEN), "w2": zeros(HIDDEN, WIDTH),
}
x = zeros(SEQUENCE, WIDTH)
text = jax.jit(step).lower(params, x, x).compile().as_text()
target = Path(__file__).with_name("transformer_step_cpu.hlo")
target.write_text(text)
print(f"wrote {target.name} (jax {jax.__version__}, {len(text.splitlines())} lines)")
