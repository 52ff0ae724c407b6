// hlo-print-tilings, with a device and without: what the ranking does with tilings the
// tiled computation refuses to build, and with a computation it cannot rank. The runs
// succeed (no `not`): the other computations are still ranked.
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=h100 top=1})' 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{device=tpu-v5e top=1})' 2>&1 | FileCheck %s --check-prefix=TPU
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{max=1})' 2>&1 | FileCheck %s --check-prefix=BLIND

// A reverse reads its operand's tiles with a negative stride, which the tiled
// computation refuses (UNIMPLEMENTED, as XLA's): on both backends every such
// candidate breaks `tiling.unimplemented`, a rejection like any other. On the TPU,
// Mosaic's block-shape rule rejects all but the full block first. Without a device,
// they are counted apart from the budget (`unbuildable` in JSON).
// BLIND-LABEL: remark: @reversed: no valid tiling can be built
// BLIND-NEXT:  func.func @reversed
// BLIND:       remark: @reversed: 32 valid tilings the tiled computation cannot build (UNIMPLEMENTED: a negative stride, a concatenate tile across operands or an extra output its tiles do not partition)
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

// %a is read by the programs of two dots (each with its own contracting steps): its
// footprint is not counted, so @two_dots is a located warning without a device, and
// @doubled after it is ranked. With a device, the footprints are those of the ranked
// tilings only: @two_dots is ranked.
// BLIND-LABEL: warning: @two_dots: cannot tile: parameter(0) is read by the programs of different dots
// BLIND:       remark: @doubled tiling #1: tile sizes
// GPU-LABEL:   remark: @two_dots tiling #1 on h100-sxm: tile sizes [1, 1, 32, 32]
// GPU:         remark: @doubled tiling #1 on h100-sxm: tile sizes
func.func @two_dots(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>, %c: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %1 = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}

func.func @doubled(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %m = stablehlo.add %x, %x : tensor<8x128xf32>
  return %m : tensor<8x128xf32>
}

// -----

// %x is read at a runtime offset (the dynamic slice, start in [0, 12]) and at a fixed
// one: the footprint counts their union at each start (4 to 8 elements), the bytes moved
// averaged over the 13 starts: (4 + 5 + 6 + 7 + 9 * 8) / 13 elements of %x, 4 B of %i,
// 16 B written, over 4 output elements.
// BLIND-LABEL: remark: @dynamic_and_fixed_reads tiling #1: tile sizes [4]: 1 tiles, 52 B per tile (read 36, write 16), 12 B per output element
func.func @dynamic_and_fixed_reads(%x: tensor<16xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %d = stablehlo.dynamic_slice %x, %i, sizes = [4] : (tensor<16xf32>, tensor<i32>) -> tensor<4xf32>
  %s = stablehlo.slice %x [0:4] : (tensor<16xf32>) -> tensor<4xf32>
  %r = stablehlo.add %d, %s : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A scalar extra output (the sum beside the centred values) has one element, which
// every program writes: its tiles partition it only when one program covers %d (tile
// size 64); the other tilings are refused as unbuildable, not an internal error.
// BLIND-LABEL: remark: @sum_beside_centered tiling #1: tile sizes [64]: 1 tiles
// BLIND:       remark: @sum_beside_centered: 6 valid tilings the tiled computation cannot build
// GPU-LABEL:   remark: @sum_beside_centered tiling #1 on h100-sxm: tile sizes [64]:
// GPU:         remark: @sum_beside_centered: 6 of 7 tilings rejected on h100-sxm (tiling.unimplemented 6)
// TPU-LABEL:   remark: @sum_beside_centered tiling #1 on tpu-v5e: tile sizes [64]:
func.func @sum_beside_centered(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<64xf32>
  %d = stablehlo.subtract %x, %b : tensor<64xf32>
  return %d, %s : tensor<64xf32>, tensor<f32>
}

// -----

// %x is read by four one-element tiles at runtime starts (32 values each) and two
// fixed ones (jnp.interp's shape): at tile size 32, 2 programs times 32**4 combinations
// of starts, times 63 box intersections, are too many to count (the footprint's limit,
// MAX_ENUMERATED). Without a device every tiling is past it: none is considered. With
// one, tilings are ranked by time: the fastest is printed without its footprint. On the
// TPU, a one-element block of a rank-1 array is not a Mosaic block.
// BLIND-LABEL: remark: @six_reads: no valid tiling was considered (each past a limit: see below)
// BLIND:       remark: @six_reads: 7 candidate tilings not considered ({{.*}}a footprint too large to count)
// GPU-LABEL:   remark: @six_reads tiling #1 on h100-sxm: tile sizes [32]: {{.*}} 2 blocks x 1 warp), footprint not counted: parameter(0): 2097152 rows (programs times runtime values) of 6 tiles are 132120576 box intersections, too many to count
// TPU-LABEL:   remark: @six_reads: no tiling is legal on tpu-v5e
// TPU:         remark: @six_reads: 7 of 7 tilings rejected on tpu-v5e (mosaic.block-shape-1d 7); e.g. [1]: [mosaic.block-shape-1d] parameter 0: block (1,) of (32,) f32
func.func @six_reads(%x: tensor<32xf32>, %i0: tensor<i32>, %i1: tensor<i32>, %i2: tensor<i32>, %i3: tensor<i32>) -> tensor<64xf32> {
  %s0 = stablehlo.dynamic_slice %x, %i0, sizes = [1] : (tensor<32xf32>, tensor<i32>) -> tensor<1xf32>
  %s1 = stablehlo.dynamic_slice %x, %i1, sizes = [1] : (tensor<32xf32>, tensor<i32>) -> tensor<1xf32>
  %s2 = stablehlo.dynamic_slice %x, %i2, sizes = [1] : (tensor<32xf32>, tensor<i32>) -> tensor<1xf32>
  %s3 = stablehlo.dynamic_slice %x, %i3, sizes = [1] : (tensor<32xf32>, tensor<i32>) -> tensor<1xf32>
  %s4 = stablehlo.slice %x [0:1] : (tensor<32xf32>) -> tensor<1xf32>
  %s5 = stablehlo.slice %x [31:32] : (tensor<32xf32>) -> tensor<1xf32>
  %a = stablehlo.add %s0, %s1 : tensor<1xf32>
  %b = stablehlo.add %a, %s2 : tensor<1xf32>
  %c = stablehlo.add %b, %s3 : tensor<1xf32>
  %d = stablehlo.add %c, %s4 : tensor<1xf32>
  %e = stablehlo.add %d, %s5 : tensor<1xf32>
  %r = stablehlo.broadcast_in_dim %e, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
