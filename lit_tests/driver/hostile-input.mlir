// RUN: %hlo-opt %s -split-input-file -verify-diagnostics --hlo-print-fused-indexing-maps -o /dev/null
// Input that used to abort, hang or leak an exception (issue #15): each case is a
// located error or is analysed, and the driver goes on with the next chunk.

// A dimension number MLIR's parser would allocate ~9.5 GB for: refused before parsing.
func.func @conv_dims(%p0: tensor<1x12x10x24xf32>, %p1: tensor<4x3x24x48xf32>) -> tensor<1x10x8x48xf32> {
  // expected-error@+1 {{convolution dimension number 2147483648 exceeds the limit of 4096 (limits.MAX_DIMENSION_INDEX)}}
  %0 = stablehlo.convolution(%p0, %p1) dim_numbers = [b, 0, 1, f]x[0, 2147483648, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x12x10x24xf32>, tensor<4x3x24x48xf32>) -> tensor<1x10x8x48xf32>
  return %0 : tensor<1x10x8x48xf32>
}

// -----
// A result number MLIR's parser would allocate for (std::bad_alloc).
func.func @result_number(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{result number 2147483647 exceeds the limit of 65536 (limits.MAX_RESULT_INDEX)}}
  return %0#2147483647 : tensor<4xf32>
}

// -----
// An empty lhs_dilate on a 2-d convolution passes the verifier: the attribute is named.
// expected-note@+1 {{while computing the fused indexing maps of this computation}}
func.func @lhs_dilate(%p0: tensor<1x12x10x24xf32>, %p1: tensor<4x3x24x48xf32>) -> tensor<1x9x8x48xf32> {
  // expected-error@+1 {{stablehlo.convolution: attribute 'lhs_dilation' has 0 entries, expected 2}}
  %0 = stablehlo.convolution(%p0, %p1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], lhs_dilate = []} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x12x10x24xf32>, tensor<4x3x24x48xf32>) -> tensor<1x9x8x48xf32>
  return %0 : tensor<1x9x8x48xf32>
}

// -----
// Complex element types are ordinary element types.
// expected-remark@+1 {{@complex result 0 -> arg 0: (d0) -> (d0), domain: d0 in [0, 1]}}
func.func @complex(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = stablehlo.constant dense<[(1.0,2.0), (3.0,4.0)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.add %0, %a : tensor<2xcomplex<f32>>
  return %1 : tensor<2xcomplex<f32>>
}

// -----
// A token result holds no element: no map goes from it, and the tensor result is still analysed.
// expected-remark@+4 {{@token result 0 -> arg 0: (d0) -> (d0), domain: d0 in [0, 3]}}
// expected-remark@+3 {{@token result 0 -> arg 1: no dependence}}
// expected-remark@+2 {{@token result 1 -> arg 0: no dependence}}
// expected-remark@+1 {{@token result 1 -> arg 1: no dependence}}
func.func @token(%a: tensor<4xf32>, %t: !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) {
  %0 = stablehlo.negate %a : tensor<4xf32>
  %1 = stablehlo.after_all %t : !stablehlo.token
  return %0, %1 : tensor<4xf32>, !stablehlo.token
}

// -----
// A zero-sized value is known empty through a fusion, as per op.
// expected-remark@+1 {{@zero result 0 -> arg 0: KNOWN EMPTY}}
func.func @zero(%a: tensor<0x3xf32>) -> tensor<3x0xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<0x3xf32>) -> tensor<3x0xf32>
  return %0 : tensor<3x0xf32>
}
