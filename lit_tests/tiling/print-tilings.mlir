// hlo-print-tilings: the valid tilings of each function, ranked by bytes moved per output
// element (then number of tiles) among those whose per-tile footprint (bytes one tile
// reads plus bytes it writes) fits the budget.
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{budget=64B max=3})' 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{budget=16KiB max=2})' 2>&1 | FileCheck %s --check-prefix=KIB
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{budget=16KiB max=1 format=json})' 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-tilings{budget=lots})' 2>&1 | FileCheck %s --check-prefix=BUDGET

// A row softmax: a tile must hold whole rows for the reduction, so one row per tile
// (6 f32 read, 6 written: 48 B) moves the least per output element. Tiles of 4 columns
// reread the row for the 2 masked columns of the second tile.
// Each tiling ends with the exactness of its operand tiles: the fraction of the tile
// elements the fused maps read (here all: each tile holds the rows it reduces).
// CHECK-LABEL: remark: @softmax tiling #1: tile sizes [1, 6]: 4 tiles, 48 B per tile (read 24, write 24), 8 B per output element, padding waste 0.0%
// CHECK-SAME:  , exactness parameter(0) 1{{$}}
// CHECK:       remark: @softmax tiling #2: tile sizes [1, 4]: 8 tiles, 40 B per tile (read 24, write 16), 12 B per output element
// CHECK:       remark: @softmax tiling #3: tile sizes [2, 2]: 6 tiles, 64 B per tile (read 48, write 16), 16 B per output element
// KIB-LABEL:   remark: @softmax tiling #1: tile sizes [4, 6]: 1 tiles, 192 B per tile
// format=json: one JSON document per module (tilings.schema.json), verbatim on stderr (the IR is on stdout).
// JSON-LABEL:  "schema": "hlo-indexing/tilings/1",
// JSON-NEXT:   "budget_bytes": 16384,
// JSON:        "name": "@softmax",
// JSON:        "text": "stablehlo.exponential dim 1 (size 6)"
// JSON:        "valid_tilings": 12,
// JSON-NEXT:   "fitting": 12,
// JSON:        "rank": 1,
// JSON-NEXT:   "tile_sizes": [
// JSON-NEXT:     4,
// JSON-NEXT:     6
// JSON-NEXT:   ],
// JSON-NEXT:   "num_tiles": 1,
// JSON:        "exactness": [
// JSON-NEXT:     {
// JSON-NEXT:       "index": 0,
// JSON-NEXT:       "name": "parameter(0)",
// JSON-NEXT:       "method": "counted",
// JSON-NEXT:       "exactness": 1.0,
// JSON-NEXT:       "worst_tile": 1.0,
// JSON-NEXT:       "read_elements": 24,
// JSON-NEXT:       "tile_elements": 24
// JSON:        "blockspecs": "grid = (1, 1)\nin_specs = [\n    pl.BlockSpec((4, 6), lambda i, j: (0, 0)),
// BUDGET:      error: invalid byte size 'lots'
func.func @softmax(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.subtract %arg0, %1 : tensor<4x6xf32>
  %3 = stablehlo.exponential %2 : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}

// -----

// A matmul: the tiling parameters are {K, M, N} (contracting first). %b is laid out in
// (8,128) layout tiles: a tile of 64 columns still moves whole 128-column layout tiles,
// which shows as padding waste; a K step reads one (M, K) block of %a and one (K, N) of %b.
// Equal bytes moved and tiles: fewer K steps (programs) rank first. Tilings of more
// than 65536 programs (K steps included) are counted, not evaluated.
// KIB-LABEL:   remark: @matmul tiling #1: tile sizes [16, 16, 128]: 4 tiles, 12800 B per tile (read 4608, write 8192), 8.5 B per output element, padding waste 0.0%
// KIB:         remark: @matmul tiling #2: tile sizes [8, 16, 128]: 4 tiles, 10496 B per tile (read 2304, write 8192), 8.5 B per output element, padding waste 0.0%
// KIB:         remark: @matmul: 4 tilings with more than 65536 programs not evaluated (max-programs)
// JSON-LABEL:  "schema": "hlo-indexing/tilings/1",
// JSON:        "name": "@matmul",
// JSON:        "index": 1,
// JSON-NEXT:   "name": "parameter(1)",
// JSON-NEXT:   "layout": "{1,0:T(8,128)(2,1)}",
// JSON:        "bytes_per_tile": 4096,
// JSON-NEXT:   "bytes_moved": 32768,
// JSON-NEXT:   "steps": 2
// CHECK-LABEL: remark: @matmul: no valid tiling fits the budget of 64 bytes
func.func @matmul(%a: tensor<64x32xbf16>, %b: tensor<32x128xbf16> {hlo_indexing.layout = "{1,0:T(8,128)(2,1)}"}) -> tensor<64x128xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x32xbf16>, tensor<32x128xbf16>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// A gather-like window (a dynamic slice; its start index is a runtime value, one tile
// per program and start): with tiles of 2 the second tile writes one element of 3
// but loads 2 of %x, so 18 of the 23 elements loaded over all starts are read.
// CHECK-LABEL: remark: @window tiling #1: tile sizes [3]: 1 tiles
// CHECK-SAME:  exactness parameter(0) 1, parameter(1) 1{{$}}
// CHECK:       remark: @window tiling #2: tile sizes [2]: 2 tiles
// CHECK-SAME:  exactness parameter(0) 0.783 (worst tile 0.5), parameter(1) 1{{$}}
func.func @window(%x: tensor<8xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [3] : (tensor<8xf32>, tensor<i32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A scan step: row %i of the stacked output is the new row. The row is read through
// (d0 * 8 + d1 - rt0 * 8) where 'd0 - rt0' is 0: only the tiles holding row %i read
// it, whatever %i is (figures averaged over its 6 values). Columns of 6 (#1): each tile
// reads 1 element of the row; rows of 4 (#2): 2 of the 12 tiles read 4 elements.
// CHECK-LABEL: remark: @scan_step tiling #1: tile sizes [6, 1]: 8 tiles, 56 B per tile (read 32, write 24), 9.33 B per output element
// CHECK:       remark: @scan_step tiling #2: tile sizes [1, 4]: 12 tiles, 52 B per tile (read 36, write 16), 9.67 B per output element
// CHECK:       remark: @scan_step tiling #3: tile sizes [4, 1]: 16 tiles, 40 B per tile (read 24, write 16), 10 B per output element
func.func @scan_step(%out: tensor<6x8xf32>, %row: tensor<8xf32>, %i: tensor<i32>) -> tensor<6x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.reshape %row : (tensor<8xf32>) -> tensor<1x8xf32>
  %0 = stablehlo.dynamic_update_slice %out, %r, %i, %c0 : (tensor<6x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// A pad outside a gemm fusion cannot be tiled (as in XLA): a warning says why.
// CHECK-LABEL: warning: @pad: cannot tile: {{.*}}pad
func.func @pad(%x: tensor<63xf32>) -> tensor<64xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %x, %c, low = [0], high = [1], interior = [0] : (tensor<63xf32>, tensor<f32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// Tiles are tensor tiles: a tuple on the way from the output to an argument is not
// tiled; a warning names the op and the type.
// CHECK-LABEL: warning: @select_element: cannot tile: stablehlo.tuple: a value of type tuple<tensor<4xf32>, tensor<2x3xf32>> is not a tensor
func.func @select_element(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = stablehlo.tuple %a, %b : tuple<tensor<4xf32>, tensor<2x3xf32>>
  %g = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  %r = stablehlo.transpose %g, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// A loop whose result reads none of some carried values (here the counter and %b): the
// loop is no tiled instruction, and the warning says which operand no map reads.
// CHECK-LABEL: warning: @unread_carry: cannot tile: stablehlo.while: operand 0 is read through 0 indexing maps, not one
func.func @unread_carry(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %x, %b = %y) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
   cond {
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %a1 = stablehlo.add %a, %a : tensor<4xf32>
    %b1 = stablehlo.add %b, %a : tensor<4xf32>
    stablehlo.return %i1, %a1, %b1 : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
