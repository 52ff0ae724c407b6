// RUN: not %hlo-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not %hlo-opt %s -split-input-file -o %t.out
// RUN: %PYTHON -c "import os, sys; sys.exit(os.path.exists(sys.argv[1]))" %t.out

// A failing chunk does not stop the others; the error keeps the line number of the
// whole file; stdout shows the chunks that succeeded; -o is not written.

// CHECK: split-input-file-errors.mlir:[[# @LINE + 2]]:3: error: custom op 'retur' is unknown
func.func @broken() {
  retur
}

// -----

// CHECK: func.func @fine
func.func @fine() {
  return
}
