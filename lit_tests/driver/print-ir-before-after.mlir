// --mlir-print-ir-before=<passes> / --mlir-print-ir-after=<passes>: MLIR's dumps of the
// named passes only (pass arguments, comma-separated), ours and upstream, nested too.
// RUN: %hlo-opt %s --pass-pipeline='builtin.module(hlo-attach-indexing-maps, canonicalize, func.func(cse))' --mlir-print-ir-after=hlo-attach-indexing-maps 2>&1 >/dev/null | FileCheck %s --check-prefix=OURS
// RUN: %hlo-opt %s --pass-pipeline='builtin.module(hlo-attach-indexing-maps, canonicalize, func.func(cse))' --mlir-print-ir-before=canonicalize,cse 2>&1 >/dev/null | FileCheck %s --check-prefix=UPSTREAM
// RUN: %hlo-opt %s --hlo-attach-indexing-maps --canonicalize --mlir-print-ir-before=canonicalize --mlir-print-ir-after=hlo-attach-indexing-maps 2>&1 >/dev/null | FileCheck %s --check-prefix=BOTH
// RUN: %hlo-opt %s --hlo-attach-indexing-maps --cse --mlir-print-ir-after-all --mlir-print-ir-after=cse 2>&1 >/dev/null | FileCheck %s --check-prefix=ALL
// RUN: %hlo-opt %s --cse --mlir-print-ir-after=cse 2>/dev/null | FileCheck %s --check-prefix=STDOUT
// RUN: %hlo-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-after=cse --mlir-print-ir-module-scope 2>&1 >/dev/null | FileCheck %s --check-prefix=SCOPE
// RUN: not %hlo-opt %s --cse --mlir-print-ir-after=cse,no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// OURS: // -----// IR Dump After AttachIndexingMaps: hlo-attach-indexing-maps //----- //
// OURS-NEXT: #map = affine_map<(d0) -> (d0)>
// OURS: stablehlo.add {{.*}}hlo_indexing.output_to_input
// OURS-NOT: IR Dump

// UPSTREAM-NOT: IR Dump {{.*}}hlo-attach-indexing-maps
// UPSTREAM: // -----// IR Dump Before CanonicalizerPass: canonicalize{
// UPSTREAM: hlo_indexing.output_to_input
// UPSTREAM: // -----// IR Dump Before CSEPass: cse //----- //
// UPSTREAM-NEXT: func.func @add
// UPSTREAM-NOT: IR Dump

// BOTH: IR Dump After AttachIndexingMaps: hlo-attach-indexing-maps
// BOTH-NOT: IR Dump After
// BOTH: IR Dump Before CanonicalizerPass: canonicalize
// BOTH-NOT: IR Dump

// ALL: IR Dump After AttachIndexingMaps: hlo-attach-indexing-maps
// ALL: IR Dump After CSEPass: cse

// STDOUT: func.func @add
// STDOUT-NOT: IR Dump

// A nested pass with --mlir-print-ir-module-scope prints the whole module (MLIR needs
// multithreading off for it: the driver does that rather than abort).
// SCOPE: // -----// IR Dump After CSEPass: cse ('func.func' operation: @add) //----- //
// SCOPE-NEXT: module {
// SCOPE-NEXT: func.func @add

// UNKNOWN: <command line>:1:{{[0-9]+}}: error: for the --mlir-print-ir-after option: Cannot find option named 'no-such-pass'!
func.func @add(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
