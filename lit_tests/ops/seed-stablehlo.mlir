// The per-op examples of the spec ("Maps for single ops"), in StableHLO, both directions.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.add):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.add):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.add):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
func.func @elementwise(%p0: tensor<10x20xf32>, %p1: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %0 = stablehlo.add %p0, %p1 : tensor<10x20xf32>
  return %0 : tensor<10x20xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.broadcast_in_dim):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.broadcast_in_dim):
// I2O-NEXT: operand id = 0 (d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]
func.func @broadcast(%p0: tensor<20xf32>) -> tensor<10x20x30xf32> {
  %0 = stablehlo.broadcast_in_dim %p0, dims = [1] : (tensor<20xf32>) -> tensor<10x20x30xf32>
  return %0 : tensor<10x20x30xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.constant):
// O2I-NOT: operand id
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.iota):
// O2I-NOT: operand id
// I2O-NOT: operand id
func.func @constant_and_iota() -> (tensor<17x22xbf16>, tensor<5x5x111x42xi32>) {
  %0 = stablehlo.constant dense<1.0> : tensor<17x22xbf16>
  %1 = stablehlo.iota dim = 0 : tensor<5x5x111x42xi32>
  return %0, %1 : tensor<17x22xbf16>, tensor<5x5x111x42xi32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.transpose):
// O2I-NEXT: operand id = 0 (d0, d1, d2, d3) -> (d0, d3, d1, d2), domain: d0 in [0, 2], d1 in [0, 5], d2 in [0, 127], d3 in [0, 12287]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.transpose):
// I2O-NEXT: operand id = 0 (d0, d1, d2, d3) -> (d0, d2, d3, d1), domain: d0 in [0, 2], d1 in [0, 12287], d2 in [0, 5], d3 in [0, 127]
func.func @transpose(%p0: tensor<3x12288x6x128xf32>) -> tensor<3x6x128x12288xf32> {
  %0 = stablehlo.transpose %p0, dims = [0, 2, 3, 1] : (tensor<3x12288x6x128xf32>) -> tensor<3x6x128x12288xf32>
  return %0 : tensor<3x6x128x12288xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reverse):
// O2I-NEXT: operand id = 0 (d0, d1, d2, d3) -> ({{d0|0}}, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reverse):
// I2O-NEXT: operand id = 0 (d0, d1, d2, d3) -> ({{d0|0}}, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]
func.func @reverse(%p0: tensor<1x17x9x9xf32>) -> tensor<1x17x9x9xf32> {
  %0 = stablehlo.reverse %p0, dims = [1, 2] : tensor<1x17x9x9xf32>
  return %0 : tensor<1x17x9x9xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reduce):
// O2I-NEXT: operand id = 0 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 1 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 2 (d0) -> (), domain: d0 in [0, 9]
// O2I-NEXT: operand id = 3 (d0) -> (), domain: d0 in [0, 9]
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.reduce):
// O2I-NEXT: operand id = 0 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 1 (d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]
// O2I-NEXT: operand id = 2 (d0) -> (), domain: d0 in [0, 9]
// O2I-NEXT: operand id = 3 (d0) -> (), domain: d0 in [0, 9]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reduce):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]
// I2O-NEXT: operand id = 1 (d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]
// I2O: input-to-output indexing of operand #2 (stablehlo.reduce):
// I2O-NEXT: operand id = 0 ()[s0] -> (s0), domain: s0 in [0, 9]
// I2O-NEXT: operand id = 1 ()[s0] -> (s0), domain: s0 in [0, 9]
func.func @variadic_reduce(%p0: tensor<256x10xf32>, %p1: tensor<256x10xi32>) -> (tensor<10xf32>, tensor<10xi32>) {
  %init0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %init1 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%p0 init: %init0), (%p1 init: %init1) across dimensions = [0] : (tensor<256x10xf32>, tensor<256x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<10xf32>, tensor<10xi32>)
    reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<i32>, %b1: tensor<i32>) {
      %c = stablehlo.compare GE, %a0, %b0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %s0 = stablehlo.select %c, %a0, %b0 : tensor<i1>, tensor<f32>
      %s1 = stablehlo.select %c, %a1, %b1 : tensor<i1>, tensor<i32>
      stablehlo.return %s0, %s1 : tensor<f32>, tensor<i32>
    }
  return %0#0, %0#1 : tensor<10xf32>, tensor<10xi32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reduce):
// O2I-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, d0, d1, s1), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 1], s1 in [0, 15]
func.func @reduce_two_dims(%p0: tensor<2x4x8x16xf32>, %init: tensor<f32>) -> tensor<4x8xf32> {
  %0 = stablehlo.reduce(%p0 init: %init) applies stablehlo.add across dimensions = [0, 3] : (tensor<2x4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.slice):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2), domain: d0 in [0, 4], d1 in [0, 2], d2 in [0, 24]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.slice):
// I2O-NEXT: operand id = 0 (d0, d1, d2) -> (d0 - 5, {{.*}}, d2 floordiv 2), domain: d0 in [5, 9], d1 in [3, 17], d2 in [0, 48], {{.*}}mod 7 in [0, 0], d2 mod 2 in [0, 0]
func.func @slice(%p0: tensor<10x20x50xf32>) -> tensor<5x3x25xf32> {
  %0 = stablehlo.slice %p0 [5:10, 3:20:7, 0:50:2] : (tensor<10x20x50xf32>) -> tensor<5x3x25xf32>
  return %0 : tensor<5x3x25xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reshape):
// O2I-NEXT: operand id = 0 (d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reshape):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]
func.func @reshape_collapse(%p0: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = stablehlo.reshape %p0 : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reshape):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reshape):
// I2O-NEXT: operand id = 0 (d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]
func.func @reshape_expand(%p0: tensor<32xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.reshape %p0 : (tensor<32xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reshape):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, {{d2 \+ \(d1 mod 2\) \* 4|\(d1 mod 2\) \* 4 \+ d2}}), domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reshape):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 2 + d1 floordiv 4, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 7]
func.func @reshape_generic(%p0: tensor<4x8xf32>) -> tensor<2x4x4xf32> {
  %0 = stablehlo.reshape %p0 : (tensor<4x8xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reshape):
// O2I-NEXT: operand id = 0 (d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2), domain: d0 in [0, 31], d1 in [0, 2], d2 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reshape):
// I2O-NEXT: operand id = 0 (d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]
func.func @reshape_collapse_and_expand(%p0: tensor<4x8x12xf32>) -> tensor<32x3x4xf32> {
  %0 = stablehlo.reshape %p0 : (tensor<4x8x12xf32>) -> tensor<32x3x4xf32>
  return %0 : tensor<32x3x4xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.concatenate):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1 - 50), domain: d0 in [0, 2], d1 in [50, 79]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.concatenate):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.concatenate):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1 + 50), domain: d0 in [0, 2], d1 in [0, 29]
func.func @concatenate(%p0: tensor<3x50xf32>, %p1: tensor<3x30xf32>) -> tensor<3x80xf32> {
  %0 = stablehlo.concatenate %p0, %p1, dim = 1 : (tensor<3x50xf32>, tensor<3x30xf32>) -> tensor<3x80xf32>
  return %0 : tensor<3x80xf32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.dot_general):
// O2I-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]
// O2I-NEXT: operand id = 1 (d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.dot_general):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 255], s0 in [0, 63]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.dot_general):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 255], d2 in [0, 63], s0 in [0, 127]
func.func @dot(%p0: tensor<4x128x256xf32>, %p1: tensor<4x256x64xf32>) -> tensor<4x128x64xf32> {
  %0 = stablehlo.dot_general %p0, %p1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x128x256xf32>, tensor<4x256x64xf32>) -> tensor<4x128x64xf32>
  return %0 : tensor<4x128x64xf32>
}
