"""Smoke test of the benchmark generators (benchmarks/): at tiny sizes, every generated
module parses and holds exactly the requested number of analysed HLO ops in the stated
number of functions. Performance itself is measured by ``dev/run.py bench``, not here."""

from __future__ import annotations

import importlib

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps.exact import isl_available
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.passes.attach_indexing_maps import hlo_ops

import bench_generate as generate  # benchmarks/ is on the tests' path (pytest's pythonpath)


def _functions_and_ops(text: str, context) -> tuple[int, int]:
    module = ir.Module.parse(text, context)
    functions = [op for op in module.body.operations if op.operation.name == "func.func"]
    return len(functions), len(list(hlo_ops(module.operation)))


@pytest.mark.parametrize("family", sorted(generate.FAMILIES))
@pytest.mark.parametrize("n_ops", [1, 7, 23, 61])
def test_generated_module_has_the_requested_op_count(context, family: str, n_ops: int) -> None:
    if family == "transformer":
        pytest.importorskip("jax")
    gen = generate.generate(family, n_ops, ops_per_function=20)
    n_functions, counted = _functions_and_ops(gen.text, context)
    assert counted == n_ops
    assert n_functions == gen.n_functions
    if family != "transformer":
        assert n_functions == -(-n_ops // 20)


def test_transformer_copies_are_whole_blocks(context) -> None:
    pytest.importorskip("jax")
    _, block_ops = generate.transformer_block()
    gen = generate.generate("transformer", 2 * block_ops + 5)
    n_functions, counted = _functions_and_ops(gen.text, context)
    assert (n_functions, counted) == (3, 2 * block_ops + 5)


@pytest.mark.parametrize("n_ops", [5, 9, 40])
@pytest.mark.parametrize("chain", ["deep_chain", "irregular_chain"])
def test_chains_are_one_function_of_n_ops(context, chain: str, n_ops: int) -> None:
    gen = getattr(generate, chain)(n_ops)
    assert _functions_and_ops(gen.text, context) == (1, n_ops)


def test_random_simplifier_inputs_parse(context) -> None:
    bench_simplifier = importlib.import_module("bench_simplifier")
    texts = bench_simplifier.random_map_texts(25, seed=3)
    assert len(texts) == 25
    for text in texts:
        IndexingMap.parse(text)


def test_simplifier_benchmark_times_the_isl_proofs(context) -> None:
    bench_simplifier = importlib.import_module("bench_simplifier")
    record = bench_simplifier.measure(bench_simplifier.random_map_texts(10, seed=1), repeat=1)
    if isl_available():
        assert record["proven"] == 10 and record["prove_ms_per_map"] > 0 and record["prove_ratio"] > 0
    else:
        assert record["proven"] is record["prove_ms_per_map"] is record["prove_ratio"] is None


def test_training_step_benchmark_runs_on_one_layer(context) -> None:
    pytest.importorskip("jax")
    importlib.import_module("bench_analysis")
    rows = importlib.import_module("bench_training").measure([1], repeat=1, baseline_repeat=1)
    assert [(r["layers"], r["growth_per_doubling"]) for r in rows] == [(1, None)]
    text = importlib.import_module("jax_training_step").training_step_text(1)
    n_functions, counted = _functions_and_ops(text, context)
    assert rows[0]["ops"] == counted > 300 and rows[0]["results"] > 30
