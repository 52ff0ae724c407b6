"""A real JAX training step as StableHLO text, for the training-step benchmark (issue #17).

``training_step_text(layers)`` lowers one training step of an ``layers``-layer
transformer (each layer: layer norm, single-head attention with a softmax, a GELU MLP,
residual connections) with an MSE loss, ``jax.grad`` and an Adam update written here
(no optax), as ``jax.jit(step).lower(...).as_text()`` at small sizes. ``@main`` takes
the parameters, the two Adam moments of each, the step count and a batch, and returns
the new parameters, moments and step count: tens of results over hundreds of ops.

``compiled_training_step_text(layers)`` is the same step compiled by XLA's CPU backend
(``.lower(...).compile().as_text()``): optimised HLO whose fusions the tiling benchmark
analyses (issue #19). ``shape=ISSUE_28`` gives the step of issue #28 instead (a batch of
2 sequences of 16, width 32, MLP width 128): XLA fuses its layer-norm backward passes
into fusions whose root bitcasts a transposed ``f32[2,16,32]`` into ``f32[32,32]``, the
chains of bitcasts, transposes and broadcasts the bounded tiling is measured on.

Lowering takes about a second per size, so the text is cached under
``benchmarks/results/cache/`` keyed on the jax version and the sizes; a missing or stale
cache entry is regenerated. Example::

    text = training_step_text(2)      # @main of a 2-layer step
    hlo = compiled_training_step_text(2)   # its optimised HLO module
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Callable
from pathlib import Path

CACHE = Path(__file__).resolve().parent / "results" / "cache"
#: (batch, sequence length, model width, MLP width): small, the op count is what matters
#: (batch 0: no batch dimension).
SIZES = (0, 8, 16, 32)
#: The 4-layer step of issue #28: batched, so that XLA fuses layer-norm backward passes
#: over ``f32[2,16,32]`` with bitcasts to and from ``f32[32,32]``.
ISSUE_28 = (2, 16, 32, 128)
LAYERS = (1, 2, 4, 8)


def _lowered(layers: int, shape: tuple[int, int, int, int]):  # -> jax.stages.Lowered (jax is optional: no annotation import)
    import jax  # optional dependency (test extra): only the training-step benchmark needs it
    import jax.numpy as jnp  # optional dependency, as above

    batch, seq, width, hidden = shape

    def layer_norm(x, scale, bias):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias

    def block(x, p):
        h = layer_norm(x, p["ln1_scale"], p["ln1_bias"])
        q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
        attention = jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(float(width)), axis=-1)
        x = x + (attention @ v) @ p["wo"]
        h = layer_norm(x, p["ln2_scale"], p["ln2_bias"])
        return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"]

    def loss(params, x, y):
        for p in params:
            x = block(x, p)
        return jnp.mean((x - y) ** 2)

    def step(params, m, v, count, x, y):
        grads = jax.grad(loss)(params, x, y)
        count = count + 1
        b1, b2, lr = 0.9, 0.999, 1e-3
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        scale = lr * jnp.sqrt(1 - b2**count) / (1 - b1**count)
        params = jax.tree.map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + 1e-8), params, m, v)
        return params, m, v, count

    f32 = jnp.float32
    shapes = {
        "ln1_scale": (width,), "ln1_bias": (width,), "wq": (width, width), "wk": (width, width),
        "wv": (width, width), "wo": (width, width), "ln2_scale": (width,), "ln2_bias": (width,),
        "w1": (width, hidden), "b1": (hidden,), "w2": (hidden, width),
    }
    params = [{name: jax.ShapeDtypeStruct(shape, f32) for name, shape in shapes.items()} for _ in range(layers)]
    inputs = jax.ShapeDtypeStruct((batch, seq, width) if batch else (seq, width), f32)
    count = jax.ShapeDtypeStruct((), f32)
    return jax.jit(step).lower(params, params, params, count, inputs, inputs)


def training_step_text(layers: int, shape: tuple[int, int, int, int] = SIZES) -> str:
    """The StableHLO text of an ``layers``-layer training step at ``shape`` (cached, see
    the module docstring)."""
    return _cached("training_step", layers, shape, "mlir", lambda: _lowered(layers, shape).as_text())


def compiled_training_step_text(layers: int, shape: tuple[int, int, int, int] = SIZES) -> str:
    """The optimised HLO text of the same step as XLA's CPU compiler emits it
    (``.lower(...).compile().as_text()``: fusions, layouts; cached like
    :func:`training_step_text`, keyed on the jaxlib version too)."""
    return _cached("compiled_training_step", layers, shape, "hlo", lambda: _lowered(layers, shape).compile().as_text())


def _cached(kind: str, layers: int, shape: tuple[int, int, int, int], suffix: str, make: Callable[[], str]) -> str:
    versions = (importlib.metadata.version("jax"), importlib.metadata.version("jaxlib"))
    key = hashlib.sha256(repr((versions, shape, layers, Path(__file__).read_bytes())).encode()).hexdigest()[:16]
    path = CACHE / f"{kind}_L{layers}_{key}.{suffix}"
    if path.exists():
        return path.read_text()
    text = make()
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return text
