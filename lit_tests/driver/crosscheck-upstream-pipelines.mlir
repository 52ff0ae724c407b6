// REQUIRES: crosscheck
// The same RUN lines through hlo-indexing-opt and the C++ iree-opt (an mlir-opt) give
// byte-identical output for upstream-only pipelines and printing flags. (Not `inline`:
// jaxlib registers no inliner interface for `func`, so it leaves func.call alone.)
// RUN: %hlo-opt %s -split-input-file --pass-pipeline='builtin.module(canonicalize, cse)' > %t.1.ours
// RUN: iree-opt %s -split-input-file --pass-pipeline='builtin.module(canonicalize, cse)' > %t.1.theirs
// RUN: diff %t.1.ours %t.1.theirs
// RUN: %hlo-opt %s -split-input-file --symbol-dce --canonicalize > %t.2.ours
// RUN: iree-opt %s -split-input-file --symbol-dce --canonicalize > %t.2.theirs
// RUN: diff %t.2.ours %t.2.theirs
// RUN: %hlo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=1}, cse), loop-invariant-code-motion)' -mlir-print-op-generic > %t.3.ours
// RUN: iree-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=1}, cse), loop-invariant-code-motion)' -mlir-print-op-generic > %t.3.theirs
// RUN: diff %t.3.ours %t.3.theirs
// RUN: %hlo-opt %s -split-input-file --cse -mlir-print-debuginfo -mlir-print-local-scope --output-split-marker='// ==== next' > %t.4.ours
// RUN: iree-opt %s -split-input-file --cse -mlir-print-debuginfo -mlir-print-local-scope --output-split-marker='// ==== next' > %t.4.theirs
// RUN: diff %t.4.ours %t.4.theirs

func.func @fold(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %x, %c0 : i32
  %1 = arith.muli %0, %c1 : i32
  %2 = arith.addi %1, %1 : i32
  %3 = arith.addi %1, %1 : i32
  %4 = arith.subi %2, %3 : i32
  return %4 : i32
}

// -----

func.func private @callee(%x: i32) -> i32 {
  %c2 = arith.constant 2 : i32
  %0 = arith.muli %x, %c2 : i32
  return %0 : i32
}
func.func private @unused(%x: i32) -> i32 {
  return %x : i32
}
func.func @caller(%x: i32) -> i32 {
  %0 = call @callee(%x) : (i32) -> i32
  %1 = call @callee(%0) : (i32) -> i32
  return %1 : i32
}

// -----

func.func @loop(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
    %sq = arith.mulf %x, %x : f32
    %next = arith.addf %acc, %sq : f32
    scf.yield %next : f32
  }
  return %r : f32
}
