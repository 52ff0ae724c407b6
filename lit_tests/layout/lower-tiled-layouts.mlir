// RUN: %hlo-opt %s -split-input-file -mlir-print-local-scope --hlo-lower-tiled-layouts | FileCheck %s

// Figure 1 on a function argument: (2, 3) -> 17, physical shape 2x3x2x2, 24 slots.
// CHECK-LABEL: func.func @argument
// CHECK-SAME: hlo_indexing.layout = "{1,0:T(2,2)}"
// CHECK-SAME: hlo_indexing.linear_offset_map = {dims = array<i64: 0, 2, 0, 4>, map = affine_map<(d0, d1) -> ((d0 floordiv 2) * 12 + (d0 mod 2) * 2 + (d1 floordiv 2) * 4 + d1 mod 2)>
// CHECK-SAME: hlo_indexing.logical_index_map = {constraint_bounds = array<i64: 0, 2, 0, 4>
// CHECK-SAME: dims = array<i64: 0, 23>
// CHECK-SAME: hlo_indexing.padded_size = 24 : i64
// CHECK-SAME: hlo_indexing.physical_shape = array<i64: 2, 3, 2, 2>
// CHECK-SAME: hlo_indexing.tiled_coordinates_map = {dims = array<i64: 0, 2, 0, 4>, map = affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 2, d0 mod 2, d1 mod 2)>
func.func @argument(%a: tensor<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}) -> tensor<3x5xf32> {
  return %a : tensor<3x5xf32>
}

// -----

// An untiled column-major layout on a result: the plain linearisation, no mod/floordiv.
// CHECK-LABEL: func.func @result
// CHECK-SAME: -> (tensor<3x5xf32> {hlo_indexing.layout = "{0,1}"
// CHECK-SAME: hlo_indexing.linear_offset_map = {dims = array<i64: 0, 2, 0, 4>, map = affine_map<(d0, d1) -> (d0 + d1 * 3)>
// CHECK-SAME: hlo_indexing.physical_shape = array<i64: 5, 3>
// CHECK-SAME: hlo_indexing.tiled_coordinates_map = {dims = array<i64: 0, 2, 0, 4>, map = affine_map<(d0, d1) -> (d1, d0)>
func.func @result(%a: tensor<3x5xf32>) -> (tensor<3x5xf32> {hlo_indexing.layout = "{0,1}"}) {
  return %a : tensor<3x5xf32>
}

// -----

// A whole shape on an op: figure 2's (2,4)(2,1) packing.
// CHECK-LABEL: func.func @on_op
// CHECK: stablehlo.constant
// CHECK-SAME: hlo_indexing.linear_offset_map = {dims = array<i64: 0, 3, 0, 7>, map = affine_map<(d0, d1) -> (d1 * 2 + (d0 floordiv 2) * 16 + d0 mod 2)>
// CHECK-SAME: hlo_indexing.physical_shape = array<i64: 2, 2, 1, 4, 2, 1>
func.func @on_op() -> tensor<4x8xf32> {
  %0 = stablehlo.constant {hlo_indexing.layout = "f32[4,8]{1,0:T(2,4)(2,1)}"} dense<0.0> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// XLA's entry-computation layouts apply to @main (tuple parameters are skipped).
// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg0: tensor<3x5xf32> {hlo_indexing.layout = "{0,1:T(2,2)}"
// CHECK-SAME: hlo_indexing.physical_shape = array<i64: 3, 2, 2, 2>
// CHECK-SAME: %arg1: tensor<300xf32> {hlo_indexing.layout = "{0:T(128)}"
// CHECK-SAME: hlo_indexing.padded_size = 384 : i64
// CHECK-SAME: -> (tensor<4x8xbf16> {hlo_indexing.layout = "{1,0:T(2,4)(2,1)}"
module attributes {
  mhlo.xla_entry_computation_parameter_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>],
  mhlo.xla_entry_computation_parameter_tiles = [[dense<[2, 2]> : tensor<2xindex>], [dense<128> : tensor<1xindex>]],
  mhlo.xla_entry_computation_result_layout = [dense<[1, 0]> : tensor<2xindex>],
  mhlo.xla_entry_computation_result_tiles = [[dense<[2, 4]> : tensor<2xindex>, dense<[2, 1]> : tensor<2xindex>]]
} {
  func.func @main(%a: tensor<3x5xf32>, %b: tensor<300xf32>) -> tensor<4x8xbf16> {
    %0 = stablehlo.constant dense<0.0> : tensor<4x8xbf16>
    return %0 : tensor<4x8xbf16>
  }
}

// -----

// An op with several results (a tuple-shaped HLO instruction, as the HLO import writes
// its layouts): one layout per result, and each lowered attribute an array with one
// entry per result, in order.
// CHECK-LABEL: func.func @per_result
// CHECK: stablehlo.sort
// CHECK: hlo_indexing.layout = ["{1,0}", "{0,1:T(2,2)}"]
// CHECK-SAME: hlo_indexing.linear_offset_map = [{dims = array<i64: 0, 2, 0, 4>, map = affine_map<(d0, d1) -> (d0 * 5 + d1)>
// CHECK-SAME: {dims = array<i64: 0, 2, 0, 4>, map = affine_map<(d0, d1) -> ((d0 floordiv 2) * 4 + d0 mod 2 + (d1 floordiv 2) * 8 + (d1 mod 2) * 2)>
// CHECK-SAME: hlo_indexing.padded_size = [15, 24]
// CHECK-SAME: hlo_indexing.physical_shape = [array<i64: 3, 5>, array<i64: 3, 2, 2, 2>]
func.func @per_result(%a: tensor<3x5xf32>, %b: tensor<3x5xi32>) -> tensor<3x5xi32> {
  %0:2 = "stablehlo.sort"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<i32>, %w: tensor<i32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, hlo_indexing.layout = ["{1,0}", "{0,1:T(2,2)}"]} : (tensor<3x5xf32>, tensor<3x5xi32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
  return %0#1 : tensor<3x5xi32>
}
