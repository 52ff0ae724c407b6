// An argument with an XLA tiled layout: 5 elements in tiles of 2 (the last one padded).
func.func @main(%a: tensor<5xf32> {hlo_indexing.layout = "{0:T(2)}"}) -> tensor<5xf32> {
  return %a : tensor<5xf32>
}
