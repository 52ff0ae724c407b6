// IR dumps (--mlir-print-ir-before/after[-all]) with --mlir-print-debuginfo locate the IR
// in the input file, like the output does (ir.Module.parse names its buffer "-"); the
// implicit module of a later -split-input-file chunk is located just after its marker.
// RUN: %hlo-opt %s -split-input-file --cse --mlir-print-ir-before-all --mlir-print-debuginfo 2>&1 >/dev/null | FileCheck %s --check-prefix=ALL
// RUN: %hlo-opt %s -split-input-file --hlo-attach-indexing-maps --cse --mlir-print-ir-after=hlo-attach-indexing-maps --mlir-print-debuginfo 2>&1 >/dev/null | FileCheck %s --check-prefix=SELECTED
// RUN: %hlo-opt -split-input-file --cse --mlir-print-ir-after-all --mlir-print-debuginfo < %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STDIN
// RUN: %hlo-opt %s -split-input-file --cse --mlir-print-ir-after-all --mlir-print-debuginfo 2>&1 | not grep -F 'loc("-"'

// ALL-LABEL: IR Dump Before CSEPass: cse
// ALL: func.func @first(%arg0: tensor<4xf32> loc("{{.*}}print-ir-debuginfo.mlir":[[# @LINE + 7]]:18))
// ALL: #loc = loc("{{.*}}print-ir-debuginfo.mlir":0:0)
// ALL: = loc("{{.*}}print-ir-debuginfo.mlir":[[# @LINE + 6]]:8)
// SELECTED-LABEL: IR Dump After AttachIndexingMaps: hlo-attach-indexing-maps
// SELECTED: = loc("{{.*}}print-ir-debuginfo.mlir":[[# @LINE + 4]]:8)
// STDIN-LABEL: IR Dump After CSEPass: cse
// STDIN: = loc("<stdin>":[[# @LINE + 2]]:8)
func.func @first(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ALL-LABEL: IR Dump Before CSEPass: cse
// ALL: func.func @second
// ALL: #loc = loc("{{.*}}print-ir-debuginfo.mlir":[[# @LINE - 4]]:9)
// SELECTED-LABEL: IR Dump After AttachIndexingMaps: hlo-attach-indexing-maps
// SELECTED: #loc = loc("{{.*}}print-ir-debuginfo.mlir":[[# @LINE - 6]]:9)
// STDIN-LABEL: IR Dump After CSEPass: cse
// STDIN: #loc = loc("<stdin>":[[# @LINE - 8]]:9)
func.func @second() {
  return
}
