// RUN: %hlo-opt %s -split-input-file -mlir-print-local-scope | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %hlo-opt %s -split-input-file -mlir-print-local-scope --hlo-simplify-indexing-maps | FileCheck %s

// Without passes the attributes round-trip unchanged; the pass simplifies each map
// (d0 in [0, 9]: `d0 mod 16` is d0, `(d0 + 2) floordiv 16` is 0).

// ROUNDTRIP-LABEL: func.func @on_op
// ROUNDTRIP: hlo_indexing.maps = [{dims = array<i64: 0, 9>, map = affine_map<(d0) -> (d0 mod 16 + (d0 + 2) floordiv 16)>}]
// CHECK-LABEL: func.func @on_op
// CHECK: hlo_indexing.maps = [{dims = array<i64: 0, 9>, map = affine_map<(d0) -> (d0)>, text = "(d0) -> (d0), domain: d0 in [0, 9]"}]
// CHECK-SAME: other = {dims = array<i64: 0, 9>, map = affine_map<(d0) -> (d0 mod 16)>}
func.func @on_op(%x: tensor<10xf32>) -> tensor<10xf32> {
  %0 = stablehlo.negate %x {hlo_indexing.maps = [{map = affine_map<(d0) -> (d0 mod 16 + (d0 + 2) floordiv 16)>, dims = array<i64: 0, 9>}],
                            other = {map = affine_map<(d0) -> (d0 mod 16)>, dims = array<i64: 0, 9>}} : tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// A map on a function argument, and one that is already simple (kept as written).
// ROUNDTRIP-LABEL: func.func @on_argument
// CHECK-LABEL: func.func @on_argument
// CHECK-SAME: hlo_indexing.in = {dims = array<i64: 0, 3, 0, 7>, map = affine_map<(d0, d1) -> (d1, d0)>, text = "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]"}
// CHECK-SAME: hlo_indexing.kept = {dims = array<i64: 0, 3>, map = affine_map<(d0) -> (d0)>}
func.func @on_argument(%x: tensor<4x8xf32> {hlo_indexing.in = {map = affine_map<(d0, d1) -> ((d0 * 8 + d1) mod 8, (d0 * 8 + d1) floordiv 8)>, dims = array<i64: 0, 3, 0, 7>}},
                       %y: tensor<4xf32> {hlo_indexing.kept = {map = affine_map<(d0) -> (d0)>, dims = array<i64: 0, 3>}}) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
