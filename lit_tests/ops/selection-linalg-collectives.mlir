// Selection (top_k, ApproxTopK), custom calls by target, fft, cholesky,
// triangular_solve, per-device collectives and dilated convolution, both directions.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// chlo.top_k: both results read the whole row (last dimension) of the operand.
// O2I-LABEL: output-to-input indexing of result #0 (chlo.top_k):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 4]
// O2I-NEXT: output-to-input indexing of result #1 (chlo.top_k):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 4]
// I2O-LABEL: input-to-output indexing of operand #0 (chlo.top_k):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 1]
// I2O-NEXT: operand id = 1 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 1]
func.func @top_k(%a: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
  %v, %i = chlo.top_k(%a, k = 2) : tensor<3x5xf32> -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi32>
}

// -----

// ApproxTopK (custom call): whole rows along reduction_dim (0 here); the scalar inits
// are read by every element.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 1], d1 in [0, 4], s0 in [0, 2]
// O2I-NEXT: operand id = 1 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 1], d1 in [0, 4], s0 in [0, 2]
// O2I-NEXT: operand id = 2 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 4]
// O2I-NEXT: operand id = 3 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 4]
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 1], d1 in [0, 4], s0 in [0, 2]
// O2I-NEXT: operand id = 1 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 1], d1 in [0, 4], s0 in [0, 2]
// O2I-NEXT: operand id = 2 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 4]
// O2I-NEXT: operand id = 3 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 4]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 1]
// I2O-NEXT: operand id = 1 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 1]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 1]
// I2O-NEXT: operand id = 1 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 1]
// I2O-NEXT: input-to-output indexing of operand #2 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 4]
// I2O-NEXT: operand id = 1 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 4]
// I2O-NEXT: input-to-output indexing of operand #3 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 4]
// I2O-NEXT: operand id = 1 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 4]
func.func @approx_top_k(%a: tensor<3x5xf32>, %idx: tensor<3x5xi32>) -> tensor<2x5xf32> {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%a, %idx, %cst, %c) {mhlo.backend_config = {aggregate_to_topk = true, reduction_dim = 0 : i64, top_k = 2 : i64}} : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %0#0 : tensor<2x5xf32>
}

// -----

// A LAPACK kernel: batch dimension elementwise (num_batch_dims = 1), matrices whole;
// the info result (one per batch) reads its matrix.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2], s0 in [0, 2], s1 in [0, 2]
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], s0 in [0, 2], s1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2], s0 in [0, 2], s1 in [0, 2]
// I2O-NEXT: operand id = 1 (d0, d1, d2) -> (d0), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2]
func.func @lapack_cholesky(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)
  return %0#0 : tensor<2x3x3xf32>
}

// -----

// Sharding markers: Sharding is the identity; per device, SPMDFullToShardShape reads
// this device's shard (s0: its position) and SPMDShardToFullShape element d0 mod 2 of
// the shard of device d0 floordiv 2.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0 + s0 * 2, d1), domain: d0 in [0, 1], d1 in [0, 5], s0 in [0, 1]
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d0 mod 2, d1), domain: d0 in [0, 3], d1 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0 - s0 * 2, d1), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 1], d0 - s0 * 2 in [0, 1]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 1], d1 in [0, 5], s0 in [0, 3], -d0 + s0 mod 2 in [0, 0]
func.func @sharding_markers(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  %2 = stablehlo.custom_call @SPMDShardToFullShape(%1) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<2x6xf32>) -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// A custom call target without a rule stays unknown (the reason names the target).
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// O2I-NEXT: operand id = 0 unknown indexing
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.custom_call):
// I2O-NEXT: operand id = 0 unknown indexing
func.func @unknown_target(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// fft: leading dimensions elementwise, the transformed dimensions read whole.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.fft):
// O2I-NEXT: operand id = 0 (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3], s0 in [0, 2], s1 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.fft):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3], s0 in [0, 2], s1 in [0, 3]
func.func @fft(%a: tensor<2x3x4xcomplex<f32>>) -> tensor<2x3x4xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = FFT, length = [3, 4] : (tensor<2x3x4xcomplex<f32>>) -> tensor<2x3x4xcomplex<f32>>
  return %0 : tensor<2x3x4xcomplex<f32>>
}

// -----

// RFFT: the last dimension changes size (8 real -> 5 complex), read whole.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.fft):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 4], s0 in [0, 7]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.fft):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 7], s0 in [0, 4]
func.func @rfft(%a: tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
  return %0 : tensor<2x5xcomplex<f32>>
}

// -----

// cholesky: batch elementwise, the matrix whole.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.cholesky):
// O2I-NEXT: operand id = 0 (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2], s0 in [0, 2], s1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.cholesky):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1] -> (d0, s0, s1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 2], s0 in [0, 2], s1 in [0, 2]
func.func @cholesky(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// -----

// triangular_solve, right side (x a = b): x reads all of a and its row of b.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.triangular_solve):
// O2I-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 2], s1 in [0, 2]
// O2I-NEXT: operand id = 1 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.triangular_solve):
// I2O-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 2], d1 in [0, 2], s0 in [0, 1], s1 in [0, 2]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.triangular_solve):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 2]
func.func @triangular_solve_right(%a: tensor<3x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : (tensor<3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// all_reduce: the same element on every device of the group (replica id s0).
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.all_reduce):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: replica id:
// O2I-NEXT: (d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.all_reduce):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
func.func @all_reduce(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// reduce_scatter: this device's block (s0: its rank) of every device's operand.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.reduce_scatter):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, d1 + s0 * 3), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 1]
// O2I-NEXT: replica id:
// O2I-NEXT: (d0, d1)[s0] -> (s0), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 1]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.reduce_scatter):
// I2O-NEXT: operand id = 0 (d0, d1)[s0] -> (d0, d1 - s0 * 3), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 1], d1 - s0 * 3 in [0, 2]
func.func @reduce_scatter(%a: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %s = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// all_to_all: row d0 comes from device d0 floordiv 4 (its row d0 mod 4) and reads the
// column block that device sends to this one (s0: this device's rank).
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.all_to_all):
// O2I-NEXT: operand id = 0 (d0, d1)[s0] -> (d0 mod 4, d1 + s0 * 3), domain: d0 in [0, 7], d1 in [0, 2], s0 in [0, 1]
// O2I-NEXT: replica id:
// O2I-NEXT: (d0, d1) -> (d0 floordiv 4), domain: d0 in [0, 7], d1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.all_to_all):
// I2O-NEXT: operand id = 0 (d0, d1)[s0, s1] -> (s0, d1 - s1 * 3), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 7], s1 in [0, 1], -d0 + s0 mod 4 in [0, 0], d1 - s1 * 3 in [0, 2]
func.func @all_to_all(%a: tensor<4x6xf32>) -> tensor<8x3xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x6xf32>) -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}

// -----

// XLA's tuple all_to_all (no split_dimension, one operand per device, as XLA's CPU
// compiler emits it): on the r-th device, result i is operand r of device i, so each
// result reads every operand at its own index, from device i.
// O2I-LABEL: output-to-input indexing of result #0 (mhlo.all_to_all):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: replica id:
// O2I-NEXT: (d0) -> (0), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: replica id:
// O2I-NEXT: (d0) -> (0), domain: d0 in [0, 3]
// O2I-NEXT: output-to-input indexing of result #1 (mhlo.all_to_all):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: replica id:
// O2I-NEXT: (d0) -> (1), domain: d0 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (mhlo.all_to_all):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
func.func @tuple_all_to_all(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = "mhlo.all_to_all"(%a, %b) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// collective_permute: the same element, from the source device.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.collective_permute):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.collective_permute):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
func.func @collective_permute(%a: tensor<4xf32>) -> tensor<4xf32> {
  %p = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %p : tensor<4xf32>
}

// -----

// Convolution with lhs_dilation: input taps on holes are excluded by the mod constraint,
// in the input map and in the kernel map (a kernel tap on a hole reads nothing).
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.convolution):
// O2I-NEXT: operand id = 0 (d0, d1, d2)[s0] -> (0, 0, (d2 + s0) floordiv 2), domain: d0 in [0, 0], d1 in [0, 0], d2 in [0, 3], s0 in [0, 1], (d2 + s0) mod 2 in [0, 0]
// O2I-NEXT: operand id = 1 (d0, d1, d2)[s0] -> (0, 0, s0), domain: d0 in [0, 0], d1 in [0, 0], d2 in [0, 3], s0 in [0, 1], (d2 + s0) mod 2 in [0, 0]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.convolution):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1, s2, s3] -> (0, 0, s2), domain: d0 in [0, 0], d1 in [0, 0], d2 in [0, 2], s0 in [0, 0], s1 in [0, 0], s2 in [0, 3], s3 in [0, 1], (s2 + s3) mod 2 in [0, 0], -d2 + (s2 + s3) floordiv 2 in [0, 0]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.convolution):
// I2O-NEXT: operand id = 0 (d0, d1, d2)[s0, s1, s2, s3] -> (0, 0, s2), domain: d0 in [0, 0], d1 in [0, 0], d2 in [0, 1], s0 in [0, 0], s1 in [0, 0], s2 in [0, 3], s3 in [0, 1], (s2 + s3) mod 2 in [0, 0], -d2 + s3 in [0, 0]
func.func @conv_lhs_dilation(%x: tensor<1x1x3xf32>, %k: tensor<1x1x2xf32>) -> tensor<1x1x4xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[0, 0]], lhs_dilate = [2], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x3xf32>, tensor<1x1x2xf32>) -> tensor<1x1x4xf32>
  return %0 : tensor<1x1x4xf32>
}

