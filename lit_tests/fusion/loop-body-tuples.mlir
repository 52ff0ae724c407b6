// Tuple values inside loop and branch bodies are followed element by element, as at
// the top level (issue #31): XLA's TopK and LAPACK custom calls of compiled HLO return
// a tuple that get_tuple_element unpacks.
// RUN: %hlo-opt %s --split-input-file --hlo-print-fused-indexing-maps 2>&1 | FileCheck %s

// A counted loop (a scan over the rows of %x) takes the TopK of row t: row d0 of the
// stacked result reads row d0 of %x, all of it, and nothing is over-approximated.
// CHECK-LABEL: @top_k_scan result 0 -> arg 0: (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 1], s0 in [0, 4]
// CHECK-NOT:   over-approximated
func.func private @greater(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @top_k_scan(%x: tensor<4x5xf32>) -> tensor<4x2xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %w:3 = stablehlo.while(%i = %c0, %xs = %x, %ys = %init) : tensor<i32>, tensor<4x5xf32>, tensor<4x2xf32>
  cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %xs, %i, %z, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %tk = stablehlo.custom_call @TopK(%row) {called_computations = [@greater]} : (tensor<1x5xf32>) -> tuple<tensor<1x2xf32>, tensor<1x2xi32>>
    %values = stablehlo.get_tuple_element %tk[0] : (tuple<tensor<1x2xf32>, tensor<1x2xi32>>) -> tensor<1x2xf32>
    %ys2 = stablehlo.dynamic_update_slice %ys, %values, %i, %z : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x2xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %xs, %ys2 : tensor<i32>, tensor<4x5xf32>, tensor<4x2xf32>
  }
  return %w#2 : tensor<4x2xf32>
}

// -----

// A branch factorises its captured %a with LAPACK (a tuple of the factor and the info
// codes): the result reads the predicate, batch d0's matrix of %a whole, and %b.
// CHECK-LABEL: @branch_factorises result 0 -> arg 0: (d0, d1, d2) -> (), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2]
// CHECK:       @branch_factorises result 0 -> arg 1: (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2], s0 in [0, 2], s1 in [0, 2]
// CHECK:       @branch_factorises result 0 -> arg 2: (d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2]
func.func @branch_factorises(%p: tensor<i32>, %a: tensor<2x3x3xf32>, %b: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %r = "stablehlo.case"(%p) ({
    %f = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<2x3x3xf32>) -> tuple<tensor<2x3x3xf32>, tensor<2xi32>>
    %l = stablehlo.get_tuple_element %f[0] : (tuple<tensor<2x3x3xf32>, tensor<2xi32>>) -> tensor<2x3x3xf32>
    stablehlo.return %l : tensor<2x3x3xf32>
  }, {
    stablehlo.return %b : tensor<2x3x3xf32>
  }) : (tensor<i32>) -> tensor<2x3x3xf32>
  return %r : tensor<2x3x3xf32>
}

// -----

// An element the walk cannot follow (a custom call of no known target whose tuple
// holds a tuple) is unknown, and the reason names the op and the element.
// CHECK-LABEL: @nested_tuple_element result 0 -> arg 0: unknown indexing (stablehlo.case: a branch's maps are unknown: stablehlo.custom_call: cannot follow element 1 of the tuple result #0)
func.func @nested_tuple_element(%p: tensor<i32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  %r = "stablehlo.case"(%p) ({
    %t = stablehlo.custom_call @my_kernel(%a) : (tensor<3xf32>) -> tuple<tuple<tensor<3xf32>>, tensor<3xf32>>
    %u = stablehlo.get_tuple_element %t[1] : (tuple<tuple<tensor<3xf32>>, tensor<3xf32>>) -> tensor<3xf32>
    stablehlo.return %u : tensor<3xf32>
  }, {
    stablehlo.return %a : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
