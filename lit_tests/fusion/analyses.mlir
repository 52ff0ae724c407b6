// Operand utilization and coalescing hints (hlo-print-fused-indexing-maps{analyses=true})
// and their attributes (hlo-attach-fused-indexing-maps{analyses=true}).
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-fused-indexing-maps{analyses=true})' 2>&1 | FileCheck %s
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-print-fused-indexing-maps{analyses=true max-points=0})' 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: %hlo-opt %s --split-input-file --pass-pipeline='builtin.module(hlo-attach-fused-indexing-maps{analyses=true})' --mlir-print-local-scope | FileCheck %s --check-prefix=ATTR

// Every second column: half of the argument, stride 2 along the innermost output dim.
// CHECK-LABEL: @strided arg 0: utilization = 0.5 (exact, enumeration)
// CHECK:       @strided arg 0: coalesced = false (symbolic)
// BOUND-LABEL: @strided arg 0: utilization <= 0.5 (bound, hull)
// ATTR-LABEL:  func.func @strided
// ATTR-SAME:   hlo_indexing.coalesced = false
// ATTR-SAME:   hlo_indexing.utilization = 5.000000e-01 : f64, hlo_indexing.utilization_exact = true
func.func @strided(%x: tensor<16x8xf32>) -> tensor<16x4xf32> {
  %0 = stablehlo.slice %x [0:16, 0:8:2] : (tensor<16x8xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// -----

// A transpose reads the minor output dim along the major input dim: uncoalesced.
// CHECK-LABEL: @add_transpose arg 0: utilization = 1 (exact, interval)
// CHECK:       @add_transpose arg 0: coalesced = false (symbolic)
func.func @add_transpose(%p0: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %t = stablehlo.transpose %p0, dims = [1, 0] : (tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %a = stablehlo.add %p0, %t : tensor<1000x1000xf32>
  return %a : tensor<1000x1000xf32>
}

// -----

// The same transpose from a column-major argument reads consecutive memory.
// CHECK-LABEL: @column_major arg 0: utilization = 1 (exact, interval)
// CHECK:       @column_major arg 0: coalesced = true (symbolic)
func.func @column_major(%x: tensor<4x6xf32> {hlo_indexing.layout = "{0,1}"}) -> tensor<6x4xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// Row reduction: each output element reads a whole row, so a warp reads one
// contiguous block (decided symbolically: the domain has 10^8 points). Unused and
// scalar arguments.
// CHECK-LABEL: @row_reduce arg 0: utilization = 1 (exact, interval)
// CHECK:       @row_reduce arg 0: coalesced = true (symbolic)
// CHECK:       @row_reduce arg 1: utilization = 0 (exact, interval)
// CHECK:       @row_reduce arg 1: coalesced = true (unused)
// CHECK:       @row_reduce arg 2: utilization = 1 (exact, interval)
// CHECK:       @row_reduce arg 2: coalesced = true (scalar)
func.func @row_reduce(%x: tensor<100000x1024xf32>, %unused: tensor<3xf32>, %init: tensor<f32>) -> tensor<100000xf32> {
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<100000x1024xf32>, tensor<f32>) -> tensor<100000xf32>
  return %0 : tensor<100000xf32>
}

// -----

// Two results: the union of what both read.
// CHECK-LABEL: @two_results arg 0: utilization = 0.75 (exact, enumeration)
// CHECK:       @two_results arg 0: coalesced = true (symbolic)
func.func @two_results(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %0 = stablehlo.slice %x [0:4] : (tensor<8xf32>) -> tensor<4xf32>
  %1 = stablehlo.slice %x [6:8] : (tensor<8xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<4xf32>, tensor<2xf32>
}

// -----

// Unknown indexing: utilization 1 as a bound, not coalesced.
// CHECK-LABEL: @custom arg 0: utilization <= 1 (bound, unknown)
// CHECK:       @custom arg 0: coalesced = false (unknown)
func.func @custom(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @foo(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An MHLO fusion: a transposed operand and a broadcast one (stride 0 is coalesced);
// the operand layouts come from the enclosing function's arguments.
// CHECK-LABEL: mhlo.fusion arg 0: utilization = 0.5 (exact, interval)
// CHECK:       mhlo.fusion arg 0: coalesced = false (symbolic)
// CHECK:       mhlo.fusion arg 1: utilization = 1 (exact, interval)
// CHECK:       mhlo.fusion arg 1: coalesced = true (symbolic)
// CHECK:       mhlo.fusion arg 2: utilization = 1 (exact, interval)
// CHECK:       mhlo.fusion arg 2: coalesced = true (symbolic)
// ATTR-LABEL:  func.func @fusion
// ATTR:        hlo_indexing.coalesced = [false, true, true]
// ATTR-SAME:   hlo_indexing.utilization = [5.000000e-01, 1.000000e+00, 1.000000e+00]
func.func @fusion(%a: tensor<20x20xf32>, %b: tensor<20xf32>, %c: tensor<10x20xf32> {hlo_indexing.layout = "{0,1}"}) -> tensor<20x10xf32> {
  %0 = "mhlo.fusion"(%a, %b, %c) ({
  ^bb0(%p0: tensor<20x20xf32>, %p1: tensor<20xf32>, %p2: tensor<10x20xf32>):
    %s = "mhlo.slice"(%p0) <{start_indices = dense<[0, 0]> : tensor<2xi64>, limit_indices = dense<[10, 20]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}> : (tensor<20x20xf32>) -> tensor<10x20xf32>
    %1 = "mhlo.transpose"(%s) <{permutation = dense<[1, 0]> : tensor<2xi64>}> : (tensor<10x20xf32>) -> tensor<20x10xf32>
    %2 = "mhlo.broadcast_in_dim"(%p1) <{broadcast_dimensions = dense<[0]> : tensor<1xi64>}> : (tensor<20xf32>) -> tensor<20x10xf32>
    %3 = "mhlo.transpose"(%p2) <{permutation = dense<[1, 0]> : tensor<2xi64>}> : (tensor<10x20xf32>) -> tensor<20x10xf32>
    %4 = mhlo.add %1, %2 : tensor<20x10xf32>
    %5 = mhlo.add %4, %3 : tensor<20x10xf32>
    mhlo.return %5 : tensor<20x10xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<20x20xf32>, tensor<20xf32>, tensor<10x20xf32>) -> tensor<20x10xf32>
  return %0 : tensor<20x10xf32>
}
