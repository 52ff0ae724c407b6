// REQUIRES: crosscheck
// RUN: %hlo-opt %s --hlo-lower-tiled-layouts=rewrite-memrefs=true | iree-opt --normalize-memrefs | FileCheck %s

// Upstream C++ -normalize-memrefs turns the tiled layout map into the physical shape the
// pass states in hlo_indexing.physical_shape.
// CHECK-LABEL: func.func @tiled
// CHECK-SAME: memref<2x3x2x2xf32>
// CHECK-SAME: hlo_indexing.physical_shape = array<i64: 2, 3, 2, 2>
func.func @tiled(%a: memref<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}, %i: index, %j: index) -> f32 {
  %0 = memref.load %a[%i, %j] : memref<3x5xf32>
  return %0 : f32
}
