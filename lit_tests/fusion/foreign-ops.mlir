// Ops of other dialects are not HLO ops, even when their names match one: their
// indexing is unknown, never an HLO rule applied to a foreign op.
// RUN: %hlo-opt %s --allow-unregistered-dialect --split-input-file --hlo-print-fused-indexing-maps 2>&1 | FileCheck %s

// CHECK-LABEL: @foreign_transpose result 0 -> arg 0: unknown indexing
// CHECK-NOT:   @foreign_transpose result 0 -> arg 0: (
func.func @foreign_transpose(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %t = "foo.transpose"(%a) {permutation = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

// An HLO op beside it is still analysed.
// CHECK-LABEL: @foreign_then_hlo result 0 -> arg 0: unknown indexing
// CHECK:       @foreign_then_hlo result 0 -> arg 1: (d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]
func.func @foreign_then_hlo(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %c = "foo.add"(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %t = stablehlo.transpose %b, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %s = stablehlo.add %c, %t : tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}
