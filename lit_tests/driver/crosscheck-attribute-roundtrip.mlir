// REQUIRES: crosscheck
// Our map attributes (symbols, runtime variables, constraints) survive the C++ parser and
// printer of iree-opt unchanged, and read back into IndexingMaps equal to the originals
// (re-simplifying them changes nothing).
// RUN: %hlo-opt %s --hlo-attach-indexing-maps --hlo-attach-fused-indexing-maps -mlir-print-local-scope > %t.ours
// RUN: iree-opt %t.ours -mlir-print-local-scope > %t.theirs
// RUN: %hlo-opt %t.theirs --hlo-simplify-indexing-maps -mlir-print-local-scope > %t.back
// RUN: diff %t.ours %t.back
// RUN: FileCheck %s < %t.theirs

// CHECK-LABEL: func.func @pad_and_slice
// CHECK: stablehlo.pad
// CHECK-SAME: constraint_bounds = array<i64: 0, 0>, constraints = affine_map<(d0) -> (d0 mod 2)>
// CHECK: stablehlo.dynamic_slice
// CHECK-SAME: runtimes = array<i64: 0, 4>
func.func @pad_and_slice(%x: tensor<4xf32>, %pv: tensor<f32>, %i: tensor<i32>) -> tensor<3xf32> {
  %p = stablehlo.pad %x, %pv, low = [0], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
  %s = stablehlo.dynamic_slice %p, %i, sizes = [3] : (tensor<7xf32>, tensor<i32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// iree-opt registers StableHLO but not MHLO, so the reduction is written in StableHLO.
// CHECK-LABEL: func.func @reduce
// CHECK: stablehlo.reduce
// CHECK-SAME: ranges = array<i64: 0, 7>
func.func @reduce(%x: tensor<3x8xf32>, %init: tensor<f32>) -> tensor<3xf32> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
