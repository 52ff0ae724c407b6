"""Our passes inside a user's ir.PassManager, and mixed textual pipelines."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing.dialect_glue.bindings import ir, passmanager
from hlo_indexing.maps.attributes import indexing_map_from_attribute
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.pass_manager import add_to, run_pipeline
from hlo_indexing.passes.pipeline_text import PipelineError

# (expression text over d0 in [0, hi], the same expression in numpy, hi)
CASES = [
    ("d0 mod 16 + (d0 + 2) floordiv 16", lambda d: d % 16 + (d + 2) // 16, 9),
    ("(d0 * 8 + 3) floordiv 4", lambda d: (d * 8 + 3) // 4, 20),
    ("(d0 mod 6) floordiv 3 + d0 mod 3", lambda d: (d % 6) // 3 + d % 3, 5),
    ("d0 floordiv 10 + (d0 mod 10) * 2", lambda d: d // 10 + (d % 10) * 2, 9),
]


def module_with(expression: str, hi: int) -> ir.Module:
    return ir.Module.parse(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        f"  %0 = stablehlo.negate %x {{hlo_indexing.m = {{map = affine_map<(d0) -> ({expression})>, "
        f"dims = array<i64: 0, {hi}>}}}} : tensor<4xf32>\n"
        "  return %0 : tensor<4xf32>\n}"
    )


def the_op(module: ir.Module) -> ir.Operation:
    function = module.body.operations[0]
    return function.regions[0].blocks[0].operations[0].operation


@pytest.mark.parametrize("expression, numpy_fn, hi", CASES)
def test_simplified_map_keeps_values_in_user_pass_manager(context, expression, numpy_fn, hi):
    module = module_with(expression, hi)
    pm = passmanager.PassManager("builtin.module")
    pm.add("canonicalize")
    add_to(pm, "hlo-simplify-indexing-maps")
    pm.run(module.operation)
    simplified = indexing_map_from_attribute(the_op(module).attributes["hlo_indexing.m"])
    points = np.arange(hi + 1)
    got = [simplified.evaluate([int(d)], [])[0] for d in points]
    assert got == list(numpy_fn(points))


def test_pass_is_listed_in_the_pipeline_text(context):
    pm = passmanager.PassManager("builtin.module")
    add_to(pm, "cse, hlo-simplify-indexing-maps{report=true}")
    assert str(pm) == "builtin.module(cse,hlo-simplify-indexing-maps)"


def test_error_of_our_pass_fails_the_user_pipeline(context):
    module = ir.Module.parse(
        'func.func @f() attributes {hlo_indexing.bad = {map = affine_map<(d0) -> (d0)>, dims = array<i64: 0>}} {\n'
        "  return\n}"
    )
    pm = passmanager.PassManager("builtin.module")
    add_to(pm, "hlo-simplify-indexing-maps")
    with pytest.raises(ir.MLIRError) as raised:
        pm.run(module.operation)
    [diagnostic] = raised.value.error_diagnostics
    assert "attribute 'hlo_indexing.bad'" in diagnostic.message
    assert str(diagnostic.location) == 'loc("-":1:1)'


def test_bad_pipeline_leaves_user_pass_manager_unchanged(context):
    pm = passmanager.PassManager("builtin.module")
    pm.add("cse")
    for bad in ("hlo-simplify-indexing-maps{colour=red}", "canonicalize{max-iterations=x}", "cse, no-such-pass"):
        with pytest.raises(PipelineError):
            add_to(pm, bad)
    assert str(pm) == "builtin.module(cse)"


def test_run_pipeline_mixes_upstream_and_ours_and_returns_remarks(context):
    module = module_with("d0 mod 16", 9)
    remarks = run_pipeline(module, "builtin.module(canonicalize, hlo-simplify-indexing-maps{report=true}, func.func(cse))")
    assert [(d.severity, d.message) for d in remarks.items] == [
        ("remark", "simplified 'hlo_indexing.m' to (d0) -> (d0), domain: d0 in [0, 9]")
    ]


def test_add_to_collects_remarks_into_given_diagnostics(context):
    module = module_with("d0 mod 16", 9)
    diagnostics = Diagnostics()
    pm = passmanager.PassManager("builtin.module")
    add_to(pm, "hlo-simplify-indexing-maps{report=true}", diagnostics)
    pm.run(module.operation)
    assert [d.severity for d in diagnostics.items] == ["remark"]


def test_run_pipeline_rejects_python_pass_under_func(context):
    module = module_with("d0", 3)
    with pytest.raises(PipelineError, match="cannot be nested under 'func.func'"):
        run_pipeline(module, "builtin.module(func.func(hlo-simplify-indexing-maps))")
