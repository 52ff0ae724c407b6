// hlo-print-tilings on a program with ordered effects (`jax.debug.print(...,
// ordered=True)` or `io_callback`): @main takes and returns a token beside its tensors.
// A token has no index space: the tiling is of the tensor results, the token is not
// read, and the rest of the module is ranked as usual.
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{max=1})' 2>&1 | FileCheck %s

// CHECK-LABEL: remark: @ordered_print tiling #1: tile sizes [8, 32, 16]: 1 tiles
// CHECK-SAME:  exactness parameter(1) 1, parameter(2) 1
// CHECK-NOT:   warning
func.func @ordered_print(%tok: !stablehlo.token, %x: tensor<8x16xf32>, %w: tensor<16x32xf32>)
    -> (!stablehlo.token, tensor<8x32xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%tok, %1) {has_side_effect = true} : (!stablehlo.token, tensor<f32>) -> !stablehlo.token
  %3 = stablehlo.tanh %0 : tensor<8x32xf32>
  return %2, %3 : !stablehlo.token, tensor<8x32xf32>
}

// -----

// Only a token result: nothing to tile, said with a located warning.
// CHECK-LABEL: warning: @only_tokens: cannot tile: the computation has only token outputs
func.func @only_tokens(%tok: !stablehlo.token, %x: tensor<f32>) -> !stablehlo.token {
  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%tok, %x) {has_side_effect = true} : (!stablehlo.token, tensor<f32>) -> !stablehlo.token
  return %0 : !stablehlo.token
}
