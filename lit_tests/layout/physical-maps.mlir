// Maps between physical indices (hlo_indexing.analysis.physical): the per-op and fused
// maps composed with the layouts written on the values (row-major where none is).
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='physical=coordinates' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OP
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='physical=offset direction=input-to-output' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFFSET
// RUN: %hlo-opt %s --split-input-file --hlo-print-fused-indexing-maps='physical=coordinates' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUSED

// XLA's PhysicalLayoutTestInputPermutation: the operand is {1,0,2}, so its physical
// index is (d2, d0, d1); the output is row-major.
// OP-LABEL:    result #0 (stablehlo.exponential)
// OP-NEXT:     operand id = 0 (d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
// OFFSET-LABEL: operand #0 (stablehlo.exponential)
// Input offset o = d2 * 200 + d0 * 20 + d1 feeds output offset d0 * 600 + d1 * 30 + d2:
// (o mod 200) * 30 = d0 * 600 + d1 * 30.
// OFFSET-NEXT:  operand id = 0 (d0) -> (d0 floordiv 200 + (d0 mod 200) * 30), domain: d0 in [0, 5999]
// FUSED-LABEL: @permuted result 0 -> arg 0: (d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]
func.func @permuted(%arg0: tensor<10x20x30xf32> {hlo_indexing.layout = "{1,0,2}"}) -> tensor<10x20x30xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<10x20x30xf32>
  return %0 : tensor<10x20x30xf32>
}

// -----

// A TPU-tiled bf16 operand read through a transpose: output (i, j) reads element
// (j, i), which lives in tile (j floordiv 8, i floordiv 128), row pair
// (j mod 8) floordiv 2, column i mod 128, half j mod 2 of its 32-bit word.
// OP-LABEL:    result #0 (stablehlo.transpose)
// OP-NEXT:     operand id = 0 (d0, d1) -> (d1 floordiv 8, d0 floordiv 128, (d1 mod 8) floordiv 2, d0 mod 128, d1 mod 2, 0), domain: d0 in [0, 255], d1 in [0, 15]
// FUSED-LABEL: @tpu_tiled result 0 -> arg 0: (d0, d1) -> (d1 floordiv 8, d0 floordiv 128, (d1 mod 8) floordiv 2, d0 mod 128, d1 mod 2, 0), domain: d0 in [0, 255], d1 in [0, 15]
func.func @tpu_tiled(%arg0: tensor<16x256xbf16> {hlo_indexing.layout = "{1,0:T(8,128)(2,1)}"}) -> tensor<256x16xbf16> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x256xbf16>) -> tensor<256x16xbf16>
  return %0 : tensor<256x16xbf16>
}
