// RUN: %hlo-opt %s -mlir-print-local-scope --pass-pipeline='builtin.module(canonicalize, hlo-simplify-indexing-maps{report=false}, func.func(cse))' | FileCheck %s
// RUN: %hlo-opt %s -mlir-print-local-scope --canonicalize --hlo-simplify-indexing-maps='report=false' | FileCheck %s
// RUN: %hlo-opt %s --pass-pipeline='builtin.module(hlo-simplify-indexing-maps, cse)' --dump-pass-pipeline 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP

// Upstream and hlo-indexing passes mix in one pipeline, in both spellings.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: arith.addi
// CHECK: hlo_indexing.m = {dims = array<i64: 0, 3>, map = affine_map<(d0) -> (d0)>
// CHECK: return %arg0

// DUMP: Pass Manager with 2 passes:
// DUMP-NEXT: builtin.module(hlo-simplify-indexing-maps,cse)
func.func @mixed(%x: i32) -> i32 attributes {hlo_indexing.m = {map = affine_map<(d0) -> (d0 mod 4)>, dims = array<i64: 0, 3>}} {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %x, %c0 : i32
  return %0 : i32
}
