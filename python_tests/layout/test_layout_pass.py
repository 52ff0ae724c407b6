"""The pass hlo-lower-tiled-layouts, in process: attached maps read back through the
attribute form and agree with the placement of the tiling module on random layouts;
entry layouts reach @main; bad layouts are located errors."""

from __future__ import annotations

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.layout.tiling import linear_index, physical_shape
from hlo_indexing.layout.types import Layout
from hlo_indexing.maps.attributes import indexing_map_from_attribute
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.lower_tiled_layouts import LowerTiledLayouts
from hlo_indexing.passes.registry import lookup


def run_pass(text: str, **options) -> tuple[ir.Module, Diagnostics]:
    module = parse_module(text)
    diagnostics = Diagnostics()
    LowerTiledLayouts(**options).run(module.operation, diagnostics)
    return module, diagnostics


def argument_attributes(module: ir.Module, func_index: int = 0, kind: str = "arg_attrs") -> list[dict]:
    func = module.body.operations[func_index]
    return [{a.name: a.attr for a in item} for item in func.attributes[kind]]


def test_registered():
    assert lookup("hlo-lower-tiled-layouts") is LowerTiledLayouts


def test_random_layouts_on_arguments():
    rng = np.random.default_rng(11)
    for _ in range(40):
        rank = int(rng.integers(1, 4))
        dims = [int(v) for v in rng.integers(1, 7, size=rank)]
        m2m = [int(v) for v in rng.permutation(rank)]
        tile = [int(v) for v in rng.integers(1, 5, size=int(rng.integers(1, rank + 1)))]
        layout = f"{{{','.join(map(str, m2m))}:T({','.join(map(str, tile))})}}"
        tensor = f"tensor<{'x'.join(map(str, dims))}xf32>"
        module, diagnostics = run_pass(
            f'func.func @f(%a: {tensor} {{hlo_indexing.layout = "{layout}"}}) {{ return }}'
        )
        assert not diagnostics.items
        attrs = argument_attributes(module)[0]
        parsed = Layout.parse(layout)
        assert list(attrs["hlo_indexing.physical_shape"]) == list(physical_shape(dims, parsed))
        forward = indexing_map_from_attribute(attrs["hlo_indexing.linear_offset_map"])
        inverse = indexing_map_from_attribute(attrs["hlo_indexing.logical_index_map"])
        for index in np.ndindex(*dims):
            offset = linear_index(dims, index, parsed)
            assert forward.evaluate(index) == (offset,)
            assert inverse.evaluate((offset,)) == index and inverse.contains_point((offset,))
        assert len(inverse.enumerate()[0]) == int(np.prod(dims))


def test_the_results_of_an_op_of_a_compiled_program_get_their_own_maps():
    """XLA's CPU compiler emits tuple-shaped instructions (here a max-pool gradient's
    reduce-window over five arrays, a scan's while): the HLO import writes one layout
    per result, and each result gets the maps of its own layout, in order."""
    text = """HloModule m

region (a: f32[], b: s32[], c: f32[], d: s32[]) -> (f32[], s32[]) {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  gt = pred[] compare(a, c), direction=GT
  x = f32[] select(gt, a, c)
  y = s32[] select(gt, b, d)
  ROOT t = (f32[], s32[]) tuple(x, y)
}

ENTRY main {
  p = f32[4,6]{0,1} parameter(0)
  i = s32[4,6]{1,0} parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT w = (f32[2,3]{0,1}, s32[2,3]{1,0}) reduce-window(p, i, z, zi), window={size=2x2 stride=2x2}, to_apply=region
}
"""
    module = parse_module(text, filename="pool.hlo")
    diagnostics = Diagnostics()
    LowerTiledLayouts().run(module.operation, diagnostics)
    assert not [d for d in diagnostics.items if d.severity == "error"], diagnostics.items
    (window,) = [op for op in module.body.operations[-1].regions[0].blocks[0].operations if op.name == "stablehlo.reduce_window"]
    layouts = [ir.StringAttr(a).value for a in window.attributes["hlo_indexing.layout"]]
    assert layouts == ["{0,1}", "{1,0}"]
    maps = list(window.attributes["hlo_indexing.linear_offset_map"])
    shapes = list(window.attributes["hlo_indexing.physical_shape"])
    assert len(maps) == len(shapes) == 2
    for layout, attribute, shape in zip(layouts, maps, shapes):
        forward = indexing_map_from_attribute(attribute)
        parsed = Layout.parse(layout)
        assert list(ir.DenseI64ArrayAttr(shape)) == list(physical_shape([2, 3], parsed))
        for index in np.ndindex(2, 3):
            assert forward.evaluate(index) == (linear_index([2, 3], index, parsed),)


def test_entry_layouts_reach_main_only():
    module, diagnostics = run_pass(
        """
        module attributes {
          mhlo.xla_entry_computation_parameter_layouts = [dense<[0, 1]> : tensor<2xindex>],
          mhlo.xla_entry_computation_parameter_tiles = [[dense<[2, 2]> : tensor<2xindex>]],
          mhlo.xla_entry_computation_result_layout = dense<[1, 0]> : tensor<2xindex>,
          mhlo.xla_entry_computation_result_tiles = [dense<[8, 128]> : tensor<2xindex>]
        } {
          func.func @other(%a: tensor<3x5xf32>) { return }
          func.func @main(%a: tensor<3x5xf32>) -> tensor<3x5xf32> { return %a : tensor<3x5xf32> }
        }
        """
    )
    assert not diagnostics.items
    assert "arg_attrs" not in module.body.operations[0].attributes
    arg = argument_attributes(module, 1)[0]
    assert ir.StringAttr(arg["hlo_indexing.layout"]).value == "{0,1:T(2,2)}"
    result = argument_attributes(module, 1, "res_attrs")[0]
    assert ir.StringAttr(result["hlo_indexing.layout"]).value == "{1,0:T(8,128)}"
    assert list(result["hlo_indexing.physical_shape"]) == [1, 1, 8, 128]


def test_errors_are_located():
    module, diagnostics = run_pass(
        'func.func @f(%a: tensor<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,0)}"}) { return }'
    )
    (error,) = diagnostics.items
    assert error.severity == "error"
    assert "argument #0: a tile size" in error.message and "column 10" in error.message
    assert "arg_attrs" in module.body.operations[0].attributes


def test_rewrite_memrefs():
    module, diagnostics = run_pass(
        'func.func @f(%a: memref<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}) { return }',
        rewrite_memrefs=True,
    )
    assert not diagnostics.items
    func = module.body.operations[0]
    argument_type = func.regions[0].blocks[0].arguments[0].type
    expected = "memref<3x5xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 2, d0 mod 2, d1 mod 2)>>"
    assert str(argument_type) == expected
    assert str(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs[0]) == expected
