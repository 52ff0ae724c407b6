"""Issue #30: fused maps of JAX programs carry JAX's own names where the program has them
(``jax.result_info = "result['loss']"``, argument name locations ``loc("params['w']")``,
the parameter metadata of XLA's optimised HLO), and ``analyze`` takes a
``jax.stages.Compiled`` as well as a ``Lowered``, saying which it read. The named maps
are checked against the function's brute-force dependence (which input elements each
output element reads, found by perturbing inputs in numpy) and against the maps of the
same positions without names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import hlo_indexing
from hlo_indexing.analysis import jax_names, results
from hlo_indexing.maps.indexing_map import IndexingMap

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

OPT = Path(sys.executable).parent / "hlo-indexing-opt"
PARAMS = {"w": np.zeros((4, 3), np.float32), "b": np.zeros(3, np.float32)}
BATCH = {"x": np.zeros((8, 4), np.float32), "y": np.zeros((8, 3), np.float32)}
RESULTS = ("result['loss']", "result['pred']")
ARGUMENTS = ("params['b']", "params['w']", "batch['x']", "batch['y']")  # JAX flattens dicts by sorted key


def step(params, batch):
    y = batch["x"] @ params["w"] + params["b"]
    return {"loss": jnp.sum((y - batch["y"]) ** 2), "pred": y.T}


@pytest.fixture(scope="module")
def lowered():
    return jax.jit(step).lower(PARAMS, BATCH)


def _relation(m: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    points, images = m.enumerate()
    return {(tuple(p[: m.num_dims]), tuple(i)) for p, i in zip(points.tolist(), images.tolist())}


def _named_lines(computation) -> dict[tuple[str, str], set[str]]:
    """(value, target) -> map texts, from the printed lines ``@main V -> T: MAP``."""
    found: dict[tuple[str, str], set[str]] = {}
    for line in computation.lines():
        head, text = line.split(": ", 1)
        value, target = head.removeprefix("@main ").split(" -> ")
        found.setdefault((value, target), set()).add(text)
    return found


def test_a_lowered_dict_function_names_results_and_arguments_as_jax_does(lowered):
    main = lowered.compiler_ir("stablehlo").body.operations[0]
    assert jax_names.result_names(main) == RESULTS and jax_names.argument_names(main) == ARGUMENTS
    result = hlo_indexing.analyze(lowered, per_op=False)
    assert result.source == "JAX's StableHLO of a jax Lowered (lowered.compiler_ir('stablehlo'))"
    assert "of JAX's StableHLO of a jax Lowered" in repr(result)
    named = _named_lines(result.computation("main"))
    assert set(named) == {(r, a) for r in RESULTS for a in ARGUMENTS}
    # pred[i, j] = sum_k x[j, k] w[k, i] + b[i]: element (i, j) reads w[:, i], x[j, :], b[i]
    (w_map,) = named[("result['pred']", "params['w']")]
    assert _relation(IndexingMap.parse(w_map)) == {((i, j), (k, i)) for i in range(3) for j in range(8) for k in range(4)}
    (x_map,) = named[("result['pred']", "batch['x']")]
    assert _relation(IndexingMap.parse(x_map)) == {((i, j), (j, k)) for i in range(3) for j in range(8) for k in range(4)}
    assert named[("result['pred']", "batch['y']")] == {"no dependence"}


def test_named_maps_are_the_maps_of_the_same_positions_without_names(lowered):
    named = _named_lines(hlo_indexing.analyze(lowered, per_op=False).computation("main"))
    plain = hlo_indexing.analyze(lowered.as_text(), per_op=False).computation("main")  # no debug info: no argument names
    assert plain.argument_names == (None,) * 4 and plain.result_names == RESULTS
    for line in plain.lines():
        head, text = line.split(": ", 1)
        value, target = head.removeprefix("@main ").split(" -> ")
        assert text in named[(value, ARGUMENTS[int(target.removeprefix("arg "))])]


def test_a_compiled_object_is_read_as_xlas_optimised_hlo_with_the_same_names_and_maps(lowered):
    compiled = lowered.compile()
    result = hlo_indexing.analyze(compiled, per_op=False)
    assert result.source == "XLA's optimised HLO of a jax Compiled (compiled.as_text())"
    assert any(c.kind == "mhlo.fusion" for c in result.computations)  # XLA's fusions
    from_compiled = _named_lines(result.computation("main"))
    from_lowered = _named_lines(hlo_indexing.analyze(lowered, per_op=False).computation("main"))
    assert set(from_compiled) == set(from_lowered)
    for key, texts in from_lowered.items():  # the same dependence through XLA's fusions
        relations = [_relation(IndexingMap.parse(t)) if t != "no dependence" else set() for t in texts]
        again = [_relation(IndexingMap.parse(t)) if t != "no dependence" else set() for t in from_compiled[key]]
        assert set().union(*relations) == set().union(*again), key


def test_the_brute_force_dependence_of_the_compiled_program_agrees(lowered):
    # which elements of params['w'] output pred[i, j] depends on, found by perturbing w
    result = hlo_indexing.analyze(lowered.compile(), per_op=False)
    (text,) = _named_lines(result.computation("main"))[("result['pred']", "params['w']")]
    predicted = _relation(IndexingMap.parse(text))
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((4, 3)).astype(np.float32), "b": rng.standard_normal(3).astype(np.float32)}
    batch = {"x": rng.standard_normal((8, 4)).astype(np.float32), "y": rng.standard_normal((8, 3)).astype(np.float32)}
    base = np.asarray(step(params, batch)["pred"])
    found = set()
    for k, i in np.ndindex(4, 3):
        bumped = {"w": params["w"].copy(), "b": params["b"]}
        bumped["w"][k, i] += 1.0
        changed = np.argwhere(np.asarray(step(bumped, batch)["pred"]) != base)
        found |= {((int(a), int(b)), (k, i)) for a, b in changed}
    assert found == predicted


def test_input_to_output_names_the_arguments_as_values(lowered):
    named = _named_lines(hlo_indexing.analyze(lowered, per_op=False, direction="input-to-output").computation("main"))
    assert set(named) == {(a, r) for a in ARGUMENTS for r in RESULTS}


def test_the_json_document_carries_the_names_and_validates(lowered):
    document = hlo_indexing.analyze(lowered, per_op=False).to_dict()
    jsonschema.validate(document, results.schema())
    (main,) = [c for c in document["computations"] if c["name"] == "@main"]
    assert [v["name"] for v in main["values"]] == list(RESULTS)
    assert [t["name"] for t in main["values"][0]["targets"]] == list(ARGUMENTS)


def test_the_command_line_names_maps_of_jax_text_with_debug_info(lowered, tmp_path):
    source = tmp_path / "step.mlir"
    source.write_text(lowered.as_text(debug_info=True))
    done = subprocess.run(
        [str(OPT), str(source), "--hlo-print-fused-indexing-maps=format=json", "-o", "/dev/null"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (main,) = [c for c in json.loads(done.stdout)["computations"] if c["name"] == "@main"]
    assert [v["name"] for v in main["values"]] == list(RESULTS)
    done = subprocess.run(
        [str(OPT), str(source), "--hlo-print-fused-indexing-maps", "-o", "/dev/null"], capture_output=True, text=True, timeout=300
    )
    assert "remark: @main result['pred'] -> params['w']: (d0, d1)[s0] -> (s0, d0)" in done.stderr


def test_entry_parameter_names_unescape_xla_metadata_and_keep_other_attributes():
    text = (
        "HloModule m\n\nENTRY %main.2 (a: f32[3]) -> f32[3] {\n"
        "  %a = f32[3]{0} parameter(0), metadata={op_name=\"params[\\'b\\']\"}\n"
        "  %c = f32[3]{0} parameter(1)\n  ROOT %n = f32[3]{0} negate(%a)\n}\n"
    )
    assert jax_names.entry_parameter_names(text) == {0: "params['b']"}
    module = hlo_indexing.parse_module(
        'func.func @f(%a: tensor<3xf32> {hlo_indexing.layout = "{0}"}, %b: tensor<3xf32>) -> tensor<3xf32> {\n'
        "  return %a : tensor<3xf32>\n}\n"
    )
    function = module.body.operations[0]
    jax_names.name_arguments(function, {0: "params['b']"})
    jax_names.name_results(function, ["result"])
    assert jax_names.argument_names(function) == ("params['b']", None)
    assert jax_names.result_names(function) == ("result",)
    assert 'hlo_indexing.layout = "{0}"' in str(function)  # kept
