// The fused-map passes' old names (before they paired up with the per-op passes) are
// aliases: they run the renamed pass, a note says so, and --list-passes lists them.
// RUN: %hlo-opt %s --hlo-fuse-indexing-maps --mlir-print-local-scope 2>&1 | FileCheck %s --check-prefix=ATTACH
// RUN: %hlo-opt %s --pass-pipeline='builtin.module(hlo-print-fusion-indexing{max-maps=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: %hlo-opt --list-passes | FileCheck %s --check-prefix=LIST

// ATTACH: note: 'hlo-fuse-indexing-maps' is an alias of 'hlo-attach-fused-indexing-maps' (its old name); use 'hlo-attach-fused-indexing-maps'
// ATTACH-LABEL: func.func @negate
// ATTACH-SAME: %arg0: tensor<8xf32> {hlo_indexing.fused_maps = {{\[\[}}{dims = array<i64: 0, 7>, map = affine_map<(d0) -> (d0)>

// PRINT: note: 'hlo-print-fusion-indexing' is an alias of 'hlo-print-fused-indexing-maps' (its old name); use 'hlo-print-fused-indexing-maps'
// PRINT: remark: @negate result 0 -> arg 0: (d0) -> (d0), domain: d0 in [0, 7]

// LIST: --hlo-fuse-indexing-maps {{ *}}- alias of --hlo-attach-fused-indexing-maps (its old name)
// LIST: --hlo-print-fusion-indexing {{ *}}- alias of --hlo-print-fused-indexing-maps (its old name)
func.func @negate(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
