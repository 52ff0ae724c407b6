// RUN: %hlo-opt %s -split-input-file -verify-diagnostics --hlo-simplify-indexing-maps='report=true'
// RUN: %hlo-opt %s -split-input-file --verify-diagnostics=only-expected --hlo-simplify-indexing-maps='report=true'

// Locators: on the line itself, @above, @below, @+N, @-N, and the -re variant.
func.func @locators(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x {hlo_indexing.a = {map = affine_map<(d0) -> (d0 mod 4)>, dims = array<i64: 0, 3>}} : tensor<4xf32> // expected-remark {{simplified 'hlo_indexing.a'}}
  %1 = stablehlo.negate %0 {hlo_indexing.b = {map = affine_map<(d0) -> (d0 mod 8)>, dims = array<i64: 0, 3>}} : tensor<4xf32>
  // expected-remark@above {{simplified 'hlo_indexing.b'}}
  // expected-remark@below {{simplified 'hlo_indexing.c'}}
  %2 = stablehlo.negate %1 {hlo_indexing.c = {map = affine_map<(d0) -> (d0 floordiv 8)>, dims = array<i64: 0, 3>}} : tensor<4xf32>
  // expected-remark@+2 {{simplified 'hlo_indexing.d'}}
  // a comment between
  %3 = stablehlo.negate %2 {hlo_indexing.d = {map = affine_map<(d0) -> (d0 mod 16)>, dims = array<i64: 0, 3>}} : tensor<4xf32>
  %4 = stablehlo.negate %3 {hlo_indexing.e = {map = affine_map<(d0) -> (d0 mod 32)>, dims = array<i64: 0, 3>}} : tensor<4xf32>
  // expected-remark-re@-1 {{simplified 'hlo_indexing.{{[a-e]}}' to (d0) -> (d0), domain: d0 in [0, {{[0-9]+}}]}}
  return %4 : tensor<4xf32>
}

// -----

// Parse errors are diagnostics too; the chunk fails but verification succeeds.
func.func @parse_error() {
  // expected-error@+1 {{custom op 'retur' is unknown}}
  retur
}

// -----

// Notes attached to an error (here by the parser) are expected-note; the verifier's
// "see current operation" note is off while verifying, as in mlir-opt.
// expected-note@+1 {{see existing symbol definition here}}
func.func @twice() {
  return
}
// expected-error-re@+1 {{redefinition of symbol named '{{[a-z]+}}'}}
func.func @twice() {
  return
}

// -----

// A diagnostic without a file position matches @unknown.
func.func @nowhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@unknown {{'dims' must hold [lo, hi] pairs}}
  %0 = stablehlo.negate %x {hlo_indexing.bad = {map = affine_map<(d0) -> (d0)>, dims = array<i64: 0>}} : tensor<4xf32> loc(unknown)
  return %0 : tensor<4xf32>
}
