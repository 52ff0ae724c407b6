func.func @padded(%x: tensor<6x8xf32>) -> tensor<6x16xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.pad %x, %c, low = [0, 0], high = [0, 8], interior = [0, 0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<6x16xf32>
  return %0 : tensor<6x16xf32>
}
