"""Operand utilisation and coalescing hints against independent brute force.

* Utilisation: the elements of each argument that JAX says are read (non-zero columns
  of ``jax.jacfwd`` of the whole program, every output included, at positive random
  inputs; the programs are chosen with structurally exact jacobians as in
  ``test_fusion_jax.py``) counted with numpy, against ``operand_utilization`` of the
  lowered StableHLO. The hull bound must never be below the exact value.
* Coalescing: a plain-Python evaluator walks every feasible point of a map, evaluates
  it and its innermost-dimension neighbour, linearises with ``numpy.ravel_multi_index``
  in the layout's major-to-minor order, and applies the two documented rules (stride
  -1/0/1, or contiguous per-warp footprint); ``map_coalescing`` must agree wherever it
  decides, and say "not coalesced, inexact" where it does not.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from hlo_indexing import IndexingMap, Layout, coalescing, operand_utilization, parse_module  # noqa: E402
from hlo_indexing.analysis.coalescing import map_coalescing  # noqa: E402
from hlo_indexing.analysis.utilization import fused_per_result, maps_utilization  # noqa: E402
from hlo_indexing.dialect_glue.bindings import ir  # noqa: E402


def lowered_main(f, shapes):
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    module = parse_module(jax.jit(f, keep_unused=True).lower(*args).as_text())
    main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
    return module, main


def jacobian_read_fraction(f, shapes, seed: int = 0) -> list[float]:
    """Per argument: the fraction of elements some output's jacobian depends on."""
    rng = np.random.default_rng(seed)
    values = [jnp.asarray(rng.uniform(0.5, 1.5, s), jnp.float32) for s in shapes]
    per_output = jax.jit(jax.jacfwd(f, argnums=tuple(range(len(values)))))(*values)
    per_output = per_output if isinstance(per_output[0], tuple) else (per_output,)
    fractions = []
    for k, value in enumerate(values):
        read = np.zeros(value.shape, dtype=bool)
        for jacs in per_output:
            jac = np.asarray(jacs[k])
            out_rank = jac.ndim - value.ndim
            read |= np.any(jac != 0, axis=tuple(range(out_rank)))
        fractions.append(read.sum() / read.size if read.size else 1.0)
    return fractions


PROGRAMS = [
    ("strided_slice", lambda x: x[::2, 1::3] * 2.0, [(6, 7)]),
    ("pad_then_slice", lambda x: lax.pad(x, 1.0, [(1, 1, 0), (2, 0, 1)])[1:-1, 3:], [(4, 5)]),
    ("transpose_slice", lambda x: x.T[:3] + 1.0, [(4, 6)]),
    ("broadcast_row", lambda x: jnp.broadcast_to(x[2], (4, 6)) * 1.0, [(5, 6)]),
    ("reduce_part", lambda x: jnp.sum(x[:, :4], axis=1), [(3, 7)]),
    ("two_outputs", lambda x: (x[:2] * 2.0, x[-1:] * 3.0), [(5, 3)]),
    ("unused_argument", lambda x, y: x * 2.0, [(3,), (4,)]),
    ("reverse_concat", lambda x: jnp.concatenate([x[:1], x[::-1][:2]]), [(6, 2)]),
    ("reshape_slice", lambda x: x.reshape(-1)[3:17] + 1.0, [(4, 6)]),
    ("scalar_scale", lambda x, s: x * s, [(3, 2), ()]),
    ("evens_and_first_half", lambda x: x[::2] + x[: x.shape[0] // 2], [(16,)]),
]


@pytest.mark.parametrize("name", [p[0] for p in PROGRAMS])
def test_utilization_matches_jacobian(name) -> None:
    _, f, shapes = next(p for p in PROGRAMS if p[0] == name)
    expected = jacobian_read_fraction(f, shapes)
    module, main = lowered_main(f, shapes)
    fused = fused_per_result(main)
    ours = operand_utilization(main, fused=fused)
    assert len(ours) == len(shapes)
    for k, (u, want) in enumerate(zip(ours, expected)):
        assert u.exact, f"{name} arg {k}: {u}"
        assert u.fraction == pytest.approx(want), f"{name} arg {k}: ours {u}, jacobian {want}"
        bound = operand_utilization(main, fused=fused, max_points=0)[k]
        assert bound.fraction >= want - 1e-12, f"{name} arg {k}: bound {bound} below {want}"
        assert bound.exact == (bound.method != "hull")
    del module


def test_hull_bound_on_large_domain_covers_small_exact() -> None:
    f = lambda x: x[::2] + x[: x.shape[0] // 2]  # noqa: E731
    _, small = lowered_main(f, [(16,)])
    exact = operand_utilization(small)[0]
    assert exact.exact and exact.method == "enumeration" and exact.fraction == pytest.approx(0.75)
    module, large = lowered_main(f, [(1 << 22,)])
    bound = operand_utilization(large, max_points=1 << 16)[0]
    assert bound.method == "hull" and not bound.exact
    assert exact.fraction <= bound.fraction <= 1.0
    del module


def test_bound_is_tight_for_a_strided_read() -> None:
    """x[::3, ::2] of a large array: each result takes as many values as its variable."""
    module, main = lowered_main(lambda x: x[::3, ::2] * 2.0, [(3000, 2000)])
    u = operand_utilization(main, max_points=1000)[0]
    assert (u.method, u.exact, u.read) == ("hull", False, 1000 * 1000)
    del module


def test_utilization_special_arguments(context) -> None:
    undefined = IndexingMap.undefined("custom call")
    assert (maps_utilization([undefined], (4,)).fraction, maps_utilization([undefined], (4,)).exact) == (1.0, False)
    m = IndexingMap.parse("(d0) -> (d0 * 2), domain: d0 in [0, 1]")
    assert maps_utilization([m], (0,)).fraction == 1.0
    assert maps_utilization([], (5,)).fraction == 0.0
    scalar = IndexingMap.parse("(d0) -> (), domain: d0 in [0, 3]")
    assert maps_utilization([scalar], ()).fraction == 1.0
    capped = maps_utilization([m], (4,), over_approximated=True)
    assert (capped.fraction, capped.exact) == (0.5, False)


# ----------------------------------------------------------------- coalescing


def brute_force_coalesced(m: IndexingMap, shape, minor_to_major, inner: int, warp: int = 32) -> bool:
    """The two documented rules, point by point, in plain Python."""
    major_to_minor = list(reversed(minor_to_major))
    physical = [shape[k] for k in major_to_minor]
    variables = m.dim_vars + m.symbol_vars
    n_dims, n_range = m.num_dims, len(m.range_vars)

    def offset(point):
        image = m.evaluate(point[:n_dims], point[n_dims:])
        return int(np.ravel_multi_index([image[k] for k in major_to_minor], physical))

    feasible = [
        p for p in itertools.product(*(range(v.bounds.lower, v.bounds.upper + 1) for v in variables))
        if m.contains_point(p[:n_dims], p[n_dims:])
    ]
    feasible_set = set(feasible)
    stride_ok = True
    for p in feasible:
        q = p[:inner] + (p[inner] + 1,) + p[inner + 1 :]
        if q in feasible_set and abs(offset(q) - offset(p)) > 1:
            stride_ok = False
    if stride_ok:
        return True
    groups: dict = {}
    lo = variables[inner].bounds.lower
    for p in feasible:
        key = p[:inner] + p[inner + 1 : n_dims] + p[n_dims + n_range :] + ((p[inner] - lo) // warp,)
        groups.setdefault(key, set()).add(offset(p))
    return all(max(s) - min(s) + 1 == len(s) for s in groups.values())


MAPS = [
    # (map text, argument shape)
    ("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]", (4, 6)),
    ("(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]", (4, 6)),
    ("(d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 5]", (6,)),
    ("(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 5]", (4,)),
    ("(d0, d1) -> (d0, 5 - d1), domain: d0 in [0, 3], d1 in [0, 5]", (4, 6)),
    ("(d0, d1) -> (d0, d1 * 2), domain: d0 in [0, 3], d1 in [0, 2]", (4, 6)),
    ("(d0)[s0] -> (d0, s0), domain: d0 in [0, 4], s0 in [0, 6]", (5, 7)),
    ("(d0)[s0] -> (s0, d0), domain: d0 in [0, 4], s0 in [0, 6]", (7, 5)),
    ("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 4], s0 in [0, 1]", (10,)),
    ("(d0)[s0] -> (d0 * 3 + s0), domain: d0 in [0, 4], s0 in [0, 1]", (15,)),
    ("(d0)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 2], s0 in [0, 2], s1 in [0, 3]", (3, 3, 4)),
    ("(d0)[s0] -> (d0 * 4 + s0 * 2), domain: d0 in [0, 4], s0 in [0, 1]", (20,)),
    ("(d0, d1) -> (d0 * 2 + d1 floordiv 3, d1 mod 3), domain: d0 in [0, 2], d1 in [0, 5]", (6, 3)),
    ("(d0, d1) -> ((d0 * 6 + d1) mod 4, (d0 * 6 + d1) floordiv 4), domain: d0 in [0, 1], d1 in [0, 5]", (4, 3)),
    ("(d0) -> ((d0 mod 2) * 4 + d0 floordiv 2), domain: d0 in [0, 7]", (8,)),
    ("(d0, d1) -> (d0, (d1 - 1) floordiv 2), domain: d0 in [0, 2], d1 in [1, 7], (d1 - 1) mod 2 in [0, 0]", (3, 4)),
    ("(d0, d1) -> (d0, d1 * 3), domain: d0 in [0, 2], d1 in [0, 3], d0 + d1 in [0, 2]", (3, 12)),
    ("(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 3], d1 in [0, 4], s0 in [0, 2]", (6, 5)),
    ("(d0, d1)[s0] -> (d0, d1 + s0 * 5), domain: d0 in [0, 1], d1 in [0, 4], s0 in [0, 2]", (2, 15)),
]


def _layouts(rank: int):
    return [tuple(p) for p in itertools.permutations(range(rank))]


@pytest.mark.parametrize("text,shape", MAPS)
@pytest.mark.parametrize("warp", [32, 2])
def test_map_coalescing_matches_brute_force(context, text, shape, warp) -> None:
    m = IndexingMap.parse(text)
    for minor_to_major in _layouts(len(shape)):
        layout = Layout(minor_to_major)
        for inner in range(m.num_dims):
            want = brute_force_coalesced(m, shape, minor_to_major, inner, warp)
            got = map_coalescing(m, shape, layout, innermost_dim=inner, warp=warp)
            assert got.exact and got.coalesced == want, f"{text} layout {minor_to_major} inner d{inner}: {got}"
            symbolic_only = map_coalescing(m, shape, layout, innermost_dim=inner, warp=warp, max_points=0)
            if symbolic_only.exact:
                assert symbolic_only.coalesced == want, f"{text} {minor_to_major} d{inner}: {symbolic_only}"
            else:
                assert (symbolic_only.coalesced, symbolic_only.method) == (False, "undecided")


def test_symbolic_path_decides_large_maps(context) -> None:
    row = IndexingMap.parse("(d0)[s0] -> (d0, s0), domain: d0 in [0, 99999], s0 in [0, 1023]")
    got = map_coalescing(row, (100000, 1024))
    assert (got.coalesced, got.exact, got.method) == (True, True, "symbolic")
    strided = IndexingMap.parse("(d0, d1) -> (d1, d0), domain: d0 in [0, 4095], d1 in [0, 4095]")
    got = map_coalescing(strided, (4096, 4096))
    assert (got.coalesced, got.exact, got.method) == (False, True, "symbolic")
    assert map_coalescing(strided, (4096, 4096), "{0,1}").coalesced
    reshape = IndexingMap.parse("(d0) -> (d0 floordiv 4096, d0 mod 4096), domain: d0 in [0, 16777215]")
    got = map_coalescing(reshape, (4096, 4096), "{0,1}")
    assert (got.coalesced, got.exact, got.method) == (False, False, "undecided")


def test_tiled_layout(context) -> None:
    """A tiled layout linearises through the layout module (its own tests check it)."""
    from hlo_indexing.layout import linear_index

    m = IndexingMap.parse("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 7]")
    layout = Layout.parse("{1,0:T(2,4)}")
    got = map_coalescing(m, (4, 8), layout)
    diffs = {linear_index((4, 8), (i, j + 1), layout) - linear_index((4, 8), (i, j), layout) for i in range(4) for j in range(7)}
    footprints = [{linear_index((4, 8), (i, j), layout) for j in range(8)} for i in range(4)]
    want = diffs <= {-1, 0, 1} or all(max(s) - min(s) + 1 == len(s) for s in footprints)
    assert got.exact and got.coalesced == want


def test_coalescing_per_argument_uses_layout_attributes() -> None:
    text = """
    func.func @f(%x: tensor<4x6xf32> {hlo_indexing.layout = "{0,1}"}, %y: tensor<6x4xf32>, %s: tensor<f32>,
                 %unused: tensor<3xf32>) -> tensor<6x4xf32> {
      %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
      %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
      %u = stablehlo.transpose %y, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
      %v = stablehlo.transpose %u, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
      %0 = stablehlo.add %t, %v : tensor<6x4xf32>
      %1 = stablehlo.add %0, %b : tensor<6x4xf32>
      return %1 : tensor<6x4xf32>
    }
    """
    module = parse_module(text)
    func = module.body.operations[0]
    got = coalescing(func)
    assert [c.coalesced for c in got] == [True, True, True, True]
    assert [c.method for c in got[2:]] == ["scalar", "unused"]
    row_major = coalescing(func, layouts=[None, None, None, None])
    assert [c.coalesced for c in row_major] == [False, True, True, True]
    column_result = coalescing(func, layouts=[None] * 4, result_layouts=["{0,1}"])
    assert [c.coalesced for c in column_result] == [True, False, True, True]


def test_fusion_operand_layout_from_producer_attribute() -> None:
    """An ``mhlo.fusion`` operand produced by an op carrying ``hlo_indexing.layout``
    (as the HLO importer writes it) is linearised in that layout."""
    text = """
    func.func @f(%a: tensor<4x6xf32>) -> tensor<6x4xf32> {
      %c = stablehlo.negate %a {hlo_indexing.layout = "{0,1}"} : tensor<4x6xf32>
      %0 = "mhlo.fusion"(%c) ({
      ^bb0(%p0: tensor<4x6xf32>):
        %1 = "mhlo.transpose"(%p0) <{permutation = dense<[1, 0]> : tensor<2xi64>}> : (tensor<4x6xf32>) -> tensor<6x4xf32>
        mhlo.return %1 : tensor<6x4xf32>
      }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
      return %0 : tensor<6x4xf32>
    }
    """
    module = parse_module(text)
    fusion = list(module.body.operations[0].regions[0].blocks[0].operations)[1]
    assert [c.coalesced for c in coalescing(fusion)] == [True]
    assert [c.coalesced for c in coalescing(fusion, layouts=[None])] == [False]


def test_bad_layout_is_a_located_error() -> None:
    from hlo_indexing.passes.pass_manager import run_pipeline

    module = parse_module(
        'func.func @f(%x: tensor<4x6xf32> {hlo_indexing.layout = "{0}"}) -> tensor<4x6xf32> {\n'
        "  return %x : tensor<4x6xf32>\n}\n"
    )
    with pytest.raises(ir.MLIRError) as caught:
        run_pipeline(module, "builtin.module(hlo-print-fused-indexing-maps{analyses=true})")
    messages = [str(d.location) + " " + d.message for d in caught.value.error_diagnostics]
    assert any(":1:1" in m and "layout {0} has rank 1, the array has rank 2" in m for m in messages), messages
