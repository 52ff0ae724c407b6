"""Issue #20, item 7: bad values are errors Python users expect, all of them also
``HloIndexingError``; bad pass options fail the run (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import hlo_indexing
from hlo_indexing.errors import HloIndexingError

OPT = Path(sys.executable).parent / "hlo-indexing-opt"
ADD = """func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("source", [Path("missing.mlir"), "missing.mlir", "dir/step.hlo"])
def test_missing_path_is_file_not_found(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="missing.mlir|step.hlo") as caught:
        hlo_indexing.analyze(source)
    assert isinstance(caught.value, HloIndexingError)


def test_a_str_naming_an_existing_file_is_read(tmp_path, monkeypatch):
    (tmp_path / "step.mlir").write_text(ADD)
    monkeypatch.chdir(tmp_path)
    result = hlo_indexing.analyze("step.mlir", per_op=False)
    assert str(result) == (
        "@f result 0 -> arg 0: (d0) -> (d0), domain: d0 in [0, 3]\n@f result 0 -> arg 1: (d0) -> (d0), domain: d0 in [0, 3]"
    )
    assert "step.mlir:1:1" in result.computation("f").location


@pytest.mark.parametrize("obj", [42, 1.5, object()])
def test_wrong_type_is_type_error(obj):
    with pytest.raises(TypeError, match="cannot analyse") as caught:
        hlo_indexing.analyze(obj)
    assert isinstance(caught.value, HloIndexingError)
    with pytest.raises(TypeError):
        hlo_indexing.parse_module(obj)


def test_fusion_indexing_of_a_module_or_a_missing_result_is_explained():
    module = hlo_indexing.parse_module(ADD)
    with pytest.raises(HloIndexingError, match="not a builtin.module"):
        hlo_indexing.fusion_indexing(module)
    func = module.body.operations[0]
    with pytest.raises(IndexError, match="no result 1; the computation has 1 results") as caught:
        hlo_indexing.fusion_indexing(func, 1)
    assert isinstance(caught.value, HloIndexingError)
    with pytest.raises(IndexError, match="no argument 2"):
        hlo_indexing.fusion_input_to_output_indexing(func, 2)


@pytest.mark.parametrize(
    "option, message",
    [
        ("max-maps=-3", "option 'max-maps' of pass 'hlo-print-fused-indexing-maps' must be at least 1, got -3"),
        ("max-points=-1", "must be at least 0, got -1"),
        ("max-maps=many", "expects an integer, got 'many'"),
    ],
)
def test_bad_pass_options_exit_1(option, message, tmp_path):
    source = tmp_path / "add.mlir"
    source.write_text(ADD)
    done = subprocess.run([str(OPT), str(source), f"--hlo-print-fused-indexing-maps={option}"], capture_output=True, text=True)
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr
