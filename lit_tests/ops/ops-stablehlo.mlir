// One case per op family beyond the spec's examples, in StableHLO and (legalised) MHLO, both directions; expected maps are XLA's
// (indexing_analysis_test.cc) where XLA has the case, up to term order and folding.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --stablehlo-legalize-to-hlo --hlo-print-indexing-maps 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O
// RUN: %hlo-opt %s --split-input-file --stablehlo-legalize-to-hlo --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.pad):
// CHECK-NEXT: operand id = 0 (d0, d1) -> ({{.*}}, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], {{.*}} mod 2 in [0, 0]
// CHECK-COUNT-5: operand id = 1 (d0, d1) -> (), domain:
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.pad):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0 * 2 + 1, d1 + 4), domain: d0 in [0, 3], d1 in [0, 3]
// The padding value lands on the first row, the interior rows 2, 4, 6, the last 4 rows, the first 4 and the last 8 columns.
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.pad):
// I2O-DAG: operand id = 0 ()[s0, s1] -> (0, s1), domain: s0 in [0, 0], s1 in [0, 15]
// I2O-DAG: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 11], s1 in [0, 3]
// I2O-DAG: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 11], s1 in [8, 15]
// I2O-DAG: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [2, 6], s1 in [0, 15], (s0 + 1) mod 2 in [1, 1]
// I2O-DAG: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [8, 11], s1 in [0, 15]
func.func @pad(%p0: tensor<4x4xf32>, %p1: tensor<f32>) -> tensor<12x16xf32> {
  %0 = stablehlo.pad %p0, %p1, low = [1, 4], high = [4, 8], interior = [1, 0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<12x16xf32>
  return %0 : tensor<12x16xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.pad):
// XLA gives d0 in [0, 4] with the same mod constraint: the same two points {1, 3}.
// CHECK-NEXT: operand id = 0 (d0) -> ({{.*}}), domain: d0 in [1, 3], {{.*}} mod 2 in [0, 0]
// CHECK-NEXT: operand id = 1 (d0) -> (), domain: d0 in [0, 4], {{.*}} mod 2 in [1, 1]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.pad):
// I2O-NEXT: operand id = 0 (d0) -> (d0 * 2 - 3), domain: d0 in [2, 3]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.pad):
// I2O-NEXT: operand id = 0 ()[s0] -> (s0), domain: s0 in [0, 4], (s0 + 1) mod 2 in [1, 1]
func.func @pad_negative(%p0: tensor<7xf32>, %p1: tensor<f32>) -> tensor<5xf32> {
  %0 = stablehlo.pad %p0, %p1, low = [-3], high = [-5], interior = [1] : (tensor<7xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.reduce_window):
// CHECK-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (d0 * 2 + s0 - 1, d1 + s1), domain: d0 in [0, 6], d1 in [0, 16], s0 in [0, 2], s1 in [0, 1], d0 * 2 + s0 in [1, 13], d1 + s1 in [0, 16]
// CHECK-NEXT: operand id = 1 (d0, d1) -> (), domain: d0 in [0, 6], d1 in [0, 16]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.reduce_window):
// I2O-NEXT: operand id = 0 (d0, d1)[s0, s1, s2, s3] -> (s0, s1), domain: d0 in [0, 12], d1 in [0, 16], s0 in [0, 6], s1 in [0, 16], s2 in [0, 2], s3 in [0, 1], -d0 + s0 * 2 + s2 in [1, 1], -d1 + s1 + s3 in [0, 0], s0 * 2 + s2 in [1, 13], s1 + s3 in [0, 16]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.reduce_window):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 6], s1 in [0, 16]
func.func @reduce_window(%p0: tensor<13x17xf32>, %init: tensor<f32>) -> tensor<7x17xf32> {
  %0 = "stablehlo.reduce_window"(%p0, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 2, 1>, padding = dense<[[1, 1], [0, 1]]> : tensor<2x2xi64>} : (tensor<13x17xf32>, tensor<f32>) -> tensor<7x17xf32>
  return %0 : tensor<7x17xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.convolution):
// CHECK-NEXT: operand id = 0 (d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 + s0, d2 + s1, (d3 floordiv 8) * 4 + s2), domain: d0 in [0, 0], d1 in [0, 9], d2 in [0, 5], d3 in [0, 47], s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]
// CHECK-NEXT: operand id = 1 (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3), domain: d0 in [0, 0], d1 in [0, 9], d2 in [0, 5], d3 in [0, 47], s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.convolution):
// I2O-NEXT: operand id = 0 (d0, d1, d2, d3)[s0, s1, s2, s3, s4, s5, s6] -> (0, s1, s2, s3), domain: d0 in [0, 0], d1 in [0, 11], d2 in [0, 9], d3 in [0, 23], s0 in [0, 0], s1 in [0, 9], s2 in [0, 5], s3 in [0, 47], s4 in [0, 2], s5 in [0, 4], s6 in [0, 3], -d1 + s1 + s4 in [0, 0], -d2 + s2 + s5 in [0, 0], -d3 + s6 + (s3 floordiv 8) * 4 in [0, 0]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.convolution):
// I2O-NEXT: operand id = 0 (d0, d1, d2, d3)[s0, s1, s2, s3, s4, s5, s6] -> (0, s1, s2, s3), domain: d0 in [0, 3], d1 in [0, 2], d2 in [0, 4], d3 in [0, 47], s0 in [0, 0], s1 in [0, 9], s2 in [0, 5], s3 in [0, 47], s4 in [0, 2], s5 in [0, 4], s6 in [0, 3], -d0 + s6 in [0, 0], -d1 + s4 in [0, 0], -d2 + s5 in [0, 0], -d3 + s3 in [0, 0]
func.func @convolution_feature_groups(%p0: tensor<1x12x10x24xf32>, %p1: tensor<4x3x5x48xf32>) -> tensor<1x10x6x48xf32> {
  %0 = stablehlo.convolution(%p0, %p1) dim_numbers = [b, 0, 1, f]x[i, 0, 1, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 6 : i64} : (tensor<1x12x10x24xf32>, tensor<4x3x5x48xf32>) -> tensor<1x10x6x48xf32>
  return %0 : tensor<1x10x6x48xf32>
}

// -----

// Variables with a single value are folded by the simplifier (d0 = 0, rt1 = 0).
// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.dynamic_slice):
// CHECK-NEXT: operand id = 0 (d0, d1, d2){rt0, rt1, rt2} -> ({{d0 \+ rt0|rt0}}, {{d1 \+ rt1|d1}}, d2 + rt2), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31], rt0 in [0, 1], rt1 in [0, 0], rt2 in [0, 226]
// CHECK-NEXT: runtime variables:
// CHECK-NEXT: rt0: parameter(1); (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
// CHECK-NEXT: rt1: parameter(2); (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
// CHECK-NEXT: rt2: parameter(3); (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
// CHECK-NEXT: operand id = 1 (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.dynamic_slice):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1, s2]{rt0, rt1, rt2} -> (0, s1, s2), domain: d0 in [0, 1], d1 in [0, 1], d2 in [0, 257], s0 in [0, 0], s1 in [0, 1], s2 in [0, 31], rt0 in [0, 1], rt1 in [0, 0], rt2 in [0, 226], -d0 + rt0 in [0, 0], -d1 + s1 in [0, 0], -d2 + s2 + rt2 in [0, 0]
// I2O-NEXT: runtime variables:
// I2O-NEXT: rt0: parameter(1); (d0, d1, d2) -> (), domain: d0 in [0, 1], d1 in [0, 1], d2 in [0, 257]
// I2O-NEXT: rt1: parameter(2);
// I2O-NEXT: rt2: parameter(3);
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.dynamic_slice):
// I2O-NEXT: operand id = 0 ()[s0, s1, s2] -> (0, s1, s2), domain: s0 in [0, 0], s1 in [0, 1], s2 in [0, 31]
func.func @dynamic_slice(%src: tensor<2x2x258xi32>, %of1: tensor<i32>, %of2: tensor<i32>, %of3: tensor<i32>) -> tensor<1x2x32xi32> {
  %0 = stablehlo.dynamic_slice %src, %of1, %of2, %of3, sizes = [1, 2, 32] : (tensor<2x2x258xi32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x32xi32>
  return %0 : tensor<1x2x32xi32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.dynamic_update_slice):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]
// CHECK-NEXT: operand id = 1 (d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1), domain: d0 in [0, 19], d1 in [0, 29], rt0 in [0, 15], rt1 in [0, 20]
// CHECK-NEXT: runtime variables:
// CHECK-NEXT: rt0: parameter(2);
// CHECK-NEXT: rt1: constant(7);
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.dynamic_update_slice):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.dynamic_update_slice):
// I2O-NEXT: operand id = 0 (d0, d1){rt0, rt1} -> (d0 + rt0, d1 + rt1), domain: d0 in [0, 4], d1 in [0, 9], rt0 in [0, 15], rt1 in [0, 20]
// I2O-NEXT: runtime variables:
// I2O-NEXT: rt0: parameter(2); (d0, d1) -> (), domain: d0 in [0, 4], d1 in [0, 9]
// I2O-NEXT: rt1: constant(7); (d0, d1) -> (), domain: d0 in [0, 4], d1 in [0, 9]
// I2O-NEXT: input-to-output indexing of operand #2 ({{stablehlo|mhlo}}.dynamic_update_slice):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 19], s1 in [0, 29]
func.func @dynamic_update_slice(%src: tensor<20x30xi32>, %upd: tensor<5x10xi32>, %of1: tensor<i32>) -> tensor<20x30xi32> {
  %of2 = stablehlo.constant dense<7> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %src, %upd, %of1, %of2 : (tensor<20x30xi32>, tensor<5x10xi32>, tensor<i32>, tensor<i32>) -> tensor<20x30xi32>
  return %0 : tensor<20x30xi32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.gather):
// CHECK-NEXT: operand id = 0 (d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3), domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], rt0 in [0, 26], rt1 in [0, 68]
// CHECK-NEXT: runtime variables:
// CHECK-NEXT: rt0: parameter(1); (d0, d1, d2, d3) -> (d0, 0), domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]
// CHECK-NEXT: rt1: parameter(1); (d0, d1, d2, d3) -> (d0, 1), domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]
// CHECK-NEXT: operand id = 1 (d0, d1, d2, d3)[s0] -> (d0, s0), domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], s0 in [0, 1]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.gather):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1, s2, s3]{rt0, rt1} -> (s0, s1, s2, s3), domain: d0 in [0, 32], d1 in [0, 75], d2 in [0, 69], s0 in [0, 1805], s1 in [0, 6], s2 in [0, 7], s3 in [0, 3], rt0 in [0, 26], rt1 in [0, 68], -d0 + s1 + rt0 in [0, 0], -d1 + s2 + rt1 in [0, 0], -d2 + s3 in [0, 0]
// I2O-NEXT: runtime variables:
// I2O-NEXT: rt0: parameter(1); (d0, d1, d2)[s0, s1, s2, s3] -> (s0, 0), domain: d0 in [0, 32], d1 in [0, 75], d2 in [0, 69], s0 in [0, 1805], s1 in [0, 6], s2 in [0, 7], s3 in [0, 3]
// I2O-NEXT: rt1: parameter(1); (d0, d1, d2)[s0, s1, s2, s3] -> (s0, 1),
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.gather):
// I2O-NEXT: operand id = 0 (d0, d1)[s0, s1, s2] -> (d0, s0, s1, s2), domain: d0 in [0, 1805], d1 in [0, 1], s0 in [0, 6], s1 in [0, 7], s2 in [0, 3]
func.func @gather(%operand: tensor<33x76x70xf32>, %indices: tensor<1806x2xi32>) -> tensor<1806x7x8x4xf32> {
  %0 = "stablehlo.gather"(%operand, %indices) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2, 3], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 7, 8, 4>} : (tensor<33x76x70xf32>, tensor<1806x2xi32>) -> tensor<1806x7x8x4xf32>
  return %0 : tensor<1806x7x8x4xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.select):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (), domain: d0 in [0, 999], d1 in [0, 999]
// CHECK-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]
// CHECK-NEXT: operand id = 2 (d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.select):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 999], s1 in [0, 999]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.select):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]
func.func @select_scalar_predicate(%p0: tensor<i1>, %p1: tensor<1000x1000xf32>, %p2: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %0 = stablehlo.select %p0, %p1, %p2 : tensor<i1>, tensor<1000x1000xf32>
  return %0 : tensor<1000x1000xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.all_gather):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0, d1 mod 128), domain: d0 in [0, 127], d1 in [0, 255]
// CHECK-NEXT: replica id:
// CHECK-NEXT: (d0, d1) -> (d1 floordiv 128), domain: d0 in [0, 127], d1 in [0, 255]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.all_gather):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, d1 + s0 * 128), domain: d0 in [0, 127], d1 in [0, 127], s0 in [0, 1]
func.func @all_gather(%p0: tensor<128x128xf32>) -> tensor<128x256xf32> {
  %0 = "stablehlo.all_gather"(%p0) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<128x128xf32>) -> tensor<128x256xf32>
  return %0 : tensor<128x256xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.sort):
// CHECK-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 7]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.sort):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 7]
func.func @sort(%p0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "stablehlo.sort"(%p0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// triangular_solve (left side, a x = b): x reads all of a and its column of b. A custom
// call whose target has no rule stays unknown.
// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.triangular_solve):
// CHECK-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 3], s1 in [0, 3]
// CHECK-NEXT: operand id = 1 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 3]
// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.custom_call):
// CHECK-NEXT: operand id = 0 unknown indexing
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.triangular_solve):
// I2O-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 3], d1 in [0, 3], s0 in [0, 3], s1 in [0, 2]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.triangular_solve):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.custom_call):
// I2O-NEXT: operand id = 0 unknown indexing
func.func @unknown(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x4xf32>) {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = true} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.custom_call @foo(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.optimization_barrier):
// CHECK-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// CHECK-NEXT: operand id = 1 no dependence
// CHECK-NEXT: output-to-input indexing of result #1 ({{stablehlo|mhlo}}.optimization_barrier):
// CHECK-NEXT: operand id = 0 no dependence
// CHECK-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.optimization_barrier):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: operand id = 1 no dependence
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.optimization_barrier):
// I2O-NEXT: operand id = 0 no dependence
// I2O-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
func.func @optimization_barrier(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>) {
  %0:2 = stablehlo.optimization_barrier %a, %b : tensor<4xf32>, tensor<2x3xf32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.bitcast_convert):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.bitcast_convert):
// I2O-NEXT: operand id = 0 (d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 3]
func.func @bitcast_convert_narrowing(%a: tensor<4xf32>) -> tensor<4x4xi8> {
  %0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4x4xi8>
  return %0 : tensor<4x4xi8>
}
