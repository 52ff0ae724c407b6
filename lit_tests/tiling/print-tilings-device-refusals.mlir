// hlo-print-tilings{device=NAME}: what a device ranking does with tilings the tiled
// computation refuses to build, and with a computation it cannot rank. The run
// succeeds (no `not`): the other computations are still ranked.
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=h100 top=1})' 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=tpu-v5e top=1})' 2>&1 | FileCheck %s --check-prefix=TPU

// A reverse reads its operand's tiles with a negative stride, which the tiled
// computation refuses (UNIMPLEMENTED, as XLA's): on both backends every such
// candidate breaks `tiling.unimplemented`, a rejection like any other. On the TPU,
// Mosaic's block-shape rule rejects all but the full block first.
// GPU-LABEL: remark: @reversed: no tiling is legal on h100-sxm
// GPU:       remark: @reversed: 32 of 32 tilings rejected on h100-sxm (tiling.unimplemented 32)
// TPU-LABEL: remark: @reversed: no tiling is legal on tpu-v5e
// TPU:       remark: @reversed: 32 of 32 tilings rejected on tpu-v5e (mosaic.block-shape 31, tiling.unimplemented 1)
// TPU-SAME:  e.g. [8, 128]: [tiling.unimplemented] UNIMPLEMENTED: {{.*}}negative stride (-1, 1)
func.func @reversed(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %r = stablehlo.reverse %x, dims = [0] : tensor<8x128xf32>
  %m = stablehlo.multiply %r, %r : tensor<8x128xf32>
  return %m : tensor<8x128xf32>
}

// -----

// %x is read at a runtime offset (the dynamic slice) and at a fixed one: its footprint
// cannot be counted, so the GPU ranking of @two_reads is a located warning (as without a
// device), and @doubled after it is ranked.
// GPU-LABEL: warning: @two_reads: cannot tile: parameter(0) is read through tiles of different runtime values
// GPU:       remark: @doubled tiling #1 on h100-sxm: tile sizes
func.func @two_reads(%x: tensor<16xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %d = stablehlo.dynamic_slice %x, %i, sizes = [4] : (tensor<16xf32>, tensor<i32>) -> tensor<4xf32>
  %s = stablehlo.slice %x [0:4] : (tensor<16xf32>) -> tensor<4xf32>
  %r = stablehlo.add %d, %s : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @doubled(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %m = stablehlo.add %x, %x : tensor<8x128xf32>
  return %m : tensor<8x128xf32>
}
