"""hlo_indexing.analyze: JAX Lowered objects, JAX's own module (left unchanged), our
modules, MHLO, text, and modules of other MLIR bindings. Fused maps are checked against
jax.jacfwd sparsity and a numpy brute force (which input element each output reads)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import hlo_indexing
from hlo_indexing import analyze
from hlo_indexing.dialect_glue.parsing import parse_module
from helpers import REPO_ROOT

jax = pytest.importorskip("jax")
jnp = jax.numpy

TRANSPOSE_MLIR = """func.func @t(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
"""
TRANSPOSE_MHLO = """func.func @t(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "mhlo.transpose"(%x) {permutation = dense<[1, 0]> : tensor<2xi64>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
"""


def pairs(maps, output_shape) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(output index, input index) pairs of a set of output->input maps, by enumeration."""
    found = set()
    for m in maps:
        points, images = m.enumerate()
        rank = len(output_shape)
        found |= {(tuple(p[:rank]), tuple(i)) for p, i in zip(points.tolist(), images.tolist())}
    return found


def jacobian_pairs(f, x) -> set:
    jacobian = np.asarray(jax.jacfwd(f)(x))
    out_rank = jacobian.ndim - x.ndim
    return {(tuple(i[:out_rank]), tuple(i[out_rank:])) for i in zip(*np.nonzero(jacobian))}


def brute_force_pairs(f_numpy, shape) -> set:
    """Pairs for an f that only moves elements: feed distinct ids, read back where each came from."""
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    out = f_numpy(ids)
    return {(o, np.unravel_index(out[o], shape)) for o in itertools.product(*map(range, out.shape))}


def normalise(found: set) -> set:
    return {(tuple(map(int, o)), tuple(map(int, i))) for o, i in found}


@pytest.mark.parametrize(
    "name, f, shape",
    [
        ("softmax", lambda x: jax.nn.softmax(x, axis=-1), (2, 3, 4)),
        ("row sums broadcast", lambda x: x + jnp.sum(x, axis=0, keepdims=True), (3, 4)),
        ("reverse slice", lambda x: jnp.flip(x, 1)[:, 1:3] * 2.0, (2, 5)),
    ],
)
def test_fused_maps_of_lowered_match_jacobian_sparsity(name, f, shape):
    x = jax.random.uniform(jax.random.PRNGKey(0), shape, minval=0.5, maxval=1.5)
    result = analyze(jax.jit(f).lower(x), per_op=False)
    (fused,) = result.computation("main").maps
    out_shape = jax.eval_shape(f, x).shape
    assert normalise(pairs(fused.maps[0], out_shape)) == jacobian_pairs(f, x), name


@pytest.mark.parametrize(
    "f, shape",
    [
        (lambda x: x.reshape(4, 6).T, (2, 3, 4)),
        (lambda x: jnp.transpose(x, (2, 0, 1)).reshape(12, 2)[::3], (2, 3, 4)),
        (lambda x: jnp.concatenate([x[:, :1], x[:, ::-1]], axis=1), (2, 3)),
    ],
)
def test_fused_maps_match_numpy_brute_force(f, shape):
    result = analyze(jax.jit(f).lower(jnp.zeros(shape, jnp.float32)), per_op=False)
    (fused,) = result.computation("main").maps
    out_shape = jax.eval_shape(f, jnp.zeros(shape)).shape
    assert normalise(pairs(fused.maps[0], out_shape)) == normalise(brute_force_pairs(lambda a: np.asarray(f(a)), shape))


def test_per_op_maps_of_every_op_match_its_own_jacobian():
    """Each per-op map set of the lowered program, checked op by op on a transpose + reduce."""
    f = lambda x: jnp.sum(jnp.transpose(x, (1, 0, 2)), axis=2)  # noqa: E731
    x = jnp.ones((2, 3, 4))
    result = analyze(jax.jit(f).lower(x), fused=False)
    by_name = {op.op: op for op in result.ops}
    transpose = by_name["stablehlo.transpose"].indexing[0]
    assert normalise(pairs(transpose.maps[0], (3, 2, 4))) == jacobian_pairs(lambda a: jnp.transpose(a, (1, 0, 2)), x)
    reduce = by_name["stablehlo.reduce"].indexing[0]
    y = jnp.ones((3, 2, 4))
    assert normalise(pairs(reduce.maps[0], (3, 2))) == jacobian_pairs(lambda a: jnp.sum(a, axis=2), y)


def test_input_to_output_direction_is_the_inverse_relation():
    f = lambda x: jnp.transpose(x).reshape(6)  # noqa: E731
    lowered = jax.jit(f).lower(jnp.zeros((2, 3)))
    forward = analyze(lowered, per_op=False).computation("main").maps[0].maps[0]
    backward = analyze(lowered, per_op=False, direction="input-to-output").computation("main").maps[0].maps[0]
    assert {(o, i) for o, i in pairs(forward, (6,))} == {(o, i) for i, o in pairs(backward, (2, 3))}


def test_callers_jax_module_is_unchanged_unless_clone_false():
    lowered = jax.jit(lambda x: jnp.exp(x) * 2.0).lower(jnp.zeros((4,)))
    live = lowered.compiler_ir("stablehlo")
    before = str(live)
    annotated = analyze(lowered, annotate=True)
    assert str(lowered.compiler_ir("stablehlo")) == before
    assert "hlo_indexing.fused_maps" in str(annotated.module) and "hlo_indexing.output_to_input" in str(annotated.module)
    analyze(live)  # reading only, in JAX's own context
    assert str(live) == before
    in_place = analyze(live, annotate=True, clone=False)
    assert "hlo_indexing.fused_maps" in str(lowered.compiler_ir("stablehlo"))
    assert in_place.module == live.operation


def test_our_module_text_and_mhlo_give_the_same_maps(context):
    ours = parse_module(TRANSPOSE_MLIR)
    results = [analyze(ours), analyze(TRANSPOSE_MLIR), analyze(TRANSPOSE_MHLO)]
    texts = {str(r.computation("t")) for r in results}
    assert texts == {"@t result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]"}
    assert [op.op for op in results[2].ops] == ["mhlo.transpose"]


def test_str_lists_computations_then_ops():
    text = str(analyze(TRANSPOSE_MLIR))
    assert text.splitlines() == [
        "@t result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]",
        "per-op maps (output-to-input):",
        "  stablehlo.transpose at <string>:2:8, result 0:",
        "    operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]",
    ]


def test_filename_names_text_in_locations_and_errors():
    assert "stablehlo.transpose at step.mlir:2:8, result 0:" in str(analyze(TRANSPOSE_MLIR, filename="step.mlir"))
    with pytest.raises(hlo_indexing.ParseError, match="^step.mlir:1:"):
        analyze("func.func @f(", filename="step.mlir")
    with pytest.raises(ValueError, match="filename= names program text"):
        analyze(parse_module(TRANSPOSE_MLIR), filename="step.mlir")  # a module carries its own locations


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="cannot analyse a int"):
        analyze(3)
    with pytest.raises(ValueError, match="direction"):
        analyze(TRANSPOSE_MLIR, direction="sideways")
    with pytest.raises(hlo_indexing.ParseError, match="<string>:1"):
        analyze("func.func @f(")


def test_iree_compiler_module_in_its_own_context():
    iree_ir = pytest.importorskip("iree.compiler.ir")
    with iree_ir.Context() as foreign:
        module = iree_ir.Module.parse(TRANSPOSE_MLIR, context=foreign)
        before = str(module)
        result = analyze(module)
        assert str(module) == before
    assert str(result.computation("t")) == "@t result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]"
    assert result.ops[0].location.endswith(":2:8")


def test_upstream_mlir_module():
    mlir_ir = pytest.importorskip("mlir.ir")
    with mlir_ir.Context() as foreign:
        foreign.allow_unregistered_dialects = True
        module = mlir_ir.Module.parse(TRANSPOSE_MLIR.replace("stablehlo.transpose", '"stablehlo.transpose"'))
        result = analyze(module)
    assert result.computation("t").maps


def test_cli_and_analyze_module_do_not_import_jax():
    code = (
        "import sys\n"
        "from hlo_indexing.tools import opt\n"
        "import hlo_indexing.frontend\n"
        "assert opt.main(['--list-passes']) == 0\n"
        "assert 'jax' not in sys.modules, sorted(m for m in sys.modules if m.startswith('jax.'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_module_docstring_example():
    import doctest

    from hlo_indexing import frontend

    outcome = doctest.testmod(frontend)
    assert outcome.attempted >= 3 and outcome.failed == 0


def test_readme_shows_the_example_code():
    from pathlib import Path

    root = REPO_ROOT
    readme = (root / "README.md").read_text()
    code = (root / "examples" / "jax_softmax.py").read_text().split('"""')[-1].strip()
    assert code in readme
