// JAX's Shardy annotations (sdy.mesh, #sdy.sharding, sdy.sharding_constraint) parse
// with default flags; sharding_constraint is the identity in fused maps.
// RUN: %hlo-opt %s --hlo-print-fused-indexing-maps -o /dev/null 2>&1 | FileCheck %s

// CHECK: remark: @main result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 3]
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<3x4xf32>
    return %1 : tensor<3x4xf32>
  }
}
