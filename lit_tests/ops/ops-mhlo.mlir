// MHLO-only ops and encodings.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s

// A bitcast with XLA's layouts is transpose-reshape-transpose (XLA's
// BitcastIsTransposeReshapeTranspose).
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.bitcast):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d1, d0 floordiv 3, d0 mod 3), domain: d0 in [0, 50], d1 in [0, 15]
func.func @bitcast(%arg0: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %arg0 {result_layout = dense<[0, 1]> : tensor<2xindex>, source_layout = dense<[2, 1, 0]> : tensor<3xindex>} : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.bitcast):
// CHECK-NEXT: operand id = 0 unknown indexing
func.func @bitcast_without_layouts(%arg0: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %arg0 : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

// -----

// mhlo.broadcast prepends its broadcast_sizes.
// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.broadcast):
// CHECK-NEXT: operand id = 0 (d0, d1, d2) -> (d1, d2), domain: d0 in [0, 4], d1 in [0, 1], d2 in [0, 2]
func.func @broadcast(%arg0: tensor<2x3xf32>) -> tensor<5x2x3xf32> {
  %0 = "mhlo.broadcast"(%arg0) {broadcast_sizes = dense<5> : tensor<1xi64>} : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.copy):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
func.func @copy(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mhlo.copy %arg0 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// chlo broadcasting ops broadcast numpy-style.
// CHECK-LABEL: output-to-input indexing of result #0 (chlo.broadcast_add):
// CHECK-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4]
// CHECK-NEXT: operand id = 1 (d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 4]
func.func @chlo_broadcast_add(%arg0: tensor<4x5xf32>, %arg1: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = chlo.broadcast_add %arg0, %arg1 : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
