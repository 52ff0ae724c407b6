"""HLO text import through XLA's parser and translator: layouts, names, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue import hlo_import
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.hlo_text import prepare_for_translation, scan_hlo_text
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import InvalidArgumentError, InvalidInputError, ParseError, UnsupportedError
from helpers import EXAMPLES

FUSION = """\
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  p0 = f32[8,16]{1,0} parameter(0)
  e = f32[8,16]{1,0:T(2,*)} exponential(p0)
  c = f32[] constant(0)
  ROOT r = f32[8]{0} reduce(e, c), dimensions={1}, to_apply=add
}

ENTRY e {
  p0 = f32[8,16]{0,1:T(8,128)(2,1)} parameter(0)
  t = f32[16,8]{1,0} transpose(p0), dimensions={1,0}
  b = f32[8,16]{1,0} bitcast(t)
  ROOT %fusion.3 = f32[8]{0} fusion(b), kind=kLoop, calls=fused
}
"""


def _ops(module):
    out = []

    def visit(op):
        out.append(op)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    visit(inner.operation)

    visit(module.operation)
    return out


def _named(module, name):
    return [op for op in _ops(module) if str(op.location).startswith(f'loc("{name}"(')]


def test_fusion_becomes_mhlo_fusion_with_names_and_text_locations():
    module = parse_module(FUSION, filename="f.hlo")
    (fusion,) = _named(module, "fusion.3")
    assert fusion.name == "mhlo.fusion"
    assert str(fusion.location) == 'loc("fusion.3"("f.hlo":20:3))'
    # The fused computation is both the fusion's region and a private function.
    assert [op.name for op in _named(module, "e") if op.name != "func.func"] == ["stablehlo.exponential"] * 2


def test_layouts_with_tiles_survive_on_ops_and_arguments():
    module = parse_module(FUSION, filename="f.hlo")
    layouts = {str(op.location).split('"')[1]: str(op.attributes["hlo_indexing.layout"])
               for op in _ops(module) if "hlo_indexing.layout" in op.attributes}
    assert layouts["e"] == '"{1,0:T(2,*)}"'
    assert layouts["b"] == '"{1,0}"'
    main = [op for op in module.body.operations if op.operation.attributes["sym_name"].value == "main"][0]
    assert str(main.operation.attributes["arg_attrs"]) == '[{hlo_indexing.layout = "{0,1:T(8,128)(2,1)}"}]'
    assert str(main.operation.attributes["res_attrs"]) == '[{hlo_indexing.layout = "{0}"}]'


def test_tuple_results_get_one_layout_per_result():
    text = """HloModule m
ENTRY e {
  p0 = (f32[4,2]{0,1}, s32[3]) parameter(0)
  g = f32[4,2]{0,1} get-tuple-element(p0), index=0
  ROOT t = (f32[4,2]{0,1}, f32[4,2]) tuple(g, g)
}
"""
    module = parse_module(text, filename="t.hlo")
    main = module.body.operations[0].operation
    assert str(main.attributes["arg_attrs"]) == '[{hlo_indexing.layout = "{0,1}"}, {}]'
    assert str(main.attributes["res_attrs"]) == '[{hlo_indexing.layout = "{0,1}"}, {}]'


def test_an_element_of_a_custom_calls_tuple_is_located_and_named_at_its_get_tuple_element():
    """XLA's translator names the get_tuple_element of a custom call's tuple after the
    call; the importer puts it back at its own instruction, with its layout, whether its
    operand is written typed or not."""
    text = """HloModule m
ENTRY e {
  a = f32[4,3]{0,1} parameter(0)
  t = (f32[4,3]{0,1}, f32[3]{0}) custom-call(a), custom_call_target="lapack_sgeqrf_ffi"
  q = f32[4,3]{1,0} get-tuple-element(t), index=0
  %tau = f32[3]{0} get-tuple-element((f32[4,3]{0,1}, f32[3]{0}) %t), index=1
  ROOT r = (f32[4,3]{1,0}, f32[3]{0}) tuple(q, tau)
}
"""
    module = parse_module(text, filename="g.hlo")
    elements = [op for op in _ops(module) if op.name == "stablehlo.get_tuple_element"]
    assert [str(op.location) for op in elements] == ['loc("q"("g.hlo":5:3))', 'loc("tau"("g.hlo":6:3))']
    assert str(elements[0].attributes["hlo_indexing.layout"]) == '"{1,0}"'
    (call,) = [op for op in _ops(module) if op.name == "stablehlo.custom_call"]
    assert str(call.location) == 'loc("t"("g.hlo":4:3))'


def test_duplicate_names_map_back_to_the_text():
    text = """HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  x = f32[5]{0} parameter(0)
  ROOT s = f32[5]{0} negate(x)
}
"""
    module = parse_module(text, filename="d.hlo")
    negate = [op for op in _ops(module) if op.name == "stablehlo.negate"][0]
    assert str(negate.location) == 'loc("s"("d.hlo":9:3))'


def test_scanner_ignores_braces_that_are_not_layouts():
    text = ("HloModule m, entry_computation_layout={(f32[4,6]{1,0})->f32[2,6]{1,0}}\n"
            "ENTRY e {\n  p = f32[4,6]{1,0} parameter(0) // not a layout: f32[2]{0}\n"
            "  ROOT s = f32[2,6]{0,1:T(2,2)} slice(p), slice={[0:2], [0:6]}\n}\n")
    (entry,) = scan_hlo_text(text).computations
    assert [(i.name, i.layouts) for i in entry.instructions] == [("p", ("{1,0}",)), ("s", ("{0,1:T(2,2)}",))]
    stripped, changed = prepare_for_translation(text)
    assert changed and "{0,1       }" in stripped and len(stripped) == len(text)


def test_xla_parse_error_has_xla_message_and_position():
    text = "HloModule m\nENTRY e {\n  p0 = f32[8] parameter(0)\n  ROOT x = f32[8] frobnicate(p0)\n}\n"
    with pytest.raises(ParseError) as info:
        parse_module(text, filename="bad.hlo")
    assert str(info.value.location) == "bad.hlo:4:19"
    assert "frobnicate" in info.value.message


def test_detection_by_suffix_keyword_and_content(tmp_path: Path):
    body = "ENTRY e {\n  ROOT p = f32[3]{0} parameter(0)\n}\n"
    path = tmp_path / "x.hlo"
    path.write_text(body)  # no HloModule header: detected by the suffix
    assert "func.func @main" in str(parse_module(path))
    assert "func.func @main" in str(parse_module(body, input_format="hlo"))
    assert "func.func @main" in str(parse_module("  // comment\nHloModule m\n" + body))
    with pytest.raises(ParseError):
        parse_module("HloModule m\n" + body, input_format="mlir")


def test_untranslatable_instruction_is_unsupported_at_its_line(monkeypatch):
    # The importer translates a scaled dot as a custom call; without that step the
    # translator writes 'mhlo.unknown' for it, which must be reported at its line.
    monkeypatch.setattr(hlo_import, "scaled_dots_as_custom_calls", lambda printed: printed)
    text = """HloModule m
ENTRY e {
  a = f8e4m3fn[2,32] parameter(0)
  b = f8e4m3fn[32,2] parameter(1)
  sa = f8e8m0fnu[2,1] parameter(2)
  sb = f8e8m0fnu[1,2] parameter(3)
  ROOT d = f32[2,2] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    with pytest.raises(UnsupportedError) as info:
        hlo_import.import_hlo_text(text, "s.hlo", make_context(), isolate=False)
    assert str(info.value.location) == "s.hlo:7:3" and "scaled-dot" in info.value.message
    monkeypatch.undo()
    assert "stablehlo.custom_call @hlo_indexing.scaled_dot" in str(parse_module(text, filename="s.hlo"))


def test_missing_entry_point_names_it(monkeypatch):
    import jaxlib._hlo

    hlo_import._entry_points.cache_clear()
    monkeypatch.delattr(jaxlib._hlo, "hlo_module_from_text")
    try:
        with pytest.raises(UnsupportedError, match=r"jaxlib\._hlo\.hlo_module_from_text.*jaxlib \d"):
            parse_module("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    finally:
        monkeypatch.undo()
        hlo_import._entry_points.cache_clear()


def test_softmax_example_imports():
    example = EXAMPLES / "softmax_cpu.hlo"
    if not example.exists():
        pytest.skip("examples/softmax_cpu.hlo not generated")
    module = parse_module(example)
    assert re.search(r'"mhlo\.fusion"', str(module))


def test_ops_with_metadata_keep_their_instruction_name_and_layout():
    text = """HloModule m
ENTRY e {
  p0 = f32[4]{0} parameter(0), metadata={op_name="x{y}" source_file="a.py" source_line=3}
  ROOT n = f32[4]{0:T(4)} negate(p0), metadata={op_name="jit(f)/neg" source_file="a.py" source_line=4}
}
"""
    module = parse_module(text, filename="m.hlo")
    negate = [op for op in _ops(module) if op.name == "stablehlo.negate"][0]
    assert str(negate.location) == 'loc("n"("m.hlo":4:3))'
    assert str(negate.attributes["hlo_indexing.layout"]) == '"{0:T(4)}"'


HEADERLESS = """\
%fused_computation (p0: f32[4,6]) -> f32[6,4] {
  %p0 = f32[4,6]{1,0} parameter(0)
  ROOT %t = f32[6,4]{1,0} transpose(%p0), dimensions={1,0}
}

ENTRY main {
  %p0 = f32[4,6]{1,0} parameter(0)
  ROOT %fusion = f32[6,4]{1,0} fusion(%p0), kind=kLoop, calls=%fused_computation
}
"""


def test_headerless_hlo_is_recognised_by_content(tmp_path: Path):
    """XLA's tests and print_indexing_test.hlo leave out the HloModule header; the
    fusion op then answers per op with its fused maps, as XLA does."""
    from hlo_indexing import analyze, output_to_input_indexing

    path = tmp_path / "dump.txt"
    path.write_text(HEADERLESS)
    for source in (HEADERLESS, path):
        module = parse_module(source)
        (fusion,) = [op for op in _ops(module) if op.name == "mhlo.fusion"]
        (maps,) = output_to_input_indexing(fusion).maps
        assert {str(m) for m in maps} == {"(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"}
    assert "mhlo.fusion" in str(analyze(HEADERLESS))


@pytest.mark.parametrize(
    "text",
    [
        "module {\n  func.func @f() {\n    return\n  }\n}\n",
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n",
        "#map = affine_map<(d0) -> (d0)>\nmodule {\n}\n",
    ],
)
def test_mlir_text_is_not_taken_for_headerless_hlo(text):
    assert "func.func" in str(parse_module(text)) or "module" in str(parse_module(text))
    from hlo_indexing.dialect_glue.hlo_text import looks_like_hlo_text

    assert not looks_like_hlo_text(text)


def test_headerless_parse_error_keeps_its_column():
    with pytest.raises(ParseError) as info:
        parse_module("ENTRY main {\n  ROOT p = f32[3]{0} paramter(0)\n}\n", input_format="hlo")
    assert (info.value.location.line, info.value.location.column) == (2, 22)
    with pytest.raises(ParseError) as info:
        parse_module("ENTRY main ( {\n}\n", input_format="hlo")
    assert info.value.location.line == 1 and info.value.location.column <= len("ENTRY main ( {")


# XLA's print_indexing test module: the ENTRY passes s32[1024] to the fused
# computation's s32[] parameter (XLA's tool loads it unverified).
ILL_TYPED_CALL = """\
HloModule m, entry_computation_layout={(s32[1024]{0}, s32[1024]{0}, s32[1024]{0})->(s32[1024]{0}, s32[1024]{0})}

%fused_computation {
  %a = s32[1024] parameter(0)
  %b = s32[] parameter(1)
  %c = s32[1024] parameter(2)
  %d = s32[1024] broadcast(%b)
  %mul = s32[1024] multiply(%a, %d)
  %add = s32[1024] add(%mul, %c)
  ROOT %result = (s32[1024], s32[1024]) tuple(%mul, %add)
}

ENTRY main {
  %a = s32[1024] parameter(0)
  %b = s32[1024] parameter(1)
  %c = s32[1024] parameter(2)
  ROOT %fusion = (s32[1024], s32[1024]) fusion(%a, %b, %c), kind=kLoop, calls=%fused_computation
}
"""


def test_an_ill_typed_fusion_call_is_rejected_at_the_fusion():
    with pytest.raises(InvalidInputError, match=r"fusion computation takes .* but the fusion passes") as caught:
        hlo_import.import_hlo_text(ILL_TYPED_CALL, "m.hlo", make_context())
    assert (caught.value.location.line, caught.value.location.column) == (17, 3)


def test_a_named_computation_is_imported_by_itself_as_the_entry():
    # Its own parameters (the ENTRY's ill-typed call is not imported), its ops still at
    # their lines in the file.
    module = hlo_import.import_hlo_text(ILL_TYPED_CALL, "m.hlo", make_context(), entry="fused_computation")
    (main,) = [op.operation for op in module.body.operations if op.operation.name == "func.func"]
    assert [str(a.type) for a in main.regions[0].blocks[0].arguments] == ["tensor<1024xi32>", "tensor<i32>", "tensor<1024xi32>"]
    assert str(main.location) == 'loc("fused_computation"("m.hlo":3:2))'  # its name, after the %
    (multiply,) = _named(module, "mul")
    assert str(multiply.location) == 'loc("mul"("m.hlo":8:3))'
    assert not _named(module, "fusion")


def test_the_entry_keeps_the_computations_it_calls_and_an_unknown_one_is_named():
    module = hlo_import.import_hlo_text(FUSION, "f.hlo", make_context(), entry="fused")
    (main,) = [op for op in module.body.operations if "sym_visibility" not in op.attributes]
    assert [op.name for op in main.regions[0].blocks[0].operations][-2:] == ["stablehlo.reduce", "func.return"]
    with pytest.raises(InvalidArgumentError, match="no computation named 'fused_typo' in f.hlo .*add, fused, e"):
        hlo_import.import_hlo_text(FUSION, "f.hlo", make_context(), entry="fused_typo")
