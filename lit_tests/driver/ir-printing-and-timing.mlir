// RUN: %hlo-opt %s --pass-pipeline='builtin.module(hlo-simplify-indexing-maps, canonicalize)' --mlir-print-ir-before-all 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: %hlo-opt %s --hlo-simplify-indexing-maps --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: %hlo-opt %s --hlo-simplify-indexing-maps --cse --mlir-print-ir-after-all --mlir-print-ir-after-change 2>&1 >/dev/null | FileCheck %s --check-prefix=CHANGE
// RUN: %hlo-opt %s --hlo-simplify-indexing-maps --canonicalize --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING

// BEFORE: // -----// IR Dump Before SimplifyIndexingMaps: hlo-simplify-indexing-maps //----- //
// BEFORE: affine_map<(d0) -> (d0 mod 4)>
// BEFORE: // -----// IR Dump Before CanonicalizerPass: canonicalize
// AFTER: // -----// IR Dump After SimplifyIndexingMaps: hlo-simplify-indexing-maps //----- //
// AFTER: affine_map<(d0) -> (d0)>
// CHANGE: IR Dump After SimplifyIndexingMaps
// CHANGE-NOT: IR Dump After CSEPass
// TIMING: Execution time report
// TIMING: SimplifyIndexingMaps
// TIMING: CanonicalizerPass
// TIMING: Total
func.func @f() attributes {hlo_indexing.m = {map = affine_map<(d0) -> (d0 mod 4)>, dims = array<i64: 0, 3>}} {
  return
}
