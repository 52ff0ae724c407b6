// Why the maps of an op inside a loop or branch body over-approximate (its note) is
// said by the loop's and the branch's maps too, with the op and where it is.
// RUN: %hlo-opt %s --split-input-file --hlo-print-fused-indexing-maps 2>&1 | FileCheck %s

// The new state of an rng_bit_generator is taken to read every word of the state: the
// loop's state result says so, and so does its x result, which the bits reach.
// CHECK-LABEL: remark: @rng_in_a_loop result 1: over-approximated
// CHECK-SAME:  stablehlo.rng_bit_generator at {{[^ ]+}}: the new state is taken to read every word of the state
func.func @rng_in_a_loop(%key: tensor<4xui32>, %x: tensor<3xf32>) -> (tensor<4xui32>, tensor<3xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %w:3 = stablehlo.while(%i = %c0, %k = %key, %v = %x) : tensor<i32>, tensor<4xui32>, tensor<3xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %k2, %bits = stablehlo.rng_bit_generator %k, algorithm = DEFAULT : (tensor<4xui32>) -> (tensor<4xui32>, tensor<3xui32>)
    %f = stablehlo.convert %bits : (tensor<3xui32>) -> tensor<3xf32>
    %v2 = stablehlo.add %v, %f : tensor<3xf32>
    stablehlo.return %next, %k2, %v2 : tensor<i32>, tensor<4xui32>, tensor<3xf32>
  }
  return %w#1, %w#2 : tensor<4xui32>, tensor<3xf32>
}

// -----

// A host callback in a branch: the case's result says so.
// CHECK-LABEL: remark: @callback_in_a_branch result 0 -> arg 1: (d0)[s0] -> (s0), domain: d0 in [0, 2], s0 in [0, 2]
// CHECK:       remark: @callback_in_a_branch result 0: over-approximated (stablehlo.case result 0
// CHECK-SAME:  stablehlo.custom_call at {{[^ ]+}}: xla_ffi_python_cpu_callback: a host callback
func.func @callback_in_a_branch(%p: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.case"(%p) ({
    %c = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) {has_side_effect = true} : (tensor<3xf32>) -> tensor<3xf32>
    stablehlo.return %c : tensor<3xf32>
  }, {
    stablehlo.return %x : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
