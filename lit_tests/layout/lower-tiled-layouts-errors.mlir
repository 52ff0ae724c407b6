// RUN: %hlo-opt %s -split-input-file -verify-diagnostics --hlo-lower-tiled-layouts

// expected-error @+1 {{argument #0: '*' cannot be the last (most minor) entry of a tile at column 10, found '*'}}
func.func @star_last(%a: tensor<3x5xf32> {hlo_indexing.layout = "{1,0:T(2,*)}"}) {
  return
}

// -----

// expected-error @+1 {{argument #0: layout '{0}' is for rank 1, the value has rank 2}}
func.func @rank_mismatch(%a: tensor<3x5xf32> {hlo_indexing.layout = "{0}"}) {
  return
}

// -----

// expected-error @+1 {{argument #0: a tiled layout needs a statically shaped tensor or memref, got tensor<?x5xf32>}}
func.func @dynamic(%a: tensor<?x5xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}) {
  return
}

// -----

// expected-error @+1 {{result #0: layout shape 'f32[4,4]{1,0}' has dims [4, 4], the value has [3, 5]}}
func.func @shape_mismatch(%a: tensor<3x5xf32>) -> (tensor<3x5xf32> {hlo_indexing.layout = "f32[4,4]{1,0}"}) {
  return %a : tensor<3x5xf32>
}

// -----

func.func @two_results(%a: tensor<4xf32>) {
  // expected-error @+1 {{'hlo_indexing.layout' on 'stablehlo.sort', which has 2 results, must be an array of one layout per result}}
  %0:2 = "stablehlo.sort"(%a, %a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, hlo_indexing.layout = "{0}"} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @layouts_per_result_miscounted(%a: tensor<4xf32>) {
  // expected-error @+1 {{'hlo_indexing.layout' has 1 layouts, 'stablehlo.sort' has 2 results}}
  %0:2 = "stablehlo.sort"(%a, %a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, hlo_indexing.layout = ["{0}"]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @a_bad_layout_among_several(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #1: layout '{1,0}' is for rank 2, the value has rank 1}}
  %0:2 = "stablehlo.sort"(%a, %a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, hlo_indexing.layout = ["{0}", "{1,0}"]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// expected-error @+1 {{argument #0: padded size 18446744090889420804 of layout {1,0:T(3,3)} overflows int64}}
func.func @overflow(%a: tensor<4294967296x4294967296xf32> {hlo_indexing.layout = "{1,0:T(3,3)}"}) {
  return
}
