// The per-op examples of the spec ("Maps for single ops"), in MHLO, both directions.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.add):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.add):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
// I2O-NEXT: input-to-output indexing of operand #1 (mhlo.add):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
func.func @elementwise(%arg0: tensor<10x20xf32>, %arg1: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %0 = mhlo.add %arg0, %arg1 : tensor<10x20xf32>
  return %0 : tensor<10x20xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.broadcast_in_dim):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.broadcast_in_dim):
// I2O-NEXT: operand id = 0 (d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]
func.func @broadcast(%arg0: tensor<20xf32>) -> tensor<10x20x30xf32> {
  %0 = "mhlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = dense<1> : tensor<1xi64>}> : (tensor<20xf32>) -> tensor<10x20x30xf32>
  return %0 : tensor<10x20x30xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.constant):
// O2I-NOT: operand id
// O2I-LABEL: output-to-input indexing of result #0 (mhlo.iota):
// O2I-NOT: operand id
// I2O-NOT: operand id
func.func @constant_and_iota() -> (tensor<17x22xbf16>, tensor<5x5x111x42xi32>) {
  %0 = mhlo.constant dense<1.000000e+00> : tensor<17x22xbf16>
  %1 = "mhlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5x5x111x42xi32>
  return %0, %1 : tensor<17x22xbf16>, tensor<5x5x111x42xi32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.transpose):
// O2I-NEXT: operand id = 0 (d0, d1, d2, d3) -> (d0, d3, d1, d2), domain: d0 in [0, 2], d1 in [0, 5], d2 in [0, 127], d3 in [0, 12287]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.transpose):
// I2O-NEXT: operand id = 0 (d0, d1, d2, d3) -> (d0, d2, d3, d1), domain: d0 in [0, 2], d1 in [0, 12287], d2 in [0, 5], d3 in [0, 127]
func.func @transpose(%arg0: tensor<3x12288x6x128xf32>) -> tensor<3x6x128x12288xf32> {
  %0 = "mhlo.transpose"(%arg0) <{permutation = dense<[0, 2, 3, 1]> : tensor<4xi64>}> : (tensor<3x12288x6x128xf32>) -> tensor<3x6x128x12288xf32>
  return %0 : tensor<3x6x128x12288xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reverse):
// O2I-NEXT: operand id = 0 (d0, d1, d2, d3) -> ({{d0|0}}, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.reverse):
// I2O-NEXT: operand id = 0 (d0, d1, d2, d3) -> ({{d0|0}}, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]
func.func @reverse(%arg0: tensor<1x17x9x9xf32>) -> tensor<1x17x9x9xf32> {
  %0 = "mhlo.reverse"(%arg0) <{dimensions = dense<[1, 2]> : tensor<2xi64>}> : (tensor<1x17x9x9xf32>) -> tensor<1x17x9x9xf32>
  return %0 : tensor<1x17x9x9xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reduce):
// O2I-NEXT: operand id = 0 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 1 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 2 (d0) -> (), domain: d0 in [0, 9]
// O2I-NEXT: operand id = 3 (d0) -> (), domain: d0 in [0, 9]
// O2I-NEXT: output-to-input indexing of result #1 (mhlo.reduce):
// O2I-NEXT: operand id = 0 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 1 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 2 (d0) -> (), domain: d0 in [0, 9]
// O2I-NEXT: operand id = 3 (d0) -> (), domain: d0 in [0, 9]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.reduce):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]
// I2O-NEXT: operand id = 1 (d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]
// I2O: input-to-output indexing of operand #2 (mhlo.reduce):
// I2O-NEXT: operand id = 0 ()[s0] -> (s0), domain: s0 in [0, 9]
// I2O-NEXT: operand id = 1 ()[s0] -> (s0), domain: s0 in [0, 9]
func.func @variadic_reduce(%arg0: tensor<256x10xf32>, %arg1: tensor<256x10xi32>) -> (tensor<10xf32>, tensor<10xi32>) {
  %0 = mhlo.constant dense<0xFF800000> : tensor<f32>
  %1 = mhlo.constant dense<0> : tensor<i32>
  %2:2 = mhlo.reduce(%arg0 init: %0), (%arg1 init: %1) across dimensions = [0] : (tensor<256x10xf32>, tensor<256x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<10xf32>, tensor<10xi32>)
   reducer(%arg2: tensor<f32>, %arg4: tensor<f32>) (%arg3: tensor<i32>, %arg5: tensor<i32>)  {
    %3 = mhlo.compare GE, %arg2, %arg4 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = mhlo.select %3, %arg2, %arg4 : tensor<i1>, tensor<f32>
    %5 = mhlo.select %3, %arg3, %arg5 : tensor<i1>, tensor<i32>
    mhlo.return %4, %5 : tensor<f32>, tensor<i32>
  }
  return %2#0, %2#1 : tensor<10xf32>, tensor<10xi32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reduce):
// O2I-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, d0, d1, s1), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 1], s1 in [0, 15]
func.func @reduce_two_dims(%arg0: tensor<2x4x8x16xf32>, %arg1: tensor<f32>) -> tensor<4x8xf32> {
  %0 = mhlo.reduce(%arg0 init: %arg1) applies mhlo.add across dimensions = [0, 3] : (tensor<2x4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.slice):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2), domain: d0 in [0, 4], d1 in [0, 2], d2 in [0, 24]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.slice):
// I2O-NEXT: operand id = 0 (d0, d1, d2) -> (d0 - 5, {{.*}}, d2 floordiv 2), domain: d0 in [5, 9], d1 in [3, 17], d2 in [0, 48], {{.*}}mod 7 in [0, 0], d2 mod 2 in [0, 0]
func.func @slice(%arg0: tensor<10x20x50xf32>) -> tensor<5x3x25xf32> {
  %0 = "mhlo.slice"(%arg0) <{limit_indices = dense<[10, 20, 50]> : tensor<3xi64>, start_indices = dense<[5, 3, 0]> : tensor<3xi64>, strides = dense<[1, 7, 2]> : tensor<3xi64>}> : (tensor<10x20x50xf32>) -> tensor<5x3x25xf32>
  return %0 : tensor<5x3x25xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reshape):
// O2I-NEXT: operand id = 0 (d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.reshape):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]
func.func @reshape_collapse(%arg0: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = mhlo.reshape %arg0 : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reshape):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.reshape):
// I2O-NEXT: operand id = 0 (d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]
func.func @reshape_expand(%arg0: tensor<32xf32>) -> tensor<4x8xf32> {
  %0 = mhlo.reshape %arg0 : (tensor<32xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reshape):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, {{d2 \+ \(d1 mod 2\) \* 4|\(d1 mod 2\) \* 4 \+ d2}}), domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.reshape):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 2 + d1 floordiv 4, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 7]
func.func @reshape_generic(%arg0: tensor<4x8xf32>) -> tensor<2x4x4xf32> {
  %0 = mhlo.reshape %arg0 : (tensor<4x8xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.reshape):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2), domain: d0 in [0, 31], d1 in [0, 2], d2 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.reshape):
// I2O-NEXT: operand id = 0 (d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]
func.func @reshape_collapse_and_expand(%arg0: tensor<4x8x12xf32>) -> tensor<32x3x4xf32> {
  %0 = mhlo.reshape %arg0 : (tensor<4x8x12xf32>) -> tensor<32x3x4xf32>
  return %0 : tensor<32x3x4xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.concatenate):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1 - 50), domain: d0 in [0, 2], d1 in [50, 79]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.concatenate):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]
// I2O-NEXT: input-to-output indexing of operand #1 (mhlo.concatenate):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1 + 50), domain: d0 in [0, 2], d1 in [0, 29]
func.func @concatenate(%arg0: tensor<3x50xf32>, %arg1: tensor<3x30xf32>) -> tensor<3x80xf32> {
  %0 = "mhlo.concatenate"(%arg0, %arg1) <{dimension = 1 : i64}> : (tensor<3x50xf32>, tensor<3x30xf32>) -> tensor<3x80xf32>
  return %0 : tensor<3x80xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (mhlo.dot_general):
// O2I-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]
// O2I-NEXT: operand id = 1 (d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.dot_general):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 255], s0 in [0, 63]
// I2O-NEXT: input-to-output indexing of operand #1 (mhlo.dot_general):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 255], d2 in [0, 63], s0 in [0, 127]
func.func @dot(%arg0: tensor<4x128x256xf32>, %arg1: tensor<4x256x64xf32>) -> tensor<4x128x64xf32> {
  %0 = "mhlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #mhlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<4x128x256xf32>, tensor<4x256x64xf32>) -> tensor<4x128x64xf32>
  return %0 : tensor<4x128x64xf32>
}
