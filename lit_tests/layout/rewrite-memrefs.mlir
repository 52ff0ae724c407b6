// RUN: %hlo-opt %s -mlir-print-local-scope --hlo-lower-tiled-layouts=rewrite-memrefs=true | FileCheck %s

// The memref argument takes the tiled layout map; the block argument follows.
// CHECK-LABEL: func.func @tiled
// CHECK-SAME: (%[[A:.*]]: memref<3x5xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 2, d0 mod 2, d1 mod 2)>>
// CHECK-SAME: hlo_indexing.physical_shape = array<i64: 2, 3, 2, 2>
// CHECK: memref.load %[[A]][%{{.*}}, %{{.*}}] : memref<3x5xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 2, d0 mod 2, d1 mod 2)>>
func.func @tiled(%a: memref<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}, %i: index, %j: index) -> f32 {
  %0 = memref.load %a[%i, %j] : memref<3x5xf32>
  return %0 : f32
}
