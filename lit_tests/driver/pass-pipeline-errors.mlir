// RUN: not %hlo-opt %s --pass-pipeline='builtin.module(cse, no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: MLIR Textual PassPipeline Parser:1:21: error: 'no-such-pass' does not refer to a registered pass or pass pipeline

// RUN: not %hlo-opt %s --pass-pipeline='cse' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR: error: expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'

// RUN: not %hlo-opt %s --pass-pipeline='builtin.module(cse)' --canonicalize 2>&1 | FileCheck %s --check-prefix=MIXED
// MIXED: <command line>:1:{{[0-9]+}}: error: '-pass-pipeline' option can't be used with individual pass options

// RUN: not %hlo-opt %s --pass-pipeline='builtin.module(hlo-simplify-indexing-maps{colour=red})' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: MLIR Textual PassPipeline Parser:1:43: error: no such option 'colour' for pass 'hlo-simplify-indexing-maps'; options are: func, report

// RUN: not %hlo-opt %s --hlo-simplify-indexing-maps='report=maybe' 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: <command line>:1:{{[0-9]+}}: error: option 'report' of pass 'hlo-simplify-indexing-maps' expects true or false, got 'maybe'

// Options are separated by spaces, as MLIR's: a comma before another option's name is a
// mistake, not part of the value (`tile-sizes=f:16,32` keeps its commas).
// RUN: not %hlo-opt %s --hlo-print-tilings=device=h100,top=1 2>&1 | FileCheck %s --check-prefix=COMMA
// COMMA: <command line>:1:{{[0-9]+}}: error: option 'device' of pass 'hlo-print-tilings' is given 'h100,top=1', which holds option 'top' after a comma: options are separated by spaces ('device=h100 top=1')

// RUN: not %hlo-opt %s --pass-pipeline='builtin.module(func.func(hlo-simplify-indexing-maps))' 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: MLIR Textual PassPipeline Parser:1:26: error: pass 'hlo-simplify-indexing-maps' is a Python pass of hlo-indexing: it runs on 'builtin.module' and cannot be nested under 'func.func'

// RUN: not %hlo-opt %s --pass-pipeline='builtin.module(canonicalize{max-iterations=x})' 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION
// UPSTREAM-OPTION: MLIR Textual PassPipeline Parser:1:16: error: {{.*}}failed to add `canonicalize` with options `max-iterations=x`

// RUN: not %hlo-opt %s --pass-pipeline='builtin.module(cse,)' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: MLIR Textual PassPipeline Parser:1:20: error: expected pass name after ','

// RUN: not %hlo-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: <command line>:1:{{[0-9]+}}: error: Unknown command line argument '--no-such-flag'.  Try: 'hlo-indexing-opt --help'
// FLAG-NOT: Traceback

func.func @f() {
  return
}
