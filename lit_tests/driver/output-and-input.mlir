// -o is written on success only, atomically; - (or no file) reads stdin.
// RUN: %hlo-opt %s -o %t.mlir && FileCheck %s < %t.mlir
// RUN: %hlo-opt - < %s | FileCheck %s
// RUN: %hlo-opt < %s | FileCheck %s
// RUN: %PYTHON -c "print('func.func @bad() {')" > %t.bad.mlir
// RUN: not %hlo-opt %t.bad.mlir -o %t.never 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %PYTHON -c "import os, sys; sys.exit(os.path.exists(sys.argv[1]))" %t.never
// RUN: not %hlo-opt - < %t.bad.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not %hlo-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not %hlo-opt %s - < %s 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not %hlo-opt %s -o 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not %hlo-opt %s --mlir-timing=maybe 2>&1 | FileCheck %s --check-prefix=BOOL

// CHECK-LABEL: func.func @io
// BAD: .bad.mlir:1:19: error: expected operation name in quotes
// STDIN: <stdin>:1:19: error: expected operation name in quotes
// MISSING: <command line>:1:{{[0-9]+}}: error: could not open input file '{{.*}}does-not-exist.mlir': No such file or directory
// TWO: <command line>:1:{{[0-9]+}}: error: '-' (stdin) cannot be combined with other inputs
// NOVALUE: <command line>:1:{{[0-9]+}}: error: option '-o' requires a value
// BOOL: <command line>:1:{{[0-9]+}}: error: 'maybe' is invalid value for boolean argument! Try 0 or 1
func.func @io() {
  return
}
