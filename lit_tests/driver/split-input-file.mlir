// RUN: %hlo-opt %s -split-input-file | FileCheck %s
// RUN: %hlo-opt %s -split-input-file --output-split-marker='// ==== next' | FileCheck %s --check-prefix=MARKER
// RUN: %hlo-opt %s | FileCheck %s --check-prefix=WHOLE
// RUN: %hlo-opt %s --split-input-file='// ---' | FileCheck %s --check-prefix=CUSTOM
// RUN: %hlo-opt %s -split-input-file -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=DEBUG

// CHECK-LABEL: func.func @first
// CHECK-NEXT: return
// CHECK: // -----
// CHECK-LABEL: func.func @second
// MARKER: func.func @first
// MARKER: // ==== next
// MARKER: func.func @second
// WHOLE: func.func @first
// WHOLE-NOT: // -----
// WHOLE: func.func @second
// The custom marker '// ---' splits before @first only ('// -----' is then a comment).
// CUSTOM: module {
// CUSTOM-NEXT: }
// CUSTOM-EMPTY:
// CUSTOM-NEXT: // -----
// CUSTOM-NEXT: module {
// CUSTOM-NEXT: func.func @first
// CUSTOM: func.func @second
// The implicit module of a later chunk is located just after its marker, as in mlir-opt.
// DEBUG: } loc("{{.*}}split-input-file.mlir":0:0)
// DEBUG: } loc("{{.*}}split-input-file.mlir":[[# @LINE + 6]]:9)
// ---
func.func @first() {
  return
}

// -----

func.func @second() {
  return
}
