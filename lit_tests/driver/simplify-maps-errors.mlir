// RUN: %hlo-opt %s -split-input-file -verify-diagnostics --hlo-simplify-indexing-maps='report=true'
// RUN: not %hlo-opt %s -split-input-file --hlo-simplify-indexing-maps 2>&1 | FileCheck %s

// CHECK: simplify-maps-errors.mlir:[[# @LINE + 3]]:8: error: attribute 'hlo_indexing.bad': indexing-map attribute: 'dims' must hold [lo, hi] pairs, got 1 values
func.func @malformed(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{attribute 'hlo_indexing.bad': indexing-map attribute: 'dims' must hold [lo, hi] pairs}}
  %0 = stablehlo.negate %x {hlo_indexing.bad = {map = affine_map<(d0) -> (d0)>, dims = array<i64: 0>}} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @remark(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark@below {{simplified 'hlo_indexing.m' to (d0) -> (d0), domain: d0 in [0, 3]}}
  %0 = stablehlo.negate %x {hlo_indexing.m = {map = affine_map<(d0) -> (d0 mod 4)>, dims = array<i64: 0, 3>}} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
