"""Fused maps of real JAX programs against the dependence JAX itself reports: the
sparsity pattern of ``jax.jacfwd``.

Every program is chosen so that its jacobian is *structurally exact* (a zero entry
means "does not read"): inputs are positive and every op keeps values positive with a
positive derivative (so sums of path products never cancel and ``relu`` is never in its
flat part), padding values are positive, and reductions by ``max`` run on a constant
input (JAX's ``max`` derivative is spread evenly over ties, so every element of a tie
gets a non-zero entry).

For each argument the union of the relations of its fused maps must contain every
non-zero jacobian entry (no miss) and point inside the argument (no out-of-bounds);
pairs of ours that the jacobian does not have are over-approximations, counted per
program. None of these programs has a data-dependent op, so the target is zero
over-approximations, and the tests assert it; ``test_summary`` prints the counts
(``pytest -s``) for the record.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import fusion_indexing, parse_module  # noqa: E402
from hlo_indexing.dialect_glue.bindings import ir  # noqa: E402


@dataclass(frozen=True)
class Comparison:
    """Our fused relation per argument against the jacobian's non-zero pattern."""

    ours: tuple[frozenset, ...]
    jacobian: tuple[frozenset, ...]
    shapes: tuple[tuple[int, ...], ...]

    @property
    def misses(self) -> list[set]:
        return [set(j - o) for o, j in zip(self.ours, self.jacobian)]

    @property
    def out_of_bounds(self) -> list[set]:
        return [
            {pair for pair in o if not all(0 <= i < n for i, n in zip(pair[1], shape, strict=True))}
            for o, shape in zip(self.ours, self.shapes)
        ]

    @property
    def over_approximations(self) -> int:
        return sum(len(o - j) for o, j in zip(self.ours, self.jacobian))

    @property
    def dependences(self) -> int:
        return sum(len(j) for j in self.jacobian)


def fused_pairs(f, shapes, result: int = 0, over_approximated: list[str] | None = None) -> list[frozenset]:
    """(output index, input index) pairs of the fused maps of result ``result`` of
    ``jax.jit(f)``, per argument. The maps must not be said over-approximated, unless
    ``over_approximated`` is given: it then receives what the analysis says."""
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    text = jax.jit(f).lower(*args).as_text()
    module = parse_module(text)
    main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
    fused = fusion_indexing(main, result)
    if over_approximated is None:
        assert not fused.over_approximated, fused.over_approximated
    else:
        over_approximated.extend(fused.over_approximated)
    out = []
    for maps in fused.maps:
        pairs: set = set()
        for m in maps:
            assert not m.is_undefined, m.reason
            pairs |= m.relation()
        out.append(frozenset(pairs))
    return out


def jacobian_pairs(f, values) -> list[frozenset]:
    """Non-zero pattern of the jacobian of ``f`` w.r.t. each argument (one jitted
    ``jacfwd``: far cheaper than eager op-by-op dispatch)."""
    jacobians = jax.jit(jax.jacfwd(f, argnums=tuple(range(len(values)))))(*values)
    out = []
    for value, jac in zip(values, jacobians, strict=True):
        jac = np.asarray(jac)
        out_rank = jac.ndim - value.ndim
        nz = np.argwhere(jac != 0)
        out.append(frozenset((tuple(row[:out_rank].tolist()), tuple(row[out_rank:].tolist())) for row in nz))
    return out


def compare(f, shapes, inputs: str = "random", seed: int = 0) -> Comparison:
    rng = np.random.default_rng(seed)
    if inputs == "random":
        values = [jnp.asarray(rng.uniform(0.5, 1.5, s), jnp.float32) for s in shapes]
    else:  # "constant": every reduction by max is one big tie
        values = [jnp.full(s, 0.75, jnp.float32) for s in shapes]
    jacobian = tuple(jacobian_pairs(f, values))
    return Comparison(tuple(fused_pairs(f, shapes)), jacobian, tuple(map(tuple, shapes)))


def check(name: str, c: Comparison) -> None:
    assert c.dependences > 0, f"{name}: empty jacobian, nothing checked"
    for k, missed in enumerate(c.misses):
        assert not missed, f"{name}: argument {k}: {len(missed)} dependences missed, e.g. {sorted(missed)[:3]}"
    for k, outside in enumerate(c.out_of_bounds):
        assert not outside, f"{name}: argument {k}: maps point out of bounds, e.g. {sorted(outside)[:3]}"
    assert c.over_approximations == 0, (
        f"{name}: {c.over_approximations} over-approximated pairs of {c.dependences} dependences"
    )


# --- named programs ------------------------------------------------------------------


def layer_norm(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta


def mlp(x, w, b):
    return jax.nn.relu(x @ w + b)  # positive inputs: relu is the identity, structurally


def attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1]).astype(np.float32)
    return jax.nn.softmax(scores, axis=-1) @ v


class Program(NamedTuple):
    name: str
    f: Callable
    shapes: list[tuple[int, ...]]
    inputs: str = "random"  # or "constant"


def conv(name, shapes, window_strides, padding=None, lhs_dilation=None, rhs_dilation=None, feature_group_count=1):
    """A convolution (NCHW input, OIHW kernel, explicit padding). A kernel element
    whose input tap falls in the padding or in a hole of the input dilation is not read
    (its product is a structural zero), so the maps are exact."""
    rank = len(window_strides)
    padding = padding or [(0, 0)] * rank
    lhs_dilation = lhs_dilation or (1,) * rank
    rhs_dilation = rhs_dilation or (1,) * rank

    def f(lhs, rhs):
        return lax.conv_general_dilated(
            lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, feature_group_count=feature_group_count
        )

    return Program(name, f, shapes)


PROGRAMS = [
    Program("softmax", lambda x: jax.nn.softmax(x, axis=-1), [(2, 3, 4)]),
    Program("x_plus_transpose", lambda x: x + x.T, [(3, 3)]),
    Program("reshape_chain", lambda x: x.reshape(6, 4).reshape(2, 3, 4) * 2.0, [(2, 3, 4)]),
    Program("broadcast_mul", lambda a, b: a[None, :] * b, [(4,), (3, 4)]),
    Program("slice_concat_reverse", lambda x: jnp.concatenate([x[:, 1:], jnp.flip(x, 0)], axis=1), [(3, 4)]),
    Program("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1))) * 3.0, [(2, 3)]),
    Program("pad_interior_negative", lambda x: lax.pad(x, 1.0, [(-1, 2, 1), (1, -1, 2)]), [(3, 3)]),
    Program("strided_slice_reverse", lambda x: jnp.flip(x[::2, 1::3], 1) + 1.0, [(5, 7)]),
    Program("reduce_sum_sq", lambda x: jnp.sum(x * x, axis=0), [(3, 5)]),
    Program("matmul", lambda a, b: a @ b, [(2, 3), (3, 4)]),
    Program("layer_norm", layer_norm, [(3, 5), (5,), (5,)]),
    Program("mlp", mlp, [(2, 3), (3, 4), (4,)]),
    Program("attention", attention, [(3, 2), (4, 2), (4, 3)]),
    conv("conv_valid", [(1, 2, 4, 5), (3, 2, 2, 2)], (1, 1)),
    conv("conv_stride_pad", [(1, 2, 5, 4), (3, 2, 2, 3)], (2, 1), padding=((1, 0), (0, 2))),
    conv(
        "conv_dilations",
        [(2, 1, 3, 5), (2, 1, 2, 2)],
        (1, 2),
        padding=((1, 1), (0, 1)),
        lhs_dilation=(2, 1),
        rhs_dilation=(1, 2),
    ),
    conv("conv_feature_groups", [(1, 4, 3, 3), (4, 2, 2, 2)], (1, 1), padding=((0, 1), (0, 1)), feature_group_count=2),
    Program("sum_axis0", lambda x: jnp.sum(x, axis=0), [(3, 4, 2)]),
    Program("sum_axes02", lambda x: jnp.sum(x, axis=(0, 2)), [(3, 4, 2)]),
    Program("sum_all", lambda x: jnp.sum(x), [(3, 4)]),
    Program("max_axis1", lambda x: jnp.max(x, axis=1), [(3, 4, 2)], "constant"),
    Program("max_axes12", lambda x: jnp.max(x, axis=(1, 2)), [(3, 4, 2)], "constant"),
    Program("max_then_sum", lambda x: jnp.sum(jnp.max(x, axis=0) * 2.0, axis=-1), [(2, 3, 4)], "constant"),
]


@functools.cache
def program_result(name: str) -> Comparison:
    p = next(p for p in PROGRAMS if p.name == name)
    return compare(p.f, p.shapes, p.inputs)


@pytest.mark.parametrize("name", [p.name for p in PROGRAMS])
def test_fused_maps_match_jacobian_sparsity(name) -> None:
    check(name, program_result(name))


# --- random chains -------------------------------------------------------------------

MAX_ELEMENTS = 48


def _factorisations(n: int, rank: int) -> list[tuple[int, ...]]:
    if rank == 1:
        return [(n,)]
    return [(d, *rest) for d in range(1, n + 1) if n % d == 0 for rest in _factorisations(n // d, rank - 1)]


def random_chain(rng: np.random.Generator, length: int, shape: tuple[int, ...]):
    """A function of one argument applying ``length`` random ops (with a description),
    shapes kept at most ``MAX_ELEMENTS`` elements. Values stay positive and every op has
    a positive derivative, so the jacobian is structurally exact."""
    steps: list[tuple[str, object]] = []
    shapes = [shape]  # shape of every value so far (value 0 is the argument)
    current = shape
    while len(steps) < length:
        kind = rng.choice(
            ["unary", "add_earlier", "transpose", "reshape", "broadcast", "slice", "pad", "reverse", "concat", "reduce"]
        )
        rank, size = len(current), int(np.prod(current))
        if kind == "unary":
            fn = ["log1p", "sqrt1p", "affine", "x_log1p_x"][rng.integers(4)]
            steps.append((f"{fn}", ("unary", fn)))
        elif kind == "add_earlier":
            same = [i for i, s in enumerate(shapes) if s == current and i < len(shapes) - 1]
            if not same:
                continue
            earlier = int(rng.choice(same))
            steps.append((f"add v{earlier}", ("add", earlier)))
        elif kind == "transpose":
            if rank < 2:
                continue
            perm = tuple(int(p) for p in rng.permutation(rank))
            steps.append((f"transpose{perm}", ("transpose", perm)))
            current = tuple(current[p] for p in perm)
        elif kind == "reshape":
            options = [f for r in (1, 2, 3) for f in _factorisations(size, r) if f != current]
            if not options:
                continue
            new = options[rng.integers(len(options))]
            steps.append((f"reshape{new}", ("reshape", new)))
            current = new
        elif kind == "broadcast":
            if size * 2 > MAX_ELEMENTS or rank >= 4:
                continue
            axis = int(rng.integers(rank + 1))
            steps.append((f"broadcast@{axis}", ("broadcast", axis)))
            current = current[:axis] + (2,) + current[axis:]
        elif kind == "slice":
            axis = int(rng.integers(rank))
            n = current[axis]
            if n < 2:
                continue
            start = int(rng.integers(n - 1))
            stop = int(rng.integers(start + 1, n + 1))
            step = int(rng.integers(1, 3))
            steps.append((f"slice[{axis}:{start}:{stop}:{step}]", ("slice", axis, start, stop, step)))
            current = current[:axis] + (len(range(start, stop, step)),) + current[axis + 1 :]
        elif kind == "pad":
            axis = int(rng.integers(rank))
            n = current[axis]
            lo, hi, interior = int(rng.integers(-1, 3)), int(rng.integers(-1, 3)), int(rng.integers(0, 2))
            new_n = lo + hi + n + max(n - 1, 0) * interior
            if new_n < 1 or size // n * new_n > MAX_ELEMENTS:
                continue
            steps.append((f"pad[{axis}:{lo},{hi},{interior}]", ("pad", axis, lo, hi, interior)))
            current = current[:axis] + (new_n,) + current[axis + 1 :]
        elif kind == "reverse":
            axis = int(rng.integers(rank))
            steps.append((f"reverse@{axis}", ("reverse", axis)))
        elif kind == "concat":
            if size * 2 > MAX_ELEMENTS:
                continue
            axis = int(rng.integers(rank))
            steps.append((f"concat_self@{axis}", ("concat", axis)))
            current = current[:axis] + (2 * current[axis],) + current[axis + 1 :]
        elif kind == "reduce":
            if rank < 2:
                continue
            axis = int(rng.integers(rank))
            steps.append((f"sum@{axis}", ("reduce", axis)))
            current = current[:axis] + current[axis + 1 :]
        shapes.append(current)

    def apply(op, x, values):
        what = op[0]
        if what == "unary":
            return {
                "log1p": jnp.log1p,
                "sqrt1p": lambda v: jnp.sqrt(v + 1.0),
                "affine": lambda v: v * 0.5 + 1.0,
                "x_log1p_x": lambda v: v * jnp.log1p(v),
            }[op[1]](x)
        if what == "add":
            return x + values[op[1]]
        if what == "transpose":
            return jnp.transpose(x, op[1])
        if what == "reshape":
            return x.reshape(op[1])
        if what == "broadcast":
            expanded = jnp.expand_dims(x, op[1])
            return jnp.broadcast_to(expanded, expanded.shape[: op[1]] + (2,) + expanded.shape[op[1] + 1 :])
        if what == "slice":
            _, axis, start, stop, step = op
            return lax.slice_in_dim(x, start, stop, step, axis=axis)
        if what == "pad":
            _, axis, lo, hi, interior = op
            config = [(0, 0, 0)] * x.ndim
            config[axis] = (lo, hi, interior)
            return lax.pad(x, jnp.float32(1.0), config)
        if what == "reverse":
            return jnp.flip(x, op[1])
        if what == "concat":
            return jnp.concatenate([x, x], axis=op[1])
        assert what == "reduce"
        return jnp.sum(x, axis=op[1])

    def f(x):
        values = [x]
        for _, op in steps:
            values.append(apply(op, values[-1], values))
        return values[-1]

    return f, " -> ".join(d for d, _ in steps)


CHAIN_SEEDS = list(range(16))


@functools.cache
def chain_result(seed: int) -> tuple[str, Comparison]:
    rng = np.random.default_rng(1000 + seed)
    length = int(rng.integers(2, 13))
    start = [(4, 6), (2, 3, 4), (12,), (3, 5)][seed % 4]
    f, description = random_chain(rng, length, start)
    return description, compare(f, [start], seed=seed)


@pytest.mark.parametrize("seed", CHAIN_SEEDS)
def test_random_chain_matches_jacobian_sparsity(seed) -> None:
    description, c = chain_result(seed)
    check(f"chain {seed} ({description})", c)


def test_summary() -> None:
    """Over-approximation counts of every program and chain (``pytest -s`` shows them);
    fails if any program over-approximates."""
    rows = [(p.name, program_result(p.name)) for p in PROGRAMS]
    rows += [(f"chain{seed}: {chain_result(seed)[0]}", chain_result(seed)[1]) for seed in CHAIN_SEEDS]
    print("\nfused maps vs jacobian sparsity: program, dependences, over-approximated pairs")
    for name, c in rows:
        print(f"  {name}: {c.dependences} dependences, {c.over_approximations} over-approximated")
    total = sum(c.over_approximations for _, c in rows)
    print(f"  total: {len(rows)} programs, {total} over-approximated pairs")
    assert total == 0


# --- long chains: bounded composition ------------------------------------------------


def chain_module(steps: int):
    """A function applying ``steps`` times: reshape 4x6 -> 6x4, then transpose."""
    lines = ["func.func @chain(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {"]
    value = "%arg0"
    for i in range(steps):
        lines.append(f"  %r{i} = stablehlo.reshape {value} : (tensor<4x6xf32>) -> tensor<6x4xf32>")
        lines.append(f"  %t{i} = stablehlo.transpose %r{i}, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>")
        value = f"%t{i}"
    lines.append(f"  return {value} : tensor<4x6xf32>")
    lines.append("}")
    return parse_module("\n".join(lines))


def test_deep_chain_is_bounded_and_over_approximation_is_reported() -> None:
    """1,000 alternating reshapes/transposes (an irregular permutation whose exact map
    grows exponentially): one map per argument, flagged as over-approximated, and it
    covers every dependence computed by brute force."""
    module = chain_module(500)
    fused = fusion_indexing(next(iter(module.body.operations)))
    (maps,) = fused.maps
    assert len(maps) == 1 and fused.over_approximated
    (m,) = maps
    ids = np.arange(24).reshape(4, 6)
    x = ids
    for _ in range(500):
        x = x.reshape(6, 4).T
    exact = {((i, j), divmod(int(x[i, j]), 6)) for i in range(4) for j in range(6)}
    assert exact <= m.relation()


def test_short_chain_is_exact() -> None:
    module = chain_module(3)
    fused = fusion_indexing(next(iter(module.body.operations)))
    (maps,) = fused.maps
    assert not fused.over_approximated
    x = np.arange(24).reshape(4, 6)
    for _ in range(3):
        x = x.reshape(6, 4).T
    assert set().union(*(m.relation() for m in maps)) == {
        ((i, j), divmod(int(x[i, j]), 6)) for i in range(4) for j in range(6)
    }
