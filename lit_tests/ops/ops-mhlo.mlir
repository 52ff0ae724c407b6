// MHLO-only ops and encodings.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// A bitcast with XLA's layouts is transpose-reshape-transpose (XLA's
// BitcastIsTransposeReshapeTranspose).
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.bitcast):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d1, d0 floordiv 3, d0 mod 3), domain: d0 in [0, 50], d1 in [0, 15]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.bitcast):
// I2O-NEXT: operand id = 0 (d0, d1, d2) -> (d1 * 3 + d2, d0), domain: d0 in [0, 15], d1 in [0, 16], d2 in [0, 2]
func.func @bitcast(%arg0: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %arg0 {result_layout = dense<[0, 1]> : tensor<2xindex>, source_layout = dense<[2, 1, 0]> : tensor<3xindex>} : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.bitcast):
// CHECK-NEXT: operand id = 0 unknown indexing
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.bitcast):
// I2O-NEXT: operand id = 0 unknown indexing
func.func @bitcast_without_layouts(%arg0: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %arg0 : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

// -----

// mhlo.broadcast prepends its broadcast_sizes.
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.broadcast):
// CHECK-NEXT: operand id = 0 (d0, d1, d2) -> (d1, d2), domain: d0 in [0, 4], d1 in [0, 1], d2 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.broadcast):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d0, d1), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 4]
func.func @broadcast(%arg0: tensor<2x3xf32>) -> tensor<5x2x3xf32> {
  %0 = "mhlo.broadcast"(%arg0) {broadcast_sizes = dense<5> : tensor<1xi64>} : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.copy):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.copy):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
func.func @copy(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mhlo.copy %arg0 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// chlo broadcasting ops broadcast numpy-style.
// CHECK-LABEL: output-to-input indexing of result #0 (chlo.broadcast_add):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
// CHECK-NEXT: operand id = 1 (d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 4]
// I2O-LABEL: input-to-output indexing of operand #0 (chlo.broadcast_add):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
// I2O-NEXT: input-to-output indexing of operand #1 (chlo.broadcast_add):
// I2O-NEXT: operand id = 0 (d0)[s0] -> (s0, d0), domain: d0 in [0, 4], s0 in [0, 3]
func.func @chlo_broadcast_add(%arg0: tensor<4x5xf32>, %arg1: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = chlo.broadcast_add %arg0, %arg1 : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
