"""Generated StableHLO modules for the benchmarks.

Every module is many ``func.func`` of modest size (fusion-like: ``ops_per_function`` HLO
ops each, the last function takes the remainder) so that both per-op maps and fused maps
of each function are meaningful. ``n_ops`` counts the ops the analysis visits (every
``stablehlo.*`` op except ``return`` and the ops inside reducer bodies), exactly.

Families (:data:`FAMILIES`):

* ``elementwise``: chains of add/multiply/exp/tanh/... on ``tensor<64x128xf32>``;
* ``broadcast_reduce``: ``reduce`` over the minor dimension, ``broadcast_in_dim`` back,
  subtract, exp (softmax-like), repeated;
* ``reshape_transpose``: reshape/transpose cycles 64x128 -> 8x8x128 -> 128x8x8 -> 128x64 -> 64x128;
* ``transformer``: an attention + layer-norm + GELU-MLP block lowered from JAX
  (``jax.jit(block).lower(...).as_text()``), stacked as renamed copies; the remainder is
  an elementwise function. Needs ``jax``; :func:`jax_available` tells.

:func:`deep_chain` gives one function of reshapes/transposes/broadcasts (the deep-fusion
benchmark). Example::

    gen = generate("elementwise", 1000)
    gen.text          # MLIR text, 20 functions of 50 ops
    gen.describe()    # 'elementwise: 1000 ops in 20 functions (50 ops each)'
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass

T2 = "tensor<64x128xf32>"
DEFAULT_OPS_PER_FUNCTION = 50


@dataclass(frozen=True)
class Generated:
    """A generated module: its text, HLO op count, and number of functions."""

    family: str
    text: str
    n_ops: int
    n_functions: int
    ops_per_function: int

    def describe(self) -> str:
        return (
            f"{self.family}: {self.n_ops} ops in {self.n_functions} functions "
            f"({self.ops_per_function} ops each, last one the remainder)"
        )


class _Body:
    """Builds one function body: ``emit`` appends an op and returns its SSA name."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def emit(self, text: str) -> str:
        name = f"%v{len(self.lines)}"
        self.lines.append(f"    {name} = {text}")
        self.count += 1
        return name


_UNARY = ("stablehlo.exponential", "stablehlo.tanh", "stablehlo.negate", "stablehlo.abs")
_BINARY = ("stablehlo.add", "stablehlo.multiply", "stablehlo.subtract", "stablehlo.maximum")


def _elementwise_op(body: _Body, prev: str, step: int, other: str) -> str:
    if step % 2:
        return body.emit(f"{_UNARY[step // 2 % len(_UNARY)]} {prev} : {T2}")
    return body.emit(f"{_BINARY[step // 2 % len(_BINARY)]} {prev}, {other} : {T2}")


def _elementwise_function(name: str, n: int) -> str:
    body, prev = _Body(), "%a"
    for step in range(n):
        prev = _elementwise_op(body, prev, step, "%b")
    return _function(name, [("%a", T2), ("%b", T2)], body, prev)


def _broadcast_reduce_function(name: str, n: int) -> str:
    body, prev = _Body(), "%a"
    while n - body.count >= 5:
        init = body.emit("stablehlo.constant dense<0.000000e+00> : tensor<f32>")
        red = body.emit(
            f"stablehlo.reduce({prev} init: {init}) applies stablehlo.add across dimensions = [1] "
            f": ({T2}, tensor<f32>) -> tensor<64xf32>"
        )
        bcast = body.emit(f"stablehlo.broadcast_in_dim {red}, dims = [0] : (tensor<64xf32>) -> {T2}")
        diff = body.emit(f"stablehlo.subtract {prev}, {bcast} : {T2}")
        prev = body.emit(f"stablehlo.exponential {diff} : {T2}")
    while body.count < n:
        prev = body.emit(f"stablehlo.negate {prev} : {T2}")
    return _function(name, [("%a", T2)], body, prev)


_RESHAPE_TRANSPOSE_CYCLE = (
    "stablehlo.reshape {x} : ({t}) -> tensor<8x8x128xf32>",
    "stablehlo.transpose {x}, dims = [2, 0, 1] : (tensor<8x8x128xf32>) -> tensor<128x8x8xf32>",
    "stablehlo.reshape {x} : (tensor<128x8x8xf32>) -> tensor<128x64xf32>",
    "stablehlo.transpose {x}, dims = [1, 0] : (tensor<128x64xf32>) -> {t}",
)


def _reshape_transpose_function(name: str, n: int) -> str:
    body, prev = _Body(), "%a"
    while n - body.count >= len(_RESHAPE_TRANSPOSE_CYCLE):
        for pattern in _RESHAPE_TRANSPOSE_CYCLE:
            prev = body.emit(pattern.format(x=prev, t=T2))
    while body.count < n:
        prev = body.emit(f"stablehlo.negate {prev} : {T2}")
    return _function(name, [("%a", T2)], body, prev)


def _function(name: str, args: list[tuple[str, str]], body: _Body, result: str) -> str:
    signature = ", ".join(f"{arg}: {type_}" for arg, type_ in args)
    return (
        f"  func.func @{name}({signature}) -> {T2} {{\n"
        + "\n".join(body.lines)
        + f"\n    return {result} : {T2}\n  }}"
    )


def _module(functions: list[str]) -> str:
    return "module {\n" + "\n".join(functions) + "\n}\n"


def _split(n_ops: int, per_function: int) -> list[int]:
    sizes = [per_function] * (n_ops // per_function)
    if n_ops % per_function:
        sizes.append(n_ops % per_function)
    return sizes


def _simple(builder: Callable[[str, int], str], family: str, n_ops: int, per_function: int) -> Generated:
    sizes = _split(n_ops, per_function)
    functions = [builder(f"{family}_{k}", size) for k, size in enumerate(sizes)]
    return Generated(family, _module(functions), n_ops, len(functions), per_function)


def jax_available() -> bool:
    return importlib.util.find_spec("jax") is not None


@functools.cache
def transformer_block() -> tuple[str, int]:
    """The text of the JAX-lowered block's ``@main`` function and its HLO op count."""
    import jax
    import jax.numpy as jnp

    def block(x, wq, wk, wv, wo, w1, w2):
        q, k, v = x @ wq, x @ wk, x @ wv
        attention = jax.nn.softmax(q @ k.T / 8.0, axis=-1)
        h = x + (attention @ v) @ wo
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        h = (h - mean) / jnp.sqrt(var + 1e-5)
        return h + jax.nn.gelu(h @ w1) @ w2

    seq, width, hidden = 32, 64, 128
    shapes = [(seq, width)] + [(width, width)] * 4 + [(width, hidden), (hidden, width)]
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    text = jax.jit(block).lower(*args).as_text()
    start = text.index("  func.func public @main")
    function = text[start : text.rindex("}", 0, text.rindex("}")) + 1]
    function = function.replace("func.func public @main", "func.func @{name}", 1)
    function = re.sub(r" \{jax\.result_info = [^}]*\}", "", function)
    n_ops = sum(1 for line in function.splitlines() if re.match(r"\s+%\S+ = stablehlo\.", line))
    return function, n_ops


def _transformer(n_ops: int, per_function: int) -> Generated:
    del per_function  # the JAX block fixes the function size
    block, block_ops = transformer_block()
    copies, remainder = divmod(n_ops, block_ops)
    functions = [block.replace("{name}", f"transformer_{k}") for k in range(copies)]
    if remainder:
        functions.append(_elementwise_function(f"transformer_rest_{copies}", remainder))
    return Generated("transformer", _module(functions), n_ops, len(functions), block_ops)


FAMILIES: dict[str, Callable[[int, int], Generated]] = {
    "elementwise": lambda n, f: _simple(_elementwise_function, "elementwise", n, f),
    "broadcast_reduce": lambda n, f: _simple(_broadcast_reduce_function, "broadcast_reduce", n, f),
    "reshape_transpose": lambda n, f: _simple(_reshape_transpose_function, "reshape_transpose", n, f),
    "transformer": _transformer,
}


def generate(family: str, n_ops: int, ops_per_function: int = DEFAULT_OPS_PER_FUNCTION) -> Generated:
    """The module of ``family`` with exactly ``n_ops`` HLO ops."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")
    if n_ops < 1:
        raise ValueError("n_ops must be positive")
    return FAMILIES[family](n_ops, ops_per_function)


def irregular_chain(n_ops: int) -> Generated:
    """One function: ``n_ops`` alternating ``reshape 4x6 -> 6x4`` and ``transpose``
    (a remainder op is a negate). Their composition is an irregular permutation of the 24
    elements whose exact affine form grows exponentially with the chain, so the fused map
    falls back to the documented over-approximation: the worst case for the caps."""
    lines, prev = [], "%a"
    for i in range(n_ops // 2):
        lines.append(f"    %r{i} = stablehlo.reshape {prev} : (tensor<4x6xf32>) -> tensor<6x4xf32>")
        lines.append(f"    %t{i} = stablehlo.transpose %r{i}, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>")
        prev = f"%t{i}"
    if n_ops % 2:
        lines.append(f"    %n = stablehlo.negate {prev} : tensor<4x6xf32>")
        prev = "%n"
    text = _module(
        ["  func.func @chain(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {\n" + "\n".join(lines)
         + f"\n    return {prev} : tensor<4x6xf32>\n  }}"]
    )
    return Generated("irregular_chain", text, n_ops, 1, n_ops)


_DEEP_CYCLE = (
    "stablehlo.reshape {x} : (tensor<64x128xf32>) -> tensor<8x8x128xf32>",
    "stablehlo.transpose {x}, dims = [1, 0, 2] : (tensor<8x8x128xf32>) -> tensor<8x8x128xf32>",
    "stablehlo.reshape {x} : (tensor<8x8x128xf32>) -> tensor<64x128xf32>",
    "stablehlo.transpose {x}, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>",
    "stablehlo.reshape {x} : (tensor<128x64xf32>) -> tensor<1x128x64xf32>",
    "stablehlo.broadcast_in_dim {x}, dims = [0, 1, 2] : (tensor<1x128x64xf32>) -> tensor<4x128x64xf32>",
    "stablehlo.slice {x} [2:3, 0:128, 0:64] : (tensor<4x128x64xf32>) -> tensor<1x128x64xf32>",
    "stablehlo.reshape {x} : (tensor<1x128x64xf32>) -> tensor<128x64xf32>",
    "stablehlo.transpose {x}, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>",
)


def deep_chain(n_ops: int) -> Generated:
    """One function: ``n_ops`` reshapes/transposes/broadcasts (and the slices that bring
    the broadcast back to size) in a single chain on ``tensor<64x128xf32>``. Each cycle
    swaps the two factors of 64 = 8 x 8 (``d0 -> (d0 mod 8) * 8 + d0 floordiv 8``), so
    the composed map alternates between that permutation and the identity only if the
    simplifier undoes the nesting; ops of an incomplete last cycle are negates."""
    body, prev = _Body(), "%a"
    while n_ops - body.count >= len(_DEEP_CYCLE):
        for pattern in _DEEP_CYCLE:
            prev = body.emit(pattern.format(x=prev))
    while body.count < n_ops:
        prev = body.emit(f"stablehlo.negate {prev} : {T2}")
    return Generated("deep_chain", _module([_function("chain", [("%a", T2)], body, prev)]), n_ops, 1, n_ops)
