// A row softmax and a matmul, for hlo-print-tilings / hlo-attach-tiles (README).
func.func @softmax(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<16x128xf32>, tensor<f32>) -> tensor<16xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<16xf32>) -> tensor<16x128xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<16x128xf32>
  %3 = stablehlo.exponential %2 : tensor<16x128xf32>
  return %3 : tensor<16x128xf32>
}
func.func @matmul(%a: tensor<128x256xbf16>, %b: tensor<256x128xbf16> {hlo_indexing.layout = "{1,0:T(16,128)(2,1)}"}) -> tensor<128x128xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<128x256xbf16>, tensor<256x128xbf16>) -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}
