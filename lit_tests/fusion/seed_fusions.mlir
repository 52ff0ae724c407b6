// The four fusion examples of the spec ("Maps for fusions"), fused output -> parameter maps.
// RUN: %hlo-opt %s --split-input-file --hlo-print-fused-indexing-maps 2>&1 | FileCheck %s

// One input read twice: two maps.
// CHECK-LABEL: @add_transpose result 0 -> arg 0: (d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]
// CHECK:       @add_transpose result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 999], d1 in [0, 999]
func.func @add_transpose(%p0: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %t = stablehlo.transpose %p0, dims = [1, 0] : (tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %a = stablehlo.add %p0, %t : tensor<1000x1000xf32>
  return %a : tensor<1000x1000xf32>
}

// -----

// Two different-looking paths give one map after de-duplication.
// CHECK-LABEL: @transposes result 0 -> arg 0: (d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]
// CHECK-NOT:   @transposes result 0 -> arg 0
func.func @transposes(%p0: tensor<20x10x50xf32>) -> tensor<10x50x20xf32> {
  %0 = "mhlo.transpose"(%p0) <{permutation = dense<[1, 0, 2]> : tensor<3xi64>}> : (tensor<20x10x50xf32>) -> tensor<10x20x50xf32>
  %1 = mhlo.exponential %0 : tensor<10x20x50xf32>
  %2 = "mhlo.transpose"(%1) <{permutation = dense<[0, 2, 1]> : tensor<3xi64>}> : (tensor<10x20x50xf32>) -> tensor<10x50x20xf32>
  %3 = "mhlo.transpose"(%p0) <{permutation = dense<[2, 1, 0]> : tensor<3xi64>}> : (tensor<20x10x50xf32>) -> tensor<50x10x20xf32>
  %4 = mhlo.exponential %3 : tensor<50x10x20xf32>
  %5 = "mhlo.transpose"(%4) <{permutation = dense<[1, 0, 2]> : tensor<3xi64>}> : (tensor<50x10x20xf32>) -> tensor<10x50x20xf32>
  %6 = mhlo.add %2, %5 : tensor<10x50x20xf32>
  return %6 : tensor<10x50x20xf32>
}

// -----

// Softmax: the element itself and the whole reduced row.
// CHECK-LABEL: @softmax result 0 -> arg 0: (d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 64], d2 in [0, 124]
// CHECK:       @softmax result 0 -> arg 0: (d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 1], d1 in [0, 64], d2 in [0, 124], s0 in [0, 124]
// CHECK-NOT:   @softmax result 0 -> arg 0
func.func @softmax(%x: tensor<2x65x125xf32>) -> tensor<2x65x125xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<2x65x125xf32>, tensor<f32>) -> tensor<2x65xf32>
  %bmax = stablehlo.broadcast_in_dim %max, dims = [0, 1] : (tensor<2x65xf32>) -> tensor<2x65x125xf32>
  %sub = stablehlo.subtract %x, %bmax : tensor<2x65x125xf32>
  %exp = stablehlo.exponential %sub : tensor<2x65x125xf32>
  %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<2x65x125xf32>, tensor<f32>) -> tensor<2x65xf32>
  %bsum = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (tensor<2x65xf32>) -> tensor<2x65x125xf32>
  %div = stablehlo.divide %exp, %bsum : tensor<2x65x125xf32>
  return %div : tensor<2x65x125xf32>
}

// -----

// Chained reshapes cancel.
// CHECK-LABEL: @reshapes result 0 -> arg 0: (d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]
func.func @reshapes(%p0: tensor<10x10x10xf32>) -> tensor<10x10x10xf32> {
  %0 = stablehlo.reshape %p0 : (tensor<10x10x10xf32>) -> tensor<50x20xf32>
  %1 = stablehlo.reshape %0 : (tensor<50x20xf32>) -> tensor<10x10x10xf32>
  return %1 : tensor<10x10x10xf32>
}
