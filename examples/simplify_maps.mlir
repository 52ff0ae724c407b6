// An elementwise op whose operand map carries a redundant `mod` and `floordiv`:
// d0 ranges over [0, 9], so `d0 mod 16` is d0 and `(d0 + 2) floordiv 16` is 0.
// Run: hlo-indexing-opt examples/simplify_maps.mlir --hlo-simplify-indexing-maps
func.func @scale(%x: tensor<10xf32>) -> tensor<10xf32> {
  %0 = stablehlo.multiply %x, %x {hlo_indexing.operand_maps = [
    {map = affine_map<(d0) -> (d0 mod 16 + (d0 + 2) floordiv 16)>, dims = array<i64: 0, 9>}]}
    : tensor<10xf32>
  return %0 : tensor<10xf32>
}
