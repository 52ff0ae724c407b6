// Ops with data-dependent, tuple, region-carrying or unknown indexing, and the
// elementwise family, in StableHLO and (legalised) MHLO, both directions.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --stablehlo-legalize-to-hlo --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O
// RUN: %hlo-opt %s --split-input-file --stablehlo-legalize-to-hlo --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// Output (r, c) keeps its operand element, may read every index (which update lands
// where is data), and reads update (b, j) when the update's window starts at
// (r, c - j): rt0 = r, rt1 = c - j within the clamped start ranges. Both are read
// from the index row of that update, the range variable s0 (not the output's d0).
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.scatter):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 4]
// O2I-NEXT: operand id = 1 (d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 9], d1 in [0, 4], s0 in [0, 2], s1 in [0, 1]
// O2I-NEXT: operand id = 2 (d0, d1)[s0, s1]{rt0, rt1} -> (s0, s1), domain: d0 in [0, 9], d1 in [0, 4], s0 in [0, 2], s1 in [0, 3], rt0 in [0, 9], rt1 in [0, 1], -d0 + rt0 in [0, 0], -d1 + s1 + rt1 in [0, 0]
// O2I-NEXT: runtime variables:
// O2I-NEXT: rt0: parameter(1); (d0, d1)[s0, s1] -> (s0, 0), domain: d0 in [0, 9], d1 in [0, 4], s0 in [0, 2], s1 in [0, 3]
// O2I-NEXT: rt1: parameter(1); (d0, d1)[s0, s1] -> (s0, 1), domain: d0 in [0, 9], d1 in [0, 4], s0 in [0, 2], s1 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.scatter):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 4]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.scatter):
// I2O-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 9], s1 in [0, 4]
// I2O-NEXT: input-to-output indexing of operand #2 ({{stablehlo|mhlo}}.scatter):
// I2O-NEXT: operand id = 0 (d0, d1){rt0, rt1} -> (rt0, d1 + rt1), domain: d0 in [0, 2], d1 in [0, 3], rt0 in [0, 9], rt1 in [0, 1]
// I2O-NEXT: runtime variables:
// I2O-NEXT: rt0: parameter(1); (d0, d1) -> (d0, 0), domain: d0 in [0, 2], d1 in [0, 3]
// I2O-NEXT: rt1: parameter(1); (d0, d1) -> (d0, 1), domain: d0 in [0, 2], d1 in [0, 3]
func.func @scatter(%operand: tensor<10x5xf32>, %indices: tensor<3x2xi32>, %updates: tensor<3x4xf32>) -> tensor<10x5xf32> {
  %0 = "stablehlo.scatter"(%operand, %indices, %updates) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %y : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>} : (tensor<10x5xf32>, tensor<3x2xi32>, tensor<3x4xf32>) -> tensor<10x5xf32>
  return %0 : tensor<10x5xf32>
}

// -----

// Windows of 4 with stride 2 over 8 elements: source s covers 2s..2s+3. Output o
// reads the sources whose window holds o and the operand over those windows.
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.select_and_scatter):
// O2I-NEXT: operand id = 0 (d0)[s0, s1, s2] -> (s0 + s1 * 2), domain: d0 in [0, 7], s0 in [0, 3], s1 in [0, 2], s2 in [0, 3], -d0 + s1 * 2 + s2 in [0, 0]
// O2I-NEXT: operand id = 1 (d0)[s0, s1] -> (s0), domain: d0 in [0, 7], s0 in [0, 2], s1 in [0, 3], -d0 + s0 * 2 + s1 in [0, 0]
// O2I-NEXT: operand id = 2 (d0) -> (), domain: d0 in [0, 7]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.select_and_scatter):
// I2O-NEXT: operand id = 0 (d0)[s0, s1, s2] -> (s0 + s1 * 2), domain: d0 in [0, 7], s0 in [0, 3], s1 in [0, 2], s2 in [0, 3], -d0 + s1 * 2 + s2 in [0, 0]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.select_and_scatter):
// I2O-NEXT: operand id = 0 (d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 2], s0 in [0, 3]
// I2O-NEXT: input-to-output indexing of operand #2 ({{stablehlo|mhlo}}.select_and_scatter):
// I2O-NEXT: operand id = 0 ()[s0] -> (s0), domain: s0 in [0, 7]
func.func @select_and_scatter(%operand: tensor<8xf32>, %source: tensor<3xf32>, %init: tensor<f32>) -> tensor<8xf32> {
  %0 = "stablehlo.select_and_scatter"(%operand, %source, %init) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 4>, window_strides = array<i64: 2>} : (tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A tuple value has no index space of its own: a map into or out of a tuple addresses
// one element. Tuple operand k is element k of the result (identity over its space);
// get_tuple_element reads the selected element at the same index.
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.tuple):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.get_tuple_element):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.tuple):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.tuple):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.get_tuple_element):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
func.func @tuple_and_get_tuple_element(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = stablehlo.tuple %a, %b : tuple<tensor<4xf32>, tensor<2x3xf32>>
  %g = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.map):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.map):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.map):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
func.func @map(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.clamp):
// O2I-NEXT: operand id = 0 (d0, d1) -> (), domain: d0 in [0, 2], d1 in [0, 3]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]
// O2I-NEXT: operand id = 2 (d0, d1) -> (), domain: d0 in [0, 2], d1 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.clamp):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 2], s1 in [0, 3]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.clamp):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]
// I2O-NEXT: input-to-output indexing of operand #2 ({{stablehlo|mhlo}}.clamp):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 2], s1 in [0, 3]
func.func @clamp_scalar_bounds(%lo: tensor<f32>, %x: tensor<3x4xf32>, %hi: tensor<f32>) -> tensor<3x4xf32> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.atan2):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// O2I-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 5]
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.convert):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.is_finite):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.real):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.imag):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.reduce_precision):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.atan2):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.convert):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.is_finite):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.real):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.imag):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.reduce_precision):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
func.func @elementwise_family(%a: tensor<6xf32>, %b: tensor<6xf32>, %c: tensor<6xcomplex<f32>>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi1>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %0 = stablehlo.atan2 %a, %b : tensor<6xf32>
  %1 = stablehlo.convert %a : (tensor<6xf32>) -> tensor<6xi32>
  %2 = stablehlo.is_finite %a : (tensor<6xf32>) -> tensor<6xi1>
  %3 = stablehlo.real %c : (tensor<6xcomplex<f32>>) -> tensor<6xf32>
  %4 = stablehlo.imag %c : (tensor<6xcomplex<f32>>) -> tensor<6xf32>
  %5 = stablehlo.reduce_precision %a, format = e5m10 : tensor<6xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<6xf32>, tensor<6xi32>, tensor<6xi1>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.dot):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 4], s0 in [0, 2]
// O2I-NEXT: operand id = 1 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 3], d1 in [0, 4], s0 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.dot):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 4]
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.dot):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 3]
func.func @dot(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %0 = stablehlo.dot %a, %b : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Dynamic shapes: explicit unknown indexing.
// O2I-LABEL: output-to-input indexing of result #0 ({{stablehlo|mhlo}}.dynamic_reshape):
// O2I-NEXT: operand id = 0 unknown indexing
// O2I-NEXT: operand id = 1 unknown indexing
// I2O-LABEL: input-to-output indexing of operand #0 ({{stablehlo|mhlo}}.dynamic_reshape):
// I2O-NEXT: operand id = 0 unknown indexing
// I2O-NEXT: input-to-output indexing of operand #1 ({{stablehlo|mhlo}}.dynamic_reshape):
// I2O-NEXT: operand id = 0 unknown indexing
func.func @unknown_ops(%a: tensor<4xf32>, %s: tensor<2xi64>) -> tensor<2x2xf32> {
  %d = stablehlo.dynamic_reshape %a, %s : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

