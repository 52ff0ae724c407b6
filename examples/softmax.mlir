// Softmax over the innermost dimension, as JAX lowers it (simplified): the main job
// prints, for the function result, the fused indexing maps to its argument.
func.func @softmax(%x: tensor<2x65x125xf32>) -> tensor<2x65x125xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<2x65x125xf32>, tensor<f32>) -> tensor<2x65xf32>
  %bmax = stablehlo.broadcast_in_dim %max, dims = [0, 1] : (tensor<2x65xf32>) -> tensor<2x65x125xf32>
  %sub = stablehlo.subtract %x, %bmax : tensor<2x65x125xf32>
  %exp = stablehlo.exponential %sub : tensor<2x65x125xf32>
  %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<2x65x125xf32>, tensor<f32>) -> tensor<2x65xf32>
  %bsum = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (tensor<2x65xf32>) -> tensor<2x65x125xf32>
  %div = stablehlo.divide %exp, %bsum : tensor<2x65x125xf32>
  return %div : tensor<2x65x125xf32>
}
