// hlo-attach-tiles{tile-sizes=...}: each op's tile at these flat tile sizes (one per
// tiling parameter), as hlo_indexing.tile = [{offsets = <pid_0 -> offsets>, sizes, strides}];
// the function gets hlo_indexing.tiling and each argument its tiles. A function the
// sizes do not fit gets an error saying why (the others are still tiled).
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-attach-tiles{tile-sizes=2,6})' --mlir-print-local-scope | FileCheck %s
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-attach-tiles{tile-sizes=2,6})' 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-attach-tiles{tile-sizes=16,16,128})' --mlir-print-local-scope | FileCheck %s --check-prefix=DOT
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-attach-tiles{tile-sizes=4})' 2>&1 >/dev/null | FileCheck %s --check-prefix=INVALID
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-attach-tiles{tile-sizes=x})' 2>&1 | FileCheck %s --check-prefix=SYNTAX

// A row softmax at two rows per tile: 2 programs; program pid_0 reads rows 2*pid_0 and
// 2*pid_0+1 of %arg0, the reduce gives their 2 maxima, every elementwise op a 2x6 tile.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:  hlo_indexing.argument_tiles = [{offsets = {{{.*}}text = "(pid_0) -> (pid_0 * 2, 0), domain: pid_0 in [0, 1]"}, sizes = array<i64: 2, 6>, strides = array<i64: 1, 1>}]
// CHECK-SAME:  hlo_indexing.tiling = {num_tiles = 2 : i64, tile_sizes = array<i64: 2, 6>}
// CHECK:       stablehlo.reduce{{.*}}hlo_indexing.tile = [{offsets = {{{.*}}text = "(pid_0) -> (pid_0 * 2), domain: pid_0 in [0, 1]"}, sizes = array<i64: 2>, strides = array<i64: 1>}]
// CHECK:       stablehlo.exponential{{.*}}hlo_indexing.tile = [{offsets = {{{.*}}text = "(pid_0) -> (pid_0 * 2, 0), domain: pid_0 in [0, 1]"}, sizes = array<i64: 2, 6>, strides = array<i64: 1, 1>}]
// SYNTAX:      error: invalid tile sizes 'x': expected positive integers separated by commas
func.func @softmax(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.subtract %arg0, %1 : tensor<4x6xf32>
  %3 = stablehlo.exponential %2 : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}

// -----

// A matmul tiled {K, M, N} = {16, 16, 128}: 4 output tiles of 16x128; the operands'
// programs also step over the 2 K tiles (pid_0 mod 2), so they have 8 programs.
// DOT-LABEL:   func.func @matmul
// DOT-SAME:    hlo_indexing.argument_tiles = [{offsets = {{{.*}}text = "(pid_0) -> ((pid_0 floordiv 2) * 16, (pid_0 mod 2) * 16), domain: pid_0 in [0, 7]"}, sizes = array<i64: 16, 16>
// DOT-SAME:    hlo_indexing.argument_tiles = [{offsets = {{{.*}}text = "(pid_0) -> ((pid_0 mod 2) * 16, 0), domain: pid_0 in [0, 7]"}, sizes = array<i64: 16, 128>
// DOT-SAME:    hlo_indexing.tiling = {num_tiles = 4 : i64, tile_sizes = array<i64: 16, 16, 128>}
// DOT:         stablehlo.dot_general{{.*}}hlo_indexing.tile = [{offsets = {{{.*}}text = "(pid_0) -> (pid_0 * 16, 0), domain: pid_0 in [0, 3]"}, sizes = array<i64: 16, 128>
// Two sizes for three parameters: the error lists the parameters.
// ERR-LABEL:   error: @matmul: 2 tile sizes given, the tiling has 3 parameters: stablehlo.dot_general contracting dim 0 (size 32), stablehlo.dot_general dim 0 (size 64), stablehlo.dot_general dim 1 (size 128)
func.func @matmul(%a: tensor<64x32xbf16>, %b: tensor<32x128xbf16>) -> tensor<64x128xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x32xbf16>, tensor<32x128xbf16>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Sizes that violate the constraints: a tile of 4 elements of the flattened output is
// part of a row of 6, not a tile of %x.
// INVALID-LABEL: error: @reshape: tile sizes [4] are not a valid tiling: INVALID_ARGUMENT: tile sizes [4] do not satisfy the constraints 6 mod d0 in [0, 0] || d0 mod 6 in [0, 0]
func.func @reshape(%x: tensor<4x6xf32>) -> tensor<24xf32> {
  %0 = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}
