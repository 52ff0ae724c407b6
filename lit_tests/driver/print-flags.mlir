// RUN: %hlo-opt %s | FileCheck %s --check-prefix=DEFAULT
// RUN: %hlo-opt %s -mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL
// RUN: %hlo-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: %hlo-opt %s -mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUG

// DEFAULT: #[[MAP:.+]] = affine_map<(d0) -> (d0 + 1)>
// DEFAULT-LABEL: func.func @f
// DEFAULT: hlo_indexing.m = #[[MAP]]
// LOCAL-NOT: #map
// LOCAL: hlo_indexing.m = affine_map<(d0) -> (d0 + 1)>
// GENERIC: "func.func"() <{function_type = () -> (), sym_name = "f"}>
// GENERIC: "func.return"() : () -> ()
// DEBUG: return loc(#[[LOC:loc[0-9]*]])
// DEBUG: #[[LOC]] = loc("{{.*}}print-flags.mlir":[[# @LINE + 2]]:3)
func.func @f() attributes {hlo_indexing.m = affine_map<(d0) -> (d0 + 1)>} {
  return
}
