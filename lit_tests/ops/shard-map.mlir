// sdy.manual_computation (JAX's shard_map): global maps from the body's per-device
// maps, the device coordinates shared between the result's and the operand's blocks.
// RUN: %hlo-opt %s --split-input-file --hlo-print-fused-indexing-maps -o /dev/null 2>&1 | FileCheck %s

// Each device transposes its block: the global map is the global transpose.
// CHECK-LABEL: remark: @transpose result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 3]
module {
  sdy.mesh @mesh = <["x"=2, "y"=1]>
  func.func @transpose(%arg0: tensor<4x3xf32>) -> tensor<3x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"y"}, {"x"}]>] manual_axes={"x", "y"} (%a: tensor<2x3xf32>) {
      %1 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      sdy.return %1 : tensor<3x2xf32>
    } : (tensor<4x3xf32>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}

// -----

// A collective in the body reads the same local element of every device's block.
// CHECK-LABEL: remark: @psum result 0 -> arg 0: (d0, d1)[s0] -> (d0 mod 2 + s0 * 2, d1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 1]
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @psum(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<2x3xf32>) {
      %1 = "stablehlo.all_reduce"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      sdy.return %1 : tensor<2x3xf32>
    } : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}

// -----

// Each device writes the first 4 columns of its block twice (jnp.concatenate([r, r], 1)
// in a shard_map): each half of a block reads the block's first 4 columns, so each map
// holds only where its half lies in the block (d1 mod 8).
// CHECK-LABEL: remark: @halves result 0 -> arg 0: (d0, d1) -> (d0, d1 - 4), domain: d0 in [0, 3], d1 in [4, 15], d1 mod 8 in [4, 7]
// CHECK:       remark: @halves result 0 -> arg 0: (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 11], d1 mod 8 in [0, 3]
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @halves(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {"x"}]>] out_shardings=[<@mesh, [{}, {"x"}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
      %s = stablehlo.slice %a [0:4, 0:4] : (tensor<4x8xf32>) -> tensor<4x4xf32>
      %c = stablehlo.concatenate %s, %s, dim = 1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
      sdy.return %c : tensor<4x8xf32>
    } : (tensor<4x16xf32>) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
}

// -----

// The collective is in a function the body calls (JAX puts a fori_loop body, ppermute
// included, in a func.call'd @closed_call): every device's block is read, as in @psum.
// CHECK-LABEL: remark: @called_psum result 0 -> arg 0: (d0, d1)[s0] -> (d0 mod 2 + s0 * 2, d1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 1]
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @called_psum(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<2x3xf32>) {
      %1 = func.call @psum_body(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      sdy.return %1 : tensor<2x3xf32>
    } : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
  func.func private @psum_body(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %1 = "stablehlo.all_reduce"(%a) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
