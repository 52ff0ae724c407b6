// Fused maps through tuples: a map into a tuple addresses one element, so
// get_tuple_element of a tuple reads only the selected operand. Arguments and results
// that are tuples are reported per element ("arg 0.1" is element 1 of argument 0).
// RUN: %hlo-opt %s --split-input-file --hlo-print-fused-indexing-maps 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --stablehlo-legalize-to-hlo --hlo-print-fused-indexing-maps 2>&1 | FileCheck %s

// Only element 1 of the tuple is read: %a has no dependence.
// CHECK-LABEL: @select_element result 0 -> arg 0: no dependence
// CHECK:       @select_element result 0 -> arg 1: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
func.func @select_element(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = stablehlo.tuple %a, %b : tuple<tensor<4xf32>, tensor<2x3xf32>>
  %g = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  %r = stablehlo.transpose %g, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Nested tuples: element 1.0 of %u is %b.
// CHECK-LABEL: @nested result 0 -> arg 0: no dependence
// CHECK:       @nested result 0 -> arg 1: (d0) -> (-d0 + 7), domain: d0 in [0, 7]
func.func @nested(%a: tensor<3xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %t = stablehlo.tuple %b, %a : tuple<tensor<8xf32>, tensor<3xf32>>
  %u = stablehlo.tuple %a, %t : tuple<tensor<3xf32>, tuple<tensor<8xf32>, tensor<3xf32>>>
  %i = stablehlo.get_tuple_element %u[1] : (tuple<tensor<3xf32>, tuple<tensor<8xf32>, tensor<3xf32>>>) -> tuple<tensor<8xf32>, tensor<3xf32>>
  %h = stablehlo.get_tuple_element %i[0] : (tuple<tensor<8xf32>, tensor<3xf32>>) -> tensor<8xf32>
  %r = stablehlo.reverse %h, dims = [0] : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A tuple argument: only its element 1 is read.
// CHECK-LABEL: @tuple_argument result 0 -> arg 0.1: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
// CHECK-NOT:   @tuple_argument result 0 -> arg 0
func.func @tuple_argument(%p: tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<3x2xf32> {
  %g = stablehlo.get_tuple_element %p[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  %r = stablehlo.transpose %g, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// A tuple result: one set of maps per element.
// CHECK-LABEL: @tuple_result result 0.0 -> arg 0: (d0) -> (d0), domain: d0 in [0, 3]
// CHECK:       @tuple_result result 0.0 -> arg 1: no dependence
// CHECK:       @tuple_result result 0.1 -> arg 0: no dependence
// CHECK:       @tuple_result result 0.1 -> arg 1: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
func.func @tuple_result(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> tuple<tensor<4xf32>, tensor<3x2xf32>> {
  %n = stablehlo.negate %a : tensor<4xf32>
  %tr = stablehlo.transpose %b, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t = stablehlo.tuple %n, %tr : tuple<tensor<4xf32>, tensor<3x2xf32>>
  return %t : tuple<tensor<4xf32>, tensor<3x2xf32>>
}

// -----

// An op that takes the whole tuple: its indexing is unknown, and so is the result's.
// CHECK-LABEL: @opaque result 0 -> arg 0: unknown indexing
// CHECK:       @opaque result 0 -> arg 1: unknown indexing
func.func @opaque(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = stablehlo.tuple %a, %b : tuple<tensor<4xf32>, tensor<2x3xf32>>
  %c = stablehlo.custom_call @foo(%t) : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tuple<tensor<4xf32>, tensor<2x3xf32>>
  %g = stablehlo.get_tuple_element %c[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}
