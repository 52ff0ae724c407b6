"""``func=`` on every pass (issue #28, point 4): a function, or an HLO instruction by the
name the remarks print (``ynn_fusion.2``), and what is nested in it; nothing outside it
is read, reported or changed (passes/selection.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.hlo_import import BACKEND_CONFIG_ATTR
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.passes.pass_manager import run_pipeline
from hlo_indexing.passes.registry import PASSES

HLO = Path(__file__).resolve().parent.parent / "examples" / "jax_fusions_cpu.hlo"
FUSION = "ynn_fusion.2"


def nested_ops(op: ir.Operation) -> list[ir.Operation]:
    """``op`` and every op nested in it."""
    found: list[ir.Operation] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        found.append(inner.operation)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def annotated(module: ir.Module) -> list[ir.Operation]:
    """The ops (and functions) carrying an ``hlo_indexing.*`` attribute the passes write
    (not those the HLO importer writes: layouts, backend configs)."""
    out = []
    for op in nested_ops(module.operation):
        names = {op.attributes[i].name for i in range(len(op.attributes))}
        if "arg_attrs" in names:  # a function's argument attributes (the importer writes layouts there)
            names |= set(re.findall(r"hlo_indexing\.\w+", str(op.attributes["arg_attrs"])))
        if any(name.startswith("hlo_indexing.") for name in names - {"hlo_indexing.layout", BACKEND_CONFIG_ATTR}):
            out.append(op)
    return out


def the_fusion(module: ir.Module) -> ir.Operation:
    (fusion,) = [op for op in nested_ops(module.operation) if op.name == "mhlo.fusion" and f'"{FUSION}"' in str(op.location)]
    return fusion


def test_every_pass_has_func() -> None:
    assert all(any(o.name == "func" for o in info.options) for info in PASSES.values()), [
        name for name, info in PASSES.items() if not any(o.name == "func" for o in info.options)
    ]


@pytest.mark.parametrize(
    "pipeline",
    [
        "hlo-attach-indexing-maps{func=%s}",
        "hlo-attach-fused-indexing-maps{func=%s}",
        "hlo-lower-tiled-layouts{func=%s}",
    ],
)
def test_an_attaching_pass_changes_only_the_instruction_named(pipeline: str) -> None:
    module = parse_module(HLO)
    run_pipeline(module, f"builtin.module({pipeline % FUSION})")
    inside = set(nested_ops(the_fusion(module)))
    changed = annotated(module)
    assert changed and all(op in inside for op in changed), [op.name for op in changed if op not in inside]
    everything = parse_module(HLO)
    run_pipeline(everything, f"builtin.module({pipeline % ''})")
    assert len(annotated(everything)) > len(changed)  # without func=, more is changed


def test_attach_tiles_tiles_only_the_instruction_named() -> None:
    # The same sizes would not fit the other fusions (an error each without func=).
    module = parse_module(HLO)
    run_pipeline(module, f"builtin.module(hlo-attach-tiles{{func={FUSION} tile-sizes=1,128}})")
    changed = annotated(module)
    inside = set(nested_ops(the_fusion(module)))
    assert changed and all(op in inside for op in changed)
    with pytest.raises(ir.MLIRError, match="2 tile sizes given, the tiling has 3 parameters"):
        run_pipeline(parse_module(HLO), "builtin.module(hlo-attach-tiles{tile-sizes=1,128})")


def test_simplify_simplifies_only_the_function_named() -> None:
    text = (HLO.parent / "simplify_maps.mlir").read_text()
    module = parse_module(text + text.replace("@scale", "@other"))
    remarks = run_pipeline(module, "builtin.module(hlo-simplify-indexing-maps{func=other report=true})").items
    assert [location_of(d.location).line for d in remarks] == [len(text.splitlines()) + 5]
    assert "d0 mod 16" in str(module.body.operations[0]) and "d0 mod 16" not in str(module.body.operations[1])


@pytest.mark.parametrize(
    "pipeline",
    [
        "hlo-print-indexing-maps{func=%s}",
        "hlo-print-fused-indexing-maps{func=%s}",
        "hlo-print-tilings{func=%s}",
    ],
)
def test_a_printing_pass_reports_only_the_instruction_named(pipeline: str) -> None:
    module = parse_module(HLO)
    lines = {location_of(op.location).line for op in nested_ops(the_fusion(module)) if location_of(op.location)}
    remarks = [d for d in run_pipeline(module, f"builtin.module({pipeline % FUSION})").items if d.severity == "remark"]
    assert remarks and all(location_of(d.location).line in lines for d in remarks), [str(d.location) for d in remarks]


def test_a_function_name_still_selects_the_function() -> None:
    module = parse_module(HLO)
    remarks = run_pipeline(module, "builtin.module(hlo-print-fused-indexing-maps{func=fused_computation.2})").items
    assert remarks and all(d.message.startswith("@fused_computation.2 ") for d in remarks)


def test_a_name_that_selects_nothing_is_an_error_with_the_closest_name() -> None:
    module = parse_module(HLO)
    with pytest.raises(ir.MLIRError, match="option func: no function or HLO instruction 'ynn_fusion.22' in the module; did you mean 'ynn_fusion.2'"):
        run_pipeline(module, "builtin.module(hlo-attach-indexing-maps{func=ynn_fusion.22})")
