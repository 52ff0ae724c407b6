// REQUIRES: crosscheck
// The C++ iree-opt (an mlir-opt) reads our output, and upstream-only pipelines give the
// same text through both drivers.
// RUN: %hlo-opt %s --hlo-simplify-indexing-maps -mlir-print-local-scope | iree-opt -mlir-print-local-scope | FileCheck %s
// RUN: %hlo-opt %s --pass-pipeline='builtin.module(canonicalize, cse)' -mlir-print-local-scope > %t.ours
// RUN: iree-opt %s --pass-pipeline='builtin.module(canonicalize, cse)' -mlir-print-local-scope > %t.theirs
// RUN: diff %t.ours %t.theirs

// CHECK-LABEL: func.func @f
// CHECK-SAME: hlo_indexing.m = {dims = array<i64: 0, 3>, map = affine_map<(d0) -> (d0)>, text = "(d0) -> (d0), domain: d0 in [0, 3]"}
func.func @f(%x: i32) -> i32 attributes {hlo_indexing.m = {map = affine_map<(d0) -> (d0 mod 4)>, dims = array<i64: 0, 3>}} {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %x, %c0 : i32
  return %0 : i32
}
