"""Programs built with the JAX libraries people use, lowered as users lower them (issue #31).

Each entry of :data:`PROGRAMS` builds one program at a realistic size with random
initialisation: a function of pytrees and its example arguments. :func:`flat_program`
turns it into a function of the flattened argument leaves returning the flattened result
leaves, jitted with ``keep_unused=True`` so that ``@main``'s arguments and results are the
leaves, in order (what the soundness checks index). The libraries are optional (the
``programs`` extra); each builder imports its own.

``python benchmarks/library_programs.py OUT [NAME ...]`` (names of :data:`PROGRAMS` or of
``library_programs_extra.PROGRAMS``) writes, per program,
``OUT/<name>/stablehlo.mlir`` (``jax.jit(f).lower(*args).as_text()``),
``compiled_cpu.hlo`` (``.compile().as_text()``), ``exported.bin``
(``jax.export``, ``serialize(vjp_order=1)``: callable and differentiable without the
libraries) and ``args.npz`` (the example arguments, ``arr_0``, ``arr_1``, ...) and ``manifest.json`` (library versions, argument and result shapes, op
counts). Programs whose library is missing are listed as skipped. Example::

    program = build("flax_linen_bilstm")   # a LibraryProgram
    text = program.lowered().as_text()
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

#: Distributions whose versions go into each manifest.
LIBRARIES = (
    "jax", "jaxlib", "flax", "optax", "equinox", "dm-haiku", "diffrax", "jax-md", "keras", "keras-hub", "transformers",
)


@dataclass
class LibraryProgram:
    """A program of flat array arguments: ``fn(*args)`` returns a tuple of arrays."""

    name: str
    library: str
    description: str
    fn: Callable[..., tuple]
    args: tuple

    def jitted(self) -> Any:
        return jax.jit(self.fn, keep_unused=True)

    def lowered(self) -> Any:
        return self.jitted().lower(*self.args)


def flat_program(name: str, library: str, description: str, fn: Callable[..., Any], *trees: Any) -> LibraryProgram:
    """``fn(*trees)`` as a function of the leaves of ``trees`` returning its result leaves."""
    leaves, treedef = jax.tree.flatten(trees)

    def flat(*args: Any) -> tuple:
        return tuple(jax.tree.leaves(fn(*jax.tree.unflatten(treedef, args))))

    return LibraryProgram(name, library, description, flat, tuple(jnp.asarray(a) for a in leaves))


def _normal(key: int, shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.Array:
    return jax.random.normal(jax.random.PRNGKey(key), shape, dtype)


def _tokens(key: int, shape: tuple[int, ...], vocab: int) -> jax.Array:
    return jax.random.randint(jax.random.PRNGKey(key), shape, 0, vocab, jnp.int32)


# --------------------------------------------------------------------------- flax.nnx


def _nnx_transformer(num_layers: int, width: int, heads: int, vocab: int | None) -> Any:
    from flax import nnx  # optional dependency (programs extra)

    class Block(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.ln1 = nnx.LayerNorm(width, rngs=rngs)
            self.attention = nnx.MultiHeadAttention(num_heads=heads, in_features=width, decode=False, rngs=rngs)
            self.ln2 = nnx.LayerNorm(width, rngs=rngs)
            self.up = nnx.Linear(width, 4 * width, rngs=rngs)
            self.down = nnx.Linear(4 * width, width, rngs=rngs)

        def __call__(self, x: jax.Array, mask: jax.Array | None) -> jax.Array:
            x = x + self.attention(self.ln1(x), mask=mask)
            return x + self.down(nnx.gelu(self.up(self.ln2(x))))

    class Model(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.embed = nnx.Embed(vocab, width, rngs=rngs) if vocab else None
            self.blocks = nnx.List([Block(rngs) for _ in range(num_layers)])
            self.ln = nnx.LayerNorm(width, rngs=rngs)
            self.head = nnx.Linear(width, vocab, rngs=rngs) if vocab else None

        def __call__(self, x: jax.Array) -> jax.Array:
            mask = None
            if self.embed is not None:
                mask = nnx.make_causal_mask(x)
                x = self.embed(x)
            for block in self.blocks:
                x = block(x, mask)
            x = self.ln(x)
            return self.head(x) if self.head is not None else x

    return Model(nnx.Rngs(0))


def nnx_transformer_stack() -> LibraryProgram:
    from flax import nnx  # optional dependency (programs extra)

    graphdef, state = nnx.split(_nnx_transformer(4, 256, 8, None))
    x = _normal(1, (4, 128, 256))
    return flat_program(
        "nnx_transformer_stack", "flax.nnx", "4 pre-LN transformer blocks (MultiHeadAttention, GELU MLP), forward",
        lambda s, x: nnx.merge(graphdef, s)(x), state, x,
    )


def nnx_lm_adamw_step() -> LibraryProgram:
    import optax  # optional dependency (programs extra)
    from flax import nnx  # optional dependency (programs extra)

    vocab = 4096
    graphdef, params, rest = nnx.split(_nnx_transformer(2, 256, 8, vocab), nnx.Param, ...)
    tx = optax.adamw(3e-4, weight_decay=0.01)
    opt_state = tx.init(params)
    tokens = _tokens(2, (8, 129), vocab)

    def step(params: Any, opt_state: Any, tokens: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            logits = nnx.merge(graphdef, p, rest)(tokens[:, :-1])
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return flat_program("nnx_lm_adamw_step", "flax.nnx+optax", "2-layer causal LM, cross-entropy, AdamW step",
                        step, params, opt_state, tokens)


# --------------------------------------------------------------------------- flax.linen


def linen_resnet_batchnorm_step() -> LibraryProgram:
    import flax.linen as nn  # optional dependency (programs extra)
    import optax  # optional dependency (programs extra)

    class Block(nn.Module):
        features: int
        strides: int = 1

        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            y = nn.Conv(self.features, (3, 3), self.strides, use_bias=False)(x)
            y = nn.relu(nn.BatchNorm(use_running_average=False, momentum=0.9)(y))
            y = nn.Conv(self.features, (3, 3), use_bias=False)(y)
            y = nn.BatchNorm(use_running_average=False, momentum=0.9)(y)
            if x.shape != y.shape:
                x = nn.Conv(self.features, (1, 1), self.strides, use_bias=False)(x)
                x = nn.BatchNorm(use_running_average=False, momentum=0.9)(x)
            return nn.relu(x + y)

    class ResNet(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            x = nn.relu(nn.BatchNorm(use_running_average=False)(nn.Conv(32, (3, 3), use_bias=False)(x)))
            for features, strides in ((32, 1), (32, 1), (64, 2), (64, 1)):
                x = Block(features, strides)(x)
            return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))

    model = ResNet()
    images = _normal(3, (16, 32, 32, 3))
    labels = _tokens(4, (16,), 10)
    variables = model.init(jax.random.PRNGKey(0), images)
    tx = optax.sgd(0.1, momentum=0.9)
    opt_state = tx.init(variables["params"])

    def step(params: Any, batch_stats: Any, opt_state: Any, images: jax.Array, labels: jax.Array) -> Any:
        def loss(p: Any) -> Any:
            logits, updates = model.apply({"params": p, "batch_stats": batch_stats}, images, mutable=["batch_stats"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), updates["batch_stats"]

        (value, stats), grads = jax.value_and_grad(loss, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), stats, opt_state, value

    return flat_program("linen_resnet_batchnorm_step", "flax.linen+optax",
                        "ResNet blocks with BatchNorm in training mode, SGD momentum step",
                        step, variables["params"], variables["batch_stats"], opt_state, images, labels)


def linen_bilstm_step() -> LibraryProgram:
    import flax.linen as nn  # optional dependency (programs extra)
    import optax  # optional dependency (programs extra)

    class Classifier(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            x = nn.Bidirectional(nn.RNN(nn.OptimizedLSTMCell(128)), nn.RNN(nn.OptimizedLSTMCell(128)))(x)
            return nn.Dense(5)(x[:, -1])

    model = Classifier()
    x = _normal(5, (16, 48, 64))
    labels = _tokens(6, (16,), 5)
    params = model.init(jax.random.PRNGKey(0), x)["params"]

    def step(params: Any, x: jax.Array, labels: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            return optax.softmax_cross_entropy_with_integer_labels(model.apply({"params": p}, x), labels).mean()

        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    return flat_program("linen_bilstm_step", "flax.linen+optax", "bidirectional LSTM (lax.scan both ways) classifier, SGD step",
                        step, params, x, labels)


def linen_masked_attention() -> LibraryProgram:
    import flax.linen as nn  # optional dependency (programs extra)

    attention = nn.MultiHeadDotProductAttention(num_heads=8, qkv_features=256)
    x = _normal(7, (4, 128, 256))
    lengths = jnp.array([128, 100, 64, 17], jnp.int32)
    params = attention.init(jax.random.PRNGKey(0), x, x)["params"]

    def forward(params: Any, x: jax.Array, lengths: jax.Array) -> jax.Array:
        valid = jnp.arange(x.shape[1])[None, :] < lengths[:, None]
        mask = nn.combine_masks(nn.make_attention_mask(valid, valid), nn.make_causal_mask(valid))
        return attention.apply({"params": params}, x, x, mask=mask)

    return flat_program("linen_masked_attention", "flax.linen", "multi-head attention with causal and padding masks, forward",
                        forward, params, x, lengths)


def linen_embed_xent_grad() -> LibraryProgram:
    import flax.linen as nn  # optional dependency (programs extra)
    import optax  # optional dependency (programs extra)

    class Model(nn.Module):
        @nn.compact
        def __call__(self, tokens: jax.Array) -> jax.Array:
            h = nn.Embed(8192, 256)(tokens)
            h = nn.LayerNorm()(nn.gelu(nn.Dense(256)(h)))
            return nn.Dense(8192)(h)

    model = Model()
    tokens = _tokens(8, (8, 64), 8192)
    targets = _tokens(9, (8, 64), 8192)
    params = model.init(jax.random.PRNGKey(0), tokens)["params"]

    def grad(params: Any, tokens: jax.Array, targets: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            return optax.softmax_cross_entropy_with_integer_labels(model.apply({"params": p}, tokens), targets).mean()

        return jax.value_and_grad(loss)(params)

    return flat_program("linen_embed_xent_grad", "flax.linen+optax", "embedding, dense, cross-entropy: value and gradient",
                        grad, params, tokens, targets)


def linen_mlp_optax_chain() -> LibraryProgram:
    import flax.linen as nn  # optional dependency (programs extra)
    import optax  # optional dependency (programs extra)

    class Mlp(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            for width in (512, 512, 256):
                x = nn.relu(nn.Dense(width)(x))
            return nn.Dense(10)(x)

    model = Mlp()
    x = _normal(10, (64, 784))
    labels = _tokens(11, (64,), 10)
    params = model.init(jax.random.PRNGKey(0), x)["params"]
    schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 100, 1000)
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-4))
    opt_state = tx.init(params)

    def step(params: Any, opt_state: Any, x: jax.Array, labels: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            return optax.softmax_cross_entropy_with_integer_labels(model.apply({"params": p}, x), labels).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return flat_program("linen_mlp_optax_chain", "flax.linen+optax",
                        "MLP step with clip_by_global_norm + AdamW under a warmup-cosine schedule",
                        step, params, opt_state, x, labels)


# --------------------------------------------------------------------------- haiku


def haiku_transformer_dropout() -> LibraryProgram:
    import haiku as hk  # optional dependency (programs extra)

    def forward(x: jax.Array) -> jax.Array:
        for _ in range(4):
            h = hk.LayerNorm(-1, True, True)(x)
            h = hk.MultiHeadAttention(4, 32, w_init=hk.initializers.VarianceScaling(1.0))(h, h, h)
            x = x + hk.dropout(hk.next_rng_key(), 0.1, h)
            h = hk.LayerNorm(-1, True, True)(x)
            h = hk.Linear(128)(jax.nn.gelu(hk.Linear(512)(h)))
            x = x + hk.dropout(hk.next_rng_key(), 0.1, h)
        return hk.LayerNorm(-1, True, True)(x)

    model = hk.transform(forward)
    x = _normal(12, (8, 64, 128))
    params = model.init(jax.random.PRNGKey(0), x)

    def grad(params: Any, key: jax.Array, x: jax.Array) -> Any:
        return jax.value_and_grad(lambda p: jnp.mean(model.apply(p, key, x) ** 2))(params)

    return flat_program("haiku_transformer_dropout", "dm-haiku", "4-layer transformer with dropout (threefry keys), value and gradient",
                        grad, params, jax.random.PRNGKey(1), x)


# --------------------------------------------------------------------------- equinox


def _equinox_step(name: str, description: str, model: Any, x: jax.Array, labels: jax.Array) -> LibraryProgram:
    import equinox as eqx  # optional dependency (programs extra)
    import optax  # optional dependency (programs extra)

    params, static = eqx.partition(model, eqx.is_array)
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)

    def step(params: Any, opt_state: Any, x: jax.Array, labels: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            logits = jax.vmap(eqx.combine(p, static))(x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return flat_program(name, "equinox+optax", description, step, params, opt_state, x, labels)


def equinox_mlp_step() -> LibraryProgram:
    import equinox as eqx  # optional dependency (programs extra)

    model = eqx.nn.MLP(784, 10, 512, 3, key=jax.random.PRNGKey(0))
    return _equinox_step("equinox_mlp_step", "MLP (3 hidden layers of 512), Adam step", model,
                         _normal(13, (64, 784)), _tokens(14, (64,), 10))


def equinox_cnn_step() -> LibraryProgram:
    import equinox as eqx  # optional dependency (programs extra)

    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    model = eqx.nn.Sequential([
        eqx.nn.Conv2d(1, 16, 3, padding=1, key=keys[0]), eqx.nn.Lambda(jax.nn.relu), eqx.nn.MaxPool2d(2, 2),
        eqx.nn.Conv2d(16, 32, 3, padding=1, key=keys[1]), eqx.nn.Lambda(jax.nn.relu), eqx.nn.MaxPool2d(2, 2),
        eqx.nn.Lambda(jnp.ravel), eqx.nn.Linear(32 * 7 * 7, 128, key=keys[2]), eqx.nn.Lambda(jax.nn.relu),
        eqx.nn.Linear(128, 10, key=keys[3]),
    ])
    return _equinox_step("equinox_cnn_step", "CNN (2 conv + max-pool, 2 linear) on 28x28, Adam step", model,
                         _normal(15, (32, 1, 28, 28)), _tokens(16, (32,), 10))


# --------------------------------------------------------------------------- diffrax


def diffrax_lotka_volterra_heun() -> LibraryProgram:
    import diffrax  # optional dependency (programs extra)

    def vector_field(t: Any, y: jax.Array, args: jax.Array) -> jax.Array:
        alpha, beta, gamma, delta = args[0], args[1], args[2], args[3]
        prey, predator = y[0], y[1]
        return jnp.stack([alpha * prey - beta * prey * predator, -gamma * predator + delta * prey * predator])

    def solve(y0: jax.Array, args: jax.Array) -> jax.Array:
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(vector_field), diffrax.Heun(), t0=0.0, t1=15.0, dt0=0.1, y0=y0, args=args,
            saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 15.0, 100)),
        )
        return solution.ys

    return flat_program("diffrax_lotka_volterra_heun", "diffrax", "Lotka-Volterra, Heun, fixed step 0.1, 100 saved times",
                        solve, jnp.array([10.0, 10.0]), jnp.array([0.1, 0.02, 0.4, 0.02]))


def _neural_ode() -> tuple[Any, Any, Callable[..., jax.Array]]:
    import diffrax  # optional dependency (programs extra)
    import equinox as eqx  # optional dependency (programs extra)

    mlp = eqx.nn.MLP(2, 2, 64, 2, activation=jax.nn.softplus, key=jax.random.PRNGKey(0))
    params, static = eqx.partition(mlp, eqx.is_array)
    ts = jnp.linspace(0.0, 5.0, 32)

    def solve(params: Any, y0: jax.Array) -> jax.Array:
        field = eqx.combine(params, static)
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(lambda t, y, args: field(y)), diffrax.Tsit5(), t0=0.0, t1=5.0, dt0=0.1, y0=y0,
            stepsize_controller=diffrax.PIDController(rtol=1e-3, atol=1e-6), saveat=diffrax.SaveAt(ts=ts),
            max_steps=1024,
        )
        return solution.ys

    return params, static, solve


def diffrax_neural_ode_forward() -> LibraryProgram:
    params, _, solve = _neural_ode()
    y0 = _normal(17, (16, 2))
    return flat_program("diffrax_neural_ode_forward", "diffrax+equinox", "neural ODE (MLP field), Tsit5 + PID controller, batch of 16",
                        lambda p, y0: jax.vmap(lambda y: solve(p, y))(y0), params, y0)


def diffrax_neural_ode_step() -> LibraryProgram:
    params, _, solve = _neural_ode()
    y0 = _normal(18, (16, 2))
    target = _normal(19, (16, 32, 2))

    def step(params: Any, y0: jax.Array, target: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            return jnp.mean((jax.vmap(lambda y: solve(p, y))(y0) - target) ** 2)

        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 1e-2 * g, params, grads), value

    return flat_program("diffrax_neural_ode_step", "diffrax+equinox", "neural ODE training step (backpropagation through the adaptive solve)",
                        step, params, y0, target)


# --------------------------------------------------------------------------- jax-md


def _lj_system(n: int, box: float) -> tuple[Any, Any, jax.Array]:
    from jax_md import space  # optional dependency (programs extra)

    displacement, shift = space.periodic(box)
    side = int(np.ceil(n ** (1 / 3)))
    grid = jnp.stack(jnp.meshgrid(*[jnp.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
    positions = (grid + 0.5) * (box / side) + 0.05 * _normal(20, (n, 3))
    return displacement, shift, positions


def jaxmd_lj_neighbor_list() -> LibraryProgram:
    from jax_md import energy  # optional dependency (programs extra)

    box = 9.0
    displacement, _, positions = _lj_system(512, box)
    neighbor_fn, energy_fn = energy.lennard_jones_neighbor_list(displacement, box, r_cutoff=2.5, dr_threshold=0.3)
    neighbors = neighbor_fn.allocate(positions)

    def forces(positions: jax.Array, idx: jax.Array, reference: jax.Array) -> Any:
        nbrs = neighbors.set(idx=idx, reference_position=reference).update(positions)
        value, grad = jax.value_and_grad(energy_fn)(positions, neighbor=nbrs)
        return value, -grad, nbrs.idx, nbrs.did_buffer_overflow

    return flat_program("jaxmd_lj_neighbor_list", "jax-md", "Lennard-Jones, 512 particles, neighbour list update, energy and forces",
                        forces, positions, neighbors.idx, neighbors.reference_position)


def jaxmd_nve_loop() -> LibraryProgram:
    from jax_md import energy, simulate  # optional dependency (programs extra)

    displacement, shift, positions = _lj_system(128, 6.0)
    energy_fn = energy.lennard_jones_pair(displacement)
    init_fn, apply_fn = simulate.nve(energy_fn, shift, dt=1e-3)
    state = init_fn(jax.random.PRNGKey(0), positions, kT=0.5)

    def run(state: Any) -> Any:
        return jax.lax.fori_loop(0, 100, lambda i, s: apply_fn(s), state)

    return flat_program("jaxmd_nve_loop", "jax-md", "NVE velocity Verlet, 128 Lennard-Jones particles, 100 steps (fori_loop)",
                        run, state)


# --------------------------------------------------------------------------- keras 3


def _keras_train_step(name: str, description: str, model: Any, x: jax.Array, y: jax.Array) -> LibraryProgram:
    import keras  # optional dependency (programs extra)

    optimizer = keras.optimizers.Adam(1e-3)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def compute_loss(trainable: Any, non_trainable: Any, x: jax.Array, y: jax.Array) -> Any:
        predictions, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss_fn(y, predictions), non_trainable

    def step(trainable: Any, non_trainable: Any, optimizer_vars: Any, x: jax.Array, y: jax.Array) -> Any:
        (value, non_trainable), grads = jax.value_and_grad(compute_loss, has_aux=True)(trainable, non_trainable, x, y)
        trainable, optimizer_vars = optimizer.stateless_apply(optimizer_vars, grads, trainable)
        return value, trainable, non_trainable, optimizer_vars

    values = [[v.value for v in vs] for vs in (model.trainable_variables, model.non_trainable_variables, optimizer.variables)]
    return flat_program(name, "keras", description, step, *values, x, y)


def keras_cnn_step() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    from keras import layers  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((32, 32, 3)),
        layers.Conv2D(32, 3, padding="same"), layers.BatchNormalization(), layers.ReLU(), layers.MaxPooling2D(),
        layers.Conv2D(64, 3, padding="same"), layers.BatchNormalization(), layers.ReLU(), layers.MaxPooling2D(),
        layers.Conv2D(128, 3, padding="same"), layers.BatchNormalization(), layers.ReLU(),
        layers.GlobalAveragePooling2D(), layers.Dropout(0.2), layers.Dense(10),
    ])
    return _keras_train_step("keras_cnn_step", "CNN (Conv2D, BatchNormalization, max-pool, dropout), Adam step",
                             model, _normal(21, (32, 32, 32, 3)), _tokens(22, (32,), 10))


def keras_lstm_gru_classifier() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    from keras import layers  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((64, 32)), layers.LSTM(64, return_sequences=True), layers.GRU(64), layers.Dense(10),
    ])
    x = _normal(23, (16, 64, 32))

    def forward(trainable: Any, non_trainable: Any, x: jax.Array) -> Any:
        return model.stateless_call(trainable, non_trainable, x)[0]

    return flat_program("keras_lstm_gru_classifier", "keras", "LSTM then GRU over 64 steps, dense classifier, forward", forward,
                        [v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables], x)


def keras_transformer_step() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    from keras import layers  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    inputs = keras.Input((64,), dtype="int32")
    h = layers.Embedding(2000, 128)(inputs)
    for _ in range(2):
        a = layers.MultiHeadAttention(4, 32)(h, h)
        h = layers.LayerNormalization()(h + layers.Dropout(0.1)(a))
        f = layers.Dense(128)(layers.Dense(512, activation="gelu")(h))
        h = layers.LayerNormalization()(h + layers.Dropout(0.1)(f))
    outputs = layers.Dense(4)(layers.GlobalAveragePooling1D()(h))
    model = keras.Model(inputs, outputs)
    return _keras_train_step("keras_transformer_step", "2-block transformer encoder classifier (MultiHeadAttention, dropout), Adam step",
                             model, _tokens(24, (16, 64), 2000), _tokens(25, (16,), 4))


# --------------------------------------------------------------------------- keras-hub


def _keras_forward(name: str, description: str, model: Any, inputs: Any) -> LibraryProgram:
    def forward(trainable: Any, non_trainable: Any, inputs: Any) -> Any:
        return model.stateless_call(trainable, non_trainable, inputs)[0]

    return flat_program(name, "keras-hub", description, forward,
                        [v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables], inputs)


def _token_inputs(batch: int, length: int, vocab: int) -> dict[str, jax.Array]:
    return {"token_ids": _tokens(26, (batch, length), vocab), "padding_mask": jnp.ones((batch, length), jnp.int32)}


def kerashub_resnet_backbone() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    import keras_hub  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    model = keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[7], stackwise_num_filters=[64, 128, 256],
        stackwise_num_blocks=[2, 2, 2], stackwise_num_strides=[1, 2, 2], block_type="basic_block", image_shape=(64, 64, 3),
    )
    return _keras_forward("kerashub_resnet_backbone", "ResNet backbone (basic blocks 2-2-2), 64x64 images, forward",
                          model, _normal(27, (8, 64, 64, 3)))


def kerashub_llama_backbone() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    import keras_hub  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    model = keras_hub.models.LlamaBackbone(vocabulary_size=4096, num_layers=2, num_query_heads=8, hidden_dim=256,
                                           intermediate_dim=512, num_key_value_heads=2)
    return _keras_forward("kerashub_llama_backbone", "Llama backbone (2 layers, GQA 8/2 heads, RoPE), forward",
                          model, _token_inputs(4, 128, 4096))


def kerashub_vit_backbone() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    import keras_hub  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    model = keras_hub.models.ViTBackbone(image_shape=(64, 64, 3), patch_size=8, num_layers=4, num_heads=4,
                                         hidden_dim=192, mlp_dim=384)
    return _keras_forward("kerashub_vit_backbone", "ViT backbone (4 layers, 8x8 patches of 64x64), forward",
                          model, _normal(28, (8, 64, 64, 3)))


def kerashub_mixtral_backbone() -> LibraryProgram:
    import keras  # optional dependency (programs extra)
    import keras_hub  # optional dependency (programs extra)

    keras.utils.set_random_seed(0)
    model = keras_hub.models.MixtralBackbone(vocabulary_size=4096, num_layers=2, num_query_heads=8, hidden_dim=256,
                                             intermediate_dim=512, num_key_value_heads=2, num_experts=4, top_k=2)
    return _keras_forward("kerashub_mixtral_backbone", "Mixtral backbone (2 layers, 4 experts, top-2 routing), forward",
                          model, _token_inputs(4, 64, 4096))


# --------------------------------------------------------------------------- Hugging Face (Flax)


def hf_flax_bert() -> LibraryProgram:
    from transformers import BertConfig, FlaxBertModel  # optional dependency (programs extra)

    config = BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=1024, max_position_embeddings=256)
    model = FlaxBertModel(config, seed=0)
    ids = _tokens(29, (8, 128), 8192)
    mask = (jnp.arange(128)[None, :] < jnp.array([128, 90, 128, 64, 33, 128, 100, 128])[:, None]).astype(jnp.int32)

    def forward(params: Any, ids: jax.Array, mask: jax.Array) -> Any:
        out = model(ids, attention_mask=mask, params=params)
        return out.last_hidden_state, out.pooler_output

    return flat_program("hf_flax_bert", "transformers (Flax)", "BERT (4 layers, hidden 256), padded batch, forward",
                        forward, model.params, ids, mask)


def hf_flax_gpt2() -> LibraryProgram:
    from transformers import FlaxGPT2LMHeadModel, GPT2Config  # optional dependency (programs extra)

    config = GPT2Config(vocab_size=8192, n_positions=256, n_embd=256, n_layer=4, n_head=4)
    model = FlaxGPT2LMHeadModel(config, seed=0)
    ids = _tokens(30, (4, 128), 8192)

    def forward(params: Any, ids: jax.Array) -> Any:
        return model(ids, params=params).logits

    return flat_program("hf_flax_gpt2", "transformers (Flax)", "GPT-2 LM head (4 layers, hidden 256), forward",
                        forward, model.params, ids)


# --------------------------------------------------------------------------- plain JAX


def jax_transformer_step() -> LibraryProgram:
    width, hidden, heads, layers = 256, 1024, 8, 4
    keys = iter(range(100, 200))

    def layer_norm(x: jax.Array, scale: jax.Array, bias: jax.Array) -> jax.Array:
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias

    def block(x: jax.Array, p: dict[str, jax.Array]) -> jax.Array:
        b, s, _ = x.shape
        h = layer_norm(x, p["ln1_scale"], p["ln1_bias"])
        q, k, v = (jnp.reshape(h @ p[w], (b, s, heads, width // heads)) for w in ("wq", "wk", "wv"))
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(width // heads).astype(np.float32)
        causal = jnp.tril(jnp.ones((s, s), bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        x = x + jnp.reshape(jnp.einsum("bhqk,bkhd->bqhd", weights, v), (b, s, width)) @ p["wo"]
        h = layer_norm(x, p["ln2_scale"], p["ln2_bias"])
        return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"]

    def init() -> dict[str, jax.Array]:
        shapes = {"wq": (width, width), "wk": (width, width), "wv": (width, width), "wo": (width, width),
                  "w1": (width, hidden), "b1": (hidden,), "w2": (hidden, width)}
        p = {k: 0.02 * _normal(next(keys), s) for k, s in shapes.items()}
        p.update(ln1_scale=jnp.ones(width), ln1_bias=jnp.zeros(width), ln2_scale=jnp.ones(width), ln2_bias=jnp.zeros(width))
        return p

    params = [init() for _ in range(layers)]
    zeros = jax.tree.map(jnp.zeros_like, params)

    def step(params: Any, m: Any, v: Any, count: jax.Array, x: jax.Array, y: jax.Array) -> Any:
        def loss(params: Any) -> jax.Array:
            h = x
            for p in params:
                h = block(h, p)
            return jnp.mean((h - y) ** 2)

        value, grads = jax.value_and_grad(loss)(params)
        count = count + 1
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        scale = jnp.sqrt(1 - 0.999 ** count) / (1 - 0.9 ** count)
        params = jax.tree.map(lambda p, m, v: p - 1e-3 * scale * m / (jnp.sqrt(v) + 1e-8), params, m, v)
        return params, m, v, count, value

    x, y = _normal(31, (4, 128, width)), _normal(32, (4, 128, width))
    return flat_program("jax_transformer_step", "jax", "4-layer causal transformer (8 heads), MSE, hand-written Adam step",
                        step, params, zeros, zeros, jnp.array(0.0), x, y)


def jax_layernorm_fwd_bwd() -> LibraryProgram:
    def fwd_bwd(x: jax.Array, scale: jax.Array, bias: jax.Array, cotangent: jax.Array) -> Any:
        def layer_norm(x: jax.Array, scale: jax.Array, bias: jax.Array) -> jax.Array:
            mean = jnp.mean(x, axis=-1, keepdims=True)
            var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
            return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias

        y, vjp = jax.vjp(layer_norm, x, scale, bias)
        return y, vjp(cotangent)

    return flat_program("jax_layernorm_fwd_bwd", "jax", "layer norm over the last axis of 8x128x1024: forward and VJP",
                        fwd_bwd, _normal(33, (8, 128, 1024)), jnp.ones(1024), jnp.zeros(1024), _normal(34, (8, 128, 1024)))


def by_name(*builders: Callable[[], LibraryProgram]) -> dict[str, Callable[[], LibraryProgram]]:
    """The builders keyed by their function names (a registry of programs)."""
    return {f.__name__: f for f in builders}


PROGRAMS: dict[str, Callable[[], LibraryProgram]] = by_name(
    nnx_transformer_stack, nnx_lm_adamw_step, linen_resnet_batchnorm_step, linen_bilstm_step, linen_masked_attention,
    linen_embed_xent_grad, linen_mlp_optax_chain, haiku_transformer_dropout, equinox_mlp_step, equinox_cnn_step,
    diffrax_lotka_volterra_heun, diffrax_neural_ode_forward, diffrax_neural_ode_step, jaxmd_lj_neighbor_list,
    jaxmd_nve_loop, keras_cnn_step, keras_lstm_gru_classifier, keras_transformer_step, kerashub_resnet_backbone,
    kerashub_llama_backbone, kerashub_vit_backbone, kerashub_mixtral_backbone, hf_flax_bert, hf_flax_gpt2,
    jax_transformer_step, jax_layernorm_fwd_bwd,
)


def build(name: str) -> LibraryProgram:
    """The program ``name`` of :data:`PROGRAMS` or of ``library_programs_extra.PROGRAMS``
    (``ImportError`` when its library is missing, ``KeyError`` when neither has it)."""
    if name in PROGRAMS:
        return PROGRAMS[name]()
    import library_programs_extra  # the programs kept out of the benchmark; it imports this module

    return library_programs_extra.PROGRAMS[name]()


def library_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for dist in LIBRARIES:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    return versions


def _spec(value: Any) -> dict[str, Any]:
    return {"shape": list(value.shape), "dtype": str(value.dtype)}


def stablehlo_op_counts(text: str) -> dict[str, int]:
    """Ops per name in MLIR text (``stablehlo.*``, ``chlo.*``, ``func.call``), by a scan of the text."""
    counts: dict[str, int] = {}
    for name in re.findall(r"(?:=|^)\s*\"?((?:stablehlo|chlo|func)\.[a-z_]+)", text, re.M):
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def hlo_instruction_count(text: str) -> int:
    """Instructions of HLO text (lines ``name = type op(...)``)."""
    return len(re.findall(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s", text, re.M))


def _export(program: LibraryProgram, equinox_on_error: str | None = None) -> Any:
    """``jax.export`` of the program; with ``equinox_on_error``, under that equinox error mode
    (the jit caches are cleared so that the program is traced again)."""
    if equinox_on_error is None:
        return jax.export.export(program.jitted())(*program.args)
    import equinox._errors as equinox_errors  # optional dependency (programs extra); its mode is a module global

    saved = equinox_errors.EQX_ON_ERROR
    equinox_errors.EQX_ON_ERROR = equinox_on_error
    jax.clear_caches()
    try:
        return jax.export.export(program.jitted())(*program.args)
    finally:
        equinox_errors.EQX_ON_ERROR = saved
        jax.clear_caches()


def write(program: LibraryProgram, folder: Path) -> dict[str, Any]:
    """Write the program's files into ``folder``; return its manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    lowered = program.lowered()
    text = lowered.as_text()
    lower_s = time.perf_counter() - start
    (folder / "stablehlo.mlir").write_text(text)
    start = time.perf_counter()
    compiled = lowered.compile().as_text()
    compile_s = time.perf_counter() - start
    (folder / "compiled_cpu.hlo").write_text(compiled)
    outputs = jax.eval_shape(program.fn, *program.args)
    export_error, export_variant = None, None
    try:
        exported = _export(program)
    except NotImplementedError as error:
        if "host_callbacks" not in str(error) or "equinox" not in sys.modules:
            raise
        # equinox's runtime checks (error_if) are host callbacks, which jax.export cannot
        # serialise: export the program as it runs under EQX_ON_ERROR=nan (same values).
        export_error, export_variant = f"{type(error).__name__}: {error}", "EQX_ON_ERROR=nan"
        exported = _export(program, equinox_on_error="nan")
    try:
        serialized, vjp_order = exported.serialize(vjp_order=1), 1
    except ValueError as error:  # e.g. a while loop JAX cannot differentiate in reverse
        serialized, vjp_order = exported.serialize(vjp_order=0), 0
        export_error = f"{export_error + '; ' if export_error else ''}vjp_order=1: {type(error).__name__}: {error}"
    (folder / "exported.bin").write_bytes(serialized)
    counts = stablehlo_op_counts(text)
    manifest = {
        "name": program.name,
        "library": program.library,
        "description": program.description,
        "versions": library_versions(),
        "args": [_spec(a) for a in program.args],
        "results": [_spec(r) for r in outputs],
        "stablehlo_ops": sum(counts.values()),
        "stablehlo_op_counts": counts,
        "stablehlo_bytes": len(text),
        "compiled_instructions": hlo_instruction_count(compiled),
        "compiled_fusions": len(re.findall(r"\bfusion\(", compiled)),
        "compiled_bytes": len(compiled),
        "lower_s": round(lower_s, 3),
        "compile_s": round(compile_s, 3),
        "export_variant": export_variant,
        "export_vjp_order": vjp_order,
        "export_error": export_error,
    }
    np.savez_compressed(folder / "args.npz", *[np.asarray(a) for a in program.args])
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="corpus folder (one sub-folder per program)")
    parser.add_argument("names", nargs="*", help="programs to write, of PROGRAMS or of library_programs_extra's "
                        "(default: every one of PROGRAMS)")
    options = parser.parse_args(argv)
    names = options.names or list(PROGRAMS)
    failed = 0
    for name in names:
        try:
            program = build(name)
        except ImportError as error:
            print(f"{name}: skipped ({error})", flush=True)
            continue
        try:
            manifest = write(program, options.out / name)
        except Exception:  # noqa: BLE001 - one program's failure is reported, the others still written
            failed += 1
            print(f"{name}: FAILED\n{traceback.format_exc()}", flush=True)
            continue
        print(f"{name}: {manifest['stablehlo_ops']} ops, {manifest['compiled_instructions']} HLO instructions, "
              f"exported (vjp order {manifest['export_vjp_order']}){' as ' + manifest['export_variant'] if manifest['export_variant'] else ''}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
