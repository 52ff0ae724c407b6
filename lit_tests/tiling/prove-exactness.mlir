// hlo-print-tilings{prove=true}: isl proves each printed exactness (islpy installed):
// "1 (proven by isl)" when every element a tile loads is read, "below 1, proven by isl"
// otherwise, whatever the number of tiles; one too large to count is still known.
// REQUIRES: isl
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{budget=48KiB max=2 prove=true})' 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{budget=48KiB max=1 prove=true format=json})' 2>&1 | FileCheck %s --check-prefix=JSON

// A gather-like window: tiles of 3 hold the window, tiles of 2 hang over its end (the
// counts say 18 of 23 elements loaded are read; isl proves that some tile loads more
// than it reads).
// CHECK-LABEL: remark: @window tiling #1: tile sizes [3]: 1 tiles
// CHECK-SAME:  exactness parameter(0) 1 (proven by isl), parameter(1) 1 (proven by isl){{$}}
// CHECK:       remark: @window tiling #2: tile sizes [2]: 2 tiles
// CHECK-SAME:  exactness parameter(0) 0.783 (worst tile 0.5) (below 1, proven by isl), parameter(1) 1 (proven by isl){{$}}
// JSON-LABEL:  "name": "@window",
// JSON:        "method": "counted",
// JSON-NEXT:   "exactness": 1.0,
// JSON:        "proof": "proven"
func.func @window(%x: tensor<8xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [3] : (tensor<8xf32>, tensor<i32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A transpose added to its operand: each tile loads its box of %x and the transposed
// box, 2 * 1024 * 1024 elements over 256 tiles, too many to count
// (limits.MAX_EXACTNESS_POINTS); isl proves that both boxes are read whole.
// CHECK-LABEL: remark: @transpose_add tiling #1: tile sizes [64, 64]: 256 tiles
// CHECK-SAME:  exactness parameter(0) 1 (proven by isl){{$}}
// JSON-LABEL:  "name": "@transpose_add",
// JSON:        "method": "proven",
// JSON-NEXT:   "exactness": 1.0,
// JSON-NEXT:   "worst_tile": 1.0,
// JSON-NEXT:   "read_elements": null,
// JSON-NEXT:   "tile_elements": null,
// JSON-NEXT:   "reason": "{{.*}}limits.MAX_EXACTNESS_POINTS)",
// JSON-NEXT:   "proof": "proven"
func.func @transpose_add(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %0 = stablehlo.add %t, %x : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
