// RUN: not %hlo-opt %s -split-input-file -verify-diagnostics --hlo-simplify-indexing-maps='report=true' 2>&1 | FileCheck %s
// RUN: not %hlo-opt %s -split-input-file -verify-diagnostics=only-expected --hlo-simplify-indexing-maps='report=true' 2>&1 | FileCheck %s --check-prefix=ONLY

// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 3]]:8: error: unexpected remark: simplified 'hlo_indexing.a' to (d0) -> (d0)
// ONLY-NOT: unexpected
func.func @unexpected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x {hlo_indexing.a = {map = affine_map<(d0) -> (d0 mod 4)>, dims = array<i64: 0, 3>}} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Only-expected mode ignores the unexpected remark above but not a missing diagnostic.
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 3]]:6: error: expected warning "never emitted" was not produced
// ONLY: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: expected warning "never emitted" was not produced
func.func @unmatched() {
  // expected-warning {{never emitted}}
  return
}
