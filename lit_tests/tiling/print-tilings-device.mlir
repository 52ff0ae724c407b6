// hlo-print-tilings{device=NAME top=N}: the tilings legal on a device, fastest first by
// its cost model (XLA's GPU model on a GPU), each with its time split, the runners-up
// with why they lose to the first, then the rules the other candidates broke.
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=a6000-test top=3})' 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=a6000-test top=1 format=json})' 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=h10O})' 2>&1 | FileCheck %s --check-prefix=TYPO

// XLA's softmax test fusion (TritonSoftmaxFusionInstructionIsSupported) on XLA's A6000
// test device. A tile holds whole rows (the reduction reads all 911 columns, padded to
// 1024 lanes). XLA's own search picks 4 rows (4 warps); one row per tile is XLA's
// worked example, 5.0 us. From 32 rows on, the padded tile of %p0 (32 x 1024) exceeds
// 40% of the 65536 registers: XLA estimates those as infinite, here rejected
// (5 row counts x 11 column sizes = 55 of the 110 candidates).
// CHECK-LABEL: remark: @softmax tiling #1 on a6000-test: tile sizes [4, 911]: 4.96 us
// CHECK-SAME:  128 blocks x 4 warps), 9 B per output element
// CHECK:       remark: @softmax tiling #2 on a6000-test: tile sizes [2, 911]: 4.96 us
// CHECK-SAME:  against #1: +{{[0-9.]+}} ns: reads {{.*}} (reads 1.2x the bytes (2798592 B vs 2332160 B))
// CHECK:       remark: @softmax tiling #3 on a6000-test: tile sizes [8, 911]:
// CHECK-SAME:  64 blocks x 8 warps
// CHECK-SAME:  against #1: {{.*}}compute {{.*}}(64 blocks vs 128 keep fewer cores busy)
// CHECK:       remark: @softmax: 55 of 110 tilings rejected on a6000-test (gpu.register-spill 55); e.g. [32, 911]: [gpu.register-spill] stablehlo.multiply: padded tile [32, 1024] has 32768 elements, more than 40% of the 65536 registers of a block (26214)
// JSON-LABEL:  "schema": "hlo-indexing/tilings/1",
// JSON:        "device_ranking": {
// JSON-NEXT:     "considered": 110,
// JSON-NEXT:     "legal": 55,
// JSON-NEXT:     "rejected": {
// JSON-NEXT:       "gpu.register-spill": 55
// JSON:        "rank": 1,
// JSON-NEXT:   "tile_sizes": [
// JSON-NEXT:     4,
// JSON-NEXT:     911
// JSON:        "estimate": {
// JSON:          "bytes_read": 2332160,
// JSON-NEXT:     "bytes_written": 1865728,
// JSON:          "num_blocks": 128,
// JSON-NEXT:     "num_warps": 4,
// JSON:        "legal": true,
// JSON-NEXT:   "loses": null,
// JSON:        "device": {
// JSON-NEXT:     "name": "a6000-test",
// JSON-NEXT:     "kind": "gpu",
// TYPO:        error: unknown device 'h10O': did you mean 'h100-sxm'
func.func @softmax(%p0: tensor<512x911xf32>, %p1: tensor<911xf32>) -> tensor<512x911xf32> {
  %b0 = stablehlo.broadcast_in_dim %p1, dims = [1] : (tensor<911xf32>) -> tensor<512x911xf32>
  %m0 = stablehlo.multiply %p0, %b0 : tensor<512x911xf32>
  %c0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%m0 init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<512x911xf32>, tensor<f32>) -> tensor<512xf32>
  %b4 = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<512xf32>) -> tensor<512x911xf32>
  %m = stablehlo.multiply %m0, %b4 : tensor<512x911xf32>
  return %m : tensor<512x911xf32>
}

// -----

// A row of 2^16 elements: every tile of the reduced operand holds whole rows, 65536
// elements per row, more than the register rule's 26214, so XLA finds no tiling (7 row
// counts 1..64 x 17 column sizes = 119 candidates); from 32 rows on (2^21 elements)
// Triton's own limit of 1048576 elements per tile is broken too: 2 x 17 = 34.
// CHECK-LABEL: remark: @wide: no tiling is legal on a6000-test
// CHECK:       remark: @wide: 119 of 119 tilings rejected on a6000-test (gpu.register-spill 119, triton.tile-elements 34); e.g. [32, 65536]: [triton.tile-elements] parameter(0): padded tile [32, 65536] has 2097152 elements, more than Triton's 1048576
func.func @wide(%p0: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  %c0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%p0 init: %c0) applies stablehlo.maximum across dimensions = [1] : (tensor<64x65536xf32>, tensor<f32>) -> tensor<64xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<64xf32>) -> tensor<64x65536xf32>
  %s = stablehlo.subtract %p0, %b : tensor<64x65536xf32>
  return %s : tensor<64x65536xf32>
}
