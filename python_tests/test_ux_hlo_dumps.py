"""Issue #20, item 2: compiled HLO dumps are first-class. Fusions and per-op results are
named after their HLO instruction and found by that name; reducer and comparator
computations are not reported on their own; remarks come in source order; ``func=NAME``
selects a function. Input: ``examples/softmax_cpu.hlo``, ``jax.jit(softmax).lower(x)
.compile().as_text()``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import hlo_indexing
from hlo_indexing.maps.indexing_map import IndexingMap

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "examples" / "softmax_cpu.hlo"
OPT = Path(sys.executable).parent / "hlo-indexing-opt"
REMARK = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): remark: (?P<message>.*)$")


@pytest.fixture(scope="module")
def result():
    return hlo_indexing.analyze(DUMP)


def _relation(m: IndexingMap) -> set:
    points, images = m.enumerate()
    return {(tuple(p[: m.num_dims]), tuple(i)) for p, i in zip(points.tolist(), images.tolist())}


def test_fusions_are_named_after_their_instruction(result):
    names = [c.name for c in result.computations]
    fusions = [c.name for c in result.computations if c.kind == "mhlo.fusion"]
    assert fusions == [
        "wrapped_reduce-window",
        "wrapped_reduce",
        "subtract_exponential_fusion",
        "wrapped_reduce-window.1",
        "reduce_divide_fusion",
        "broadcast_multiply_fusion",
    ]
    assert "mhlo.fusion" not in names


def test_a_fusion_is_found_by_name_and_its_maps_are_exp_of_x_minus_max(result):
    fusion = result.computation("subtract_exponential_fusion")
    assert fusion.location.endswith("softmax_cpu.hlo:99:3")
    (fused,) = fusion.maps
    x_maps, max_maps = fused.maps
    # brute force: out[i, j] = exp(x[i, j] - max[i]) over f32[8,128]
    assert {r for m in x_maps for r in _relation(m)} == {((i, j), (i, j)) for i in range(8) for j in range(128)}
    assert {r for m in max_maps for r in _relation(m)} == {((i, j), (i,)) for i in range(8) for j in range(128)}


def test_unknown_name_is_a_key_error_with_a_suggestion(result):
    with pytest.raises(KeyError, match="did you mean 'subtract_exponential_fusion'"):
        result.computation("subtract_exponential")
    assert result.computation("main") is result.computation("@main")


def test_per_op_results_are_named_and_found(result):
    op = result.op("exp.0")
    assert op.op == "stablehlo.exponential" and op.name == "exp.0"
    assert "stablehlo.exponential 'exp.0' at" in str(op)
    with pytest.raises(KeyError, match="no op 'exp.9'"):
        result.op("exp.9")


def test_reducer_computations_are_not_reported(result):
    text = str(result.module)
    assert "func.func private @region_0.1" in text  # the importer keeps them...
    assert not any(c.name.startswith("@region_") for c in result.computations)  # ...we do not report them
    assert "() -> ()" not in str(result)
    assert not any("reduce_max.5" == op.name for op in result.ops)  # the reducer's maximum


@pytest.mark.parametrize("flag", ["--hlo-print-fused-indexing-maps", "--hlo-print-indexing-maps"])
def test_remarks_come_in_source_order(flag):
    done = subprocess.run([str(OPT), str(DUMP), flag, "-o", "/dev/null"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    positions = [(int(m["line"]), int(m["col"])) for m in map(REMARK.match, done.stderr.splitlines()) if m]
    assert len(positions) > 10
    assert positions == sorted(positions)
    assert "@region" not in done.stderr and "() -> ()" not in done.stderr
    if "fused" in flag:
        assert "remark: subtract_exponential_fusion result 0 -> arg 1: (d0, d1) -> (d0)" in done.stderr
    else:
        assert "output-to-input indexing of result #0 (stablehlo.exponential exp.0):" in done.stderr


def test_func_option_selects_one_function():
    done = subprocess.run(
        [str(OPT), str(DUMP), "--hlo-print-fused-indexing-maps=func=main", "-o", "/dev/null"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    labels = {m["message"].split(" result ")[0] for m in map(REMARK.match, done.stderr.splitlines()) if m}
    assert labels == {
        "@main",
        "wrapped_reduce-window",
        "wrapped_reduce",
        "subtract_exponential_fusion",
        "wrapped_reduce-window.1",
        "reduce_divide_fusion",
        "broadcast_multiply_fusion",
    }
    done = subprocess.run(
        [str(OPT), str(DUMP), "--hlo-print-indexing-maps=func=fused_computation.2", "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    ops = re.findall(r"indexing of result #0 \((\S+) (\S+)\):", done.stderr)
    assert ops == [("stablehlo.broadcast_in_dim", "sub.1"), ("stablehlo.subtract", "sub.0"), ("stablehlo.exponential", "exp.0")]


def test_func_option_with_an_unknown_function_suggests_one():
    done = subprocess.run(
        [str(OPT), str(DUMP), "--hlo-print-fused-indexing-maps=func=mian", "-o", "/dev/null"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "no function or HLO instruction 'mian' in the module; did you mean 'main'?" in done.stderr
