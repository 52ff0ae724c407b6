// Bad input gets a located error (or unknown indexing for a valid op that cannot be
// indexed), never a Python traceback; the other chunks are still analysed. (The PyPI
// FileCheck has no [[@LINE]]: line numbers are written out.)
// RUN: not %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s
// RUN: not %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O
// RUN: not %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=NOTRACE
// RUN: not %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=NOTRACE
// NOTRACE-NOT: {{Traceback|internal error}}

// Unverifiable op.
// CHECK: bad-input.mlir:14:8: error: 'stablehlo.add' op requires the same shape for all operands and results
// I2O: bad-input.mlir:14:8: error: 'stablehlo.add' op requires the same shape
func.func @unverifiable(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Wrong attribute arity, caught by the verifier.
// CHECK: bad-input.mlir:23:8: error: TransposeOp operand rank 2 does not match permutation size 3
func.func @transpose_arity(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0, 2] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Wrong attribute arity the verifier lets through: a layout per dimension.
// CHECK: bad-input.mlir:33:8: error: mhlo.bitcast: attribute 'source_layout' [1, 0] is not a permutation of the 3 dimensions
// I2O: bad-input.mlir:33:8: error: mhlo.bitcast: attribute 'source_layout' [1, 0] is not a permutation of the 3 dimensions
func.func @bitcast_layout_arity(%arg0: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %arg0 {result_layout = dense<[0, 1]> : tensor<2xindex>, source_layout = dense<[1, 0]> : tensor<2xindex>} : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

// -----

// Out-of-range dimensions: in a layout (ours), in all_gather_dim and a scan dimension
// (the verifier's).
// CHECK: bad-input.mlir:44:8: error: mhlo.bitcast: attribute 'result_layout' [0, 2] is not a permutation of the 2 dimensions
// I2O: bad-input.mlir:44:8: error: mhlo.bitcast: attribute 'result_layout' [0, 2] is not a permutation of the 2 dimensions
func.func @bitcast_layout_range(%arg0: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %arg0 {result_layout = dense<[0, 2]> : tensor<2xindex>, source_layout = dense<[2, 1, 0]> : tensor<3xindex>} : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

// -----

// CHECK: bad-input.mlir:52:8: error: all_gather_dim must be a valid index of operand
func.func @all_gather_dim(%p0: tensor<128x128xf32>) -> tensor<128x256xf32> {
  %0 = "mhlo.all_gather"(%p0) {all_gather_dim = 5 : i64, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<128x128xf32>) -> tensor<128x256xf32>
  return %0 : tensor<128x256xf32>
}

// -----

// CHECK: bad-input.mlir:60:10: error: 'mhlo.scan' op scan dimension of operand 0 is out of bounds
func.func @scan_dimension(%a: tensor<10xf32>, %b: tensor<f32>) -> (tensor<10xf32>, tensor<f32>) {
  %0:2 = "mhlo.scan"(%a, %b) <{dimension = 3 : i64, is_associative = false, is_reverse = false, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%x: tensor<f32>, %c: tensor<f32>):
    mhlo.return %x, %c : tensor<f32>, tensor<f32>
  }) : (tensor<10xf32>, tensor<f32>) -> (tensor<10xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<10xf32>, tensor<f32>
}

// -----

// A bitcast whose shapes hold different numbers of elements.
// CHECK: bad-input.mlir:73:8: error: mhlo.bitcast: (16, 17, 3) and (50, 16) have different element counts
// I2O: bad-input.mlir:73:8: error: mhlo.bitcast: (16, 17, 3) and (50, 16) have different element counts
func.func @bitcast_element_count(%arg0: tensor<16x17x3xf32>) -> tensor<50x16xf32> {
  %0 = mhlo.bitcast %arg0 {result_layout = dense<[0, 1]> : tensor<2xindex>, source_layout = dense<[2, 1, 0]> : tensor<3xindex>} : (tensor<16x17x3xf32>) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// -----

// Unsupported element types: rejected by the verifier, or (valid op, element order
// unknown) unknown indexing.
// CHECK: bad-input.mlir:83:8: error: 'stablehlo.bitcast_convert' op operand #0 must be ranked tensor of
func.func @index_elements(%a: tensor<4xindex>) -> tensor<4xi64> {
  %0 = stablehlo.bitcast_convert %a : (tensor<4xindex>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// CHECK-LABEL: output-to-input indexing of result #0 (mhlo.bitcast):
// CHECK-NEXT: operand id = 0 unknown indexing
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.bitcast):
// I2O-NEXT: operand id = 0 unknown indexing
func.func @bitcast_different_widths(%a: tensor<4xf32>) -> tensor<4x4xi8> {
  %0 = mhlo.bitcast %a {result_layout = dense<[1, 0]> : tensor<2xindex>, source_layout = dense<[0]> : tensor<1xindex>} : (tensor<4xf32>) -> tensor<4x4xi8>
  return %0 : tensor<4x4xi8>
}

// -----

// Dynamic shapes and tokens: unknown indexing.
// CHECK-LABEL: output-to-input indexing of result #0 (stablehlo.negate):
// CHECK-NEXT: operand id = 0 unknown indexing
// CHECK-LABEL: output-to-input indexing of result #0 (stablehlo.after_all):
// CHECK-NEXT: operand id = 0 unknown indexing
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.negate):
// I2O-NEXT: operand id = 0 unknown indexing
func.func @not_static(%a: tensor<?x3xf32>, %t: !stablehlo.token) -> (tensor<?x3xf32>, !stablehlo.token) {
  %0 = stablehlo.negate %a : tensor<?x3xf32>
  %1 = stablehlo.after_all %t : !stablehlo.token
  return %0, %1 : tensor<?x3xf32>, !stablehlo.token
}
