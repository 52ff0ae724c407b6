"""Per-op and fused maps between physical indices (:mod:`hlo_indexing.analysis.physical`)
against a brute force: each logical pair ``(output index, input index)`` of the logical
map, with each index replaced by where :func:`hlo_indexing.layout.pack` puts that
element in its buffer (the offset, or that offset unravelled over the tiled shape).
The physical relation must be exactly these pairs: padding slots get none."""

from __future__ import annotations

import pytest

from hlo_indexing import (
    fusion_indexing,
    output_to_input_indexing,
    parse_module,
    physical_fusion_indexing,
    physical_input_to_output_indexing,
    physical_output_to_input_indexing,
)
from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.passes.pass_manager import run_pipeline
from helpers import layout_places


def _relation(maps) -> set:
    pairs: set = set()
    for m in maps:
        pairs |= m.relation()
    return pairs


def _expected(logical: set, source: dict, target: dict) -> set:
    return {(source[o], target[i]) for o, i in logical}


PROGRAM = """
func.func @main(%arg0: tensor<{in_shape}xbf16> {{hlo_indexing.layout = "{in_layout}"}}) -> (tensor<{out_shape}xbf16> {{hlo_indexing.layout = "{out_layout}"}}) {{
  %0 = {op} {{hlo_indexing.layout = "{out_layout}"}} : {signature}
  return %0 : tensor<{out_shape}xbf16>
}}
"""

CASES = [
    # (op text, in shape, in layout, out shape, out layout): XLA's permutations, TPU tiles
    ("stablehlo.exponential %arg0", (4, 5, 6), "{1,0,2}", (4, 5, 6), "{2,1,0}"),
    ("stablehlo.exponential %arg0", (4, 5, 6), "{2,1,0}", (4, 5, 6), "{1,0,2}"),
    ("stablehlo.transpose %arg0, dims = [1, 0]", (10, 20), "{1,0:T(8,128)(2,1)}", (20, 10), "{1,0}"),
    ("stablehlo.transpose %arg0, dims = [1, 0]", (9, 12), "{0,1:T(4,8)}", (12, 9), "{1,0:T(8,2)}"),
    ("stablehlo.slice %arg0 [1:9:2, 3:12]", (9, 12), "{1,0:T(4,4)}", (4, 9), "{0,1:T(2,1)}"),
    ("stablehlo.reshape %arg0", (6, 8), "{1,0:T(2,4)}", (48,), "{0:T(16)}"),
]


def _module(op: str, in_shape, in_layout, out_shape, out_layout):
    dims = lambda s: "x".join(map(str, s))  # noqa: E731
    signature = f"(tensor<{dims(in_shape)}xbf16>) -> tensor<{dims(out_shape)}xbf16>"
    if op.startswith("stablehlo.exponential"):
        signature = f"tensor<{dims(out_shape)}xbf16>"
    text = PROGRAM.format(
        in_shape=dims(in_shape), in_layout=in_layout, out_shape=dims(out_shape), out_layout=out_layout, op=op, signature=signature
    )
    module = parse_module(text)
    func = module.body.operations[0]
    return module, func, list(func.regions[0].blocks[0].operations)[0]


@pytest.mark.parametrize("form", ["coordinates", "offset"])
@pytest.mark.parametrize("case", CASES, ids=[c[0].split()[0] + c[2] + c[4] for c in CASES])
def test_per_op_and_fused_physical_maps_match_the_packed_buffers(case, form: str) -> None:
    op_text, in_shape, in_layout, out_shape, out_layout = case
    _keep, func, op = _module(op_text, in_shape, in_layout, out_shape, out_layout)
    source, target = layout_places(out_shape, out_layout, form), layout_places(in_shape, in_layout, form)
    logical = _relation(output_to_input_indexing(op).maps[0])
    expected = _expected(logical, source, target)
    assert _relation(physical_output_to_input_indexing(op, form=form).maps[0]) == expected
    assert _relation(physical_fusion_indexing(func, form=form).maps[0]) == expected
    backward = {(i, o) for o, i in expected}
    assert _relation(physical_input_to_output_indexing(op, form=form).maps[0]) == backward


def test_layouts_given_override_the_attributes() -> None:
    """XLA's PhysicalLayoutTestInputAndOutputPermutation: both sides {1,0,2} make an
    elementwise op the identity on physical indices; layouts given replace them."""
    _keep, func, op = _module("stablehlo.exponential %arg0", (10, 20, 30), "{1,0,2}", (10, 20, 30), "{1,0,2}")
    (physical,) = physical_output_to_input_indexing(op).maps[0]
    assert physical.is_identity and physical.dim_ranges[0].upper == 29
    (given,) = physical_output_to_input_indexing(op, layouts=["{1,0,2}"], result_layout="{2,1,0}").maps[0]
    assert str(given.affine_map) == "(d0, d1, d2) -> (d2, d0, d1)"  # XLA's InputPermutation
    (plain,) = physical_output_to_input_indexing(op, layouts=[None], result_layout="{2,1,0}").maps[0]
    assert plain.is_identity  # None in the list: row-major
    with pytest.raises(InvalidArgumentError, match="form"):
        physical_output_to_input_indexing(op, form="bytes")


def test_fused_maps_of_an_unlaid_function_are_the_logical_ones() -> None:
    module = parse_module(
        """
        func.func @f(%x: tensor<3x4xf32>) -> tensor<4x3xf32> {
          %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
          return %0 : tensor<4x3xf32>
        }"""
    )
    func = module.body.operations[0]
    assert _relation(physical_fusion_indexing(func).maps[0]) == _relation(fusion_indexing(func).maps[0])


def test_pass_option_prints_physical_maps() -> None:
    _keep, func, _op = _module("stablehlo.transpose %arg0, dims = [1, 0]", (10, 20), "{0,1}", (20, 10), "{1,0}")
    items = run_pipeline(_keep, "builtin.module(hlo-print-indexing-maps{physical=offset})").items
    assert [d.message.splitlines()[1] for d in items] == ["operand id = 0 (d0) -> (d0), domain: d0 in [0, 199]"]
    items = run_pipeline(_keep, "builtin.module(hlo-print-fused-indexing-maps{physical=coordinates})").items
    assert [d.message for d in items] == ["@main result 0 -> arg 0: (d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 9]"]


def test_a_tuple_value_has_unknown_physical_maps_and_the_others_are_computed() -> None:
    """XLA's CPU LAPACK custom calls return tuples, read by get-tuple-element: a tuple
    has no physical index, so the maps to or from it are unknown, saying which value it
    is; the op's other maps stay physical (they raised, and the passes failed, before)."""
    module = parse_module(
        """HloModule qr
ENTRY main {
  a = f32[4,3]{0,1} parameter(0)
  t = (f32[4,3]{0,1}, f32[3]{0}) custom-call(a), custom_call_target="lapack_sgeqrf_ffi"
  q = f32[4,3]{0,1} get-tuple-element(t), index=0
  ROOT r = f32[4,3]{1,0} add(q, a)
}
""",
        filename="qr.hlo",
    )
    ops = {op.name: op for op in module.body.operations[-1].regions[0].blocks[0].operations}
    element = physical_output_to_input_indexing(ops["stablehlo.get_tuple_element"], 0, form="offset")
    (unknown,) = element.maps[0]
    assert unknown.is_undefined and "operand #0 is a tuple<tensor<4x3xf32>, tensor<3xf32>>" in unknown.reason
    call = physical_input_to_output_indexing(ops["stablehlo.custom_call"], 0, form="offset")
    assert all(m.is_undefined and "result #0 is a tuple" in m.reason for maps in call.maps for m in maps)
    total = physical_output_to_input_indexing(ops["stablehlo.add"], 0, form="offset")
    assert [len(maps) for maps in total.maps] == [1, 1] and not total.is_unknown
    # from r's offsets ({1,0}) to a's ({0,1}): (i, j) at 3i + j reads a at i + 4j
    (to_a,) = total.maps[1]
    assert to_a.relation() == {((3 * i + j,), (i + 4 * j,)) for i in range(4) for j in range(3)}
    items = run_pipeline(module, "builtin.module(hlo-print-indexing-maps{physical=offset})").items
    assert not [d for d in items if d.severity == "error"]
