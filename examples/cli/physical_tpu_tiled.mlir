func.func @main(%arg0: tensor<16x256xbf16> {hlo_indexing.layout = "{1,0:T(8,128)(2,1)}"}) -> tensor<256x16xbf16> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x256xbf16>) -> tensor<256x16xbf16>
  return %0 : tensor<256x16xbf16>
}
