// hlo-attach-fused-indexing-maps attaches result -> argument maps to function arguments.
// RUN: %hlo-opt %s --hlo-attach-fused-indexing-maps --mlir-print-local-scope | FileCheck %s

// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME:  %arg0: tensor<20xf32> {hlo_indexing.fused_maps = {{\[\[}}{dims = array<i64: 0, 9, 0, 19>, map = affine_map<(d0, d1) -> (d1)>
// CHECK-SAME:  %arg1: tensor<10x20xf32> {hlo_indexing.fused_maps = {{\[\[}}{dims = array<i64: 0, 9, 0, 19>, map = affine_map<(d0, d1) -> (d0, d1)>
func.func @broadcast_add(%a: tensor<20xf32>, %b: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<20xf32>) -> tensor<10x20xf32>
  %1 = stablehlo.add %0, %b : tensor<10x20xf32>
  return %1 : tensor<10x20xf32>
}
