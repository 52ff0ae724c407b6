// mhlo.scan maps are read from the body (both directions).
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// A running sum: output t reads input t through the body's map, the earlier inputs
// through the carry, and the init at every step.
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.scan):
// CHECK-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// CHECK-NEXT: operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 5], s0 in [0, 5], d0 - s0 in [1, 5]
// CHECK-NEXT: operand id = 1 (d0) -> (), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.scan):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-NEXT: operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 5], s0 in [0, 5], -d0 + s0 in [1, 5]
func.func @running_sum(%a: tensor<6xf32>, %b: tensor<f32>) -> (tensor<6xf32>, tensor<f32>) {
  %0:2 = "mhlo.scan"(%a, %b) <{dimension = 0 : i64, is_associative = false, is_reverse = false, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%x: tensor<f32>, %c: tensor<f32>):
    %s = mhlo.add %x, %c : tensor<f32>
    mhlo.return %s, %s : tensor<f32>, tensor<f32>
  }) : (tensor<6xf32>, tensor<f32>) -> (tensor<6xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<6xf32>, tensor<f32>
}

// -----

// Reversed: output t reads the inputs after t through the carry.
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.scan):
// CHECK-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// CHECK-NEXT: operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 5], s0 in [0, 5], -d0 + s0 in [1, 5]
// CHECK-NEXT: operand id = 1 (d0) -> (), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.scan):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-NEXT: operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 5], s0 in [0, 5], d0 - s0 in [1, 5]
func.func @reversed_running_sum(%a: tensor<6xf32>, %b: tensor<f32>) -> (tensor<6xf32>, tensor<f32>) {
  %0:2 = "mhlo.scan"(%a, %b) <{dimension = 0 : i64, is_associative = false, is_reverse = true, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%x: tensor<f32>, %c: tensor<f32>):
    %s = mhlo.add %x, %c : tensor<f32>
    mhlo.return %s, %s : tensor<f32>, tensor<f32>
  }) : (tensor<6xf32>, tensor<f32>) -> (tensor<6xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<6xf32>, tensor<f32>
}

// -----

// Two carries that swap every step, the output reading the first one: the inits are
// read on alternate steps (a residue class), no input is read.
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.scan):
// CHECK-NEXT: operand id = 0 no dependence
// CHECK-NEXT: operand id = 1 (d0) -> (), domain: d0 in [0, 4], d0 mod 2 in [0, 0]
// CHECK-NEXT: operand id = 2 (d0) -> (), domain: d0 in [1, 5], (d0 + 1) mod 2 in [0, 0]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.scan):
// I2O-NEXT: operand id = 0 no dependence
func.func @carry_swap(%a: tensor<6xf32>, %b: tensor<f32>, %c: tensor<f32>) -> (tensor<6xf32>, tensor<f32>, tensor<f32>) {
  %0:3 = "mhlo.scan"(%a, %b, %c) <{dimension = 0 : i64, is_associative = false, is_reverse = false, operandSegmentSizes = array<i32: 1, 2>, resultSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%x: tensor<f32>, %p: tensor<f32>, %q: tensor<f32>):
    mhlo.return %p, %q, %p : tensor<f32>, tensor<f32>, tensor<f32>
  }) : (tensor<6xf32>, tensor<f32>, tensor<f32>) -> (tensor<6xf32>, tensor<f32>, tensor<f32>)
  return %0#0, %0#1, %0#2 : tensor<6xf32>, tensor<f32>, tensor<f32>
}
