// Control flow and call-like ops: while (pass-through, counted, data-dependent), case
// with captured values, func.call and stablehlo.composite, both directions.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// A carry the body returns unchanged is its init (identity), whatever the trip count;
// the other carry reads both inits element by element (the condition reads nothing,
// but the trip count is not a constant: noted).
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.while):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 1 no dependence
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.while):
// O2I-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: note: the trip count depends on data: every iteration count is covered, and the carries the condition reads are read whole
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.while):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: note: the trip count depends on data: every iteration count is covered, and the carries the condition reads are read whole
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.while):
// I2O-NEXT: operand id = 0 no dependence
// I2O-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: note: the trip count depends on data: every iteration count is covered, and the carries the condition reads are read whole
func.func @while_pass_through(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w:2 = stablehlo.while(%x = %a, %y = %b) : tensor<4xf32>, tensor<4xf32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %s = stablehlo.add %x, %y : tensor<4xf32>
    stablehlo.return %x, %s : tensor<4xf32>, tensor<4xf32>
  }
  return %w#0, %w#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A counted loop (induction carry 0..3, as JAX lowers scan): the stacked output row d0,
// written by dynamic_update_slice at iteration d0, reads row d0 of the input sliced at
// d0 (exactly, not the whole input), the induction init and its own init.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.while):
// O2I-NEXT: operand id = 0 () -> ()
// O2I-NEXT: operand id = 1 no dependence
// O2I-NEXT: operand id = 2 no dependence
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.while):
// O2I-NEXT: operand id = 0 no dependence
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// O2I-NEXT: operand id = 2 no dependence
// O2I-NEXT: output-to-input indexing of result #2 (stablehlo.while):
// O2I-NEXT: operand id = 0 (d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 2]
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// O2I-NEXT: operand id = 2 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.while):
// I2O-NEXT: operand id = 0 () -> ()
// I2O-NEXT: operand id = 1 no dependence
// I2O-NEXT: operand id = 2 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 3], s1 in [0, 2]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.while):
// I2O-NEXT: operand id = 0 no dependence
// I2O-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// I2O-NEXT: operand id = 2 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// I2O-NEXT: input-to-output indexing of operand #2 (stablehlo.while):
// I2O-NEXT: operand id = 0 no dependence
// I2O-NEXT: operand id = 1 no dependence
// I2O-NEXT: operand id = 2 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
func.func @while_counted_stacked(%xs: tensor<4x3xf32>, %buf: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %w:3 = stablehlo.while(%i = %c0, %x = %xs, %ys = %buf) : tensor<i32>, tensor<4x3xf32>, tensor<4x3xf32>
   cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %e = stablehlo.exponential %row : tensor<1x3xf32>
    %u = stablehlo.dynamic_update_slice %ys, %e, %i, %z : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %x, %u : tensor<i32>, tensor<4x3xf32>, tensor<4x3xf32>
  }
  return %w#2 : tensor<4x3xf32>
}

// -----

// A counted loop's accumulator reads its init and row s0 of the input at every
// iteration s0 (every row, column d0).
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.while):
// O2I-NEXT: operand id = 0 () -> ()
// O2I-NEXT: operand id = 1 no dependence
// O2I-NEXT: operand id = 2 no dependence
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.while):
// O2I-NEXT: operand id = 0 no dependence
// O2I-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// O2I-NEXT: operand id = 2 no dependence
// O2I-NEXT: output-to-input indexing of result #2 (stablehlo.while):
// O2I-NEXT: operand id = 0 (d0) -> (), domain: d0 in [0, 2]
// O2I-NEXT: operand id = 1 (d0)[s0] -> (s0, d0), domain: d0 in [0, 2], s0 in [0, 3]
// O2I-NEXT: operand id = 2 (d0) -> (d0), domain: d0 in [0, 2]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.while):
// I2O-NEXT: operand id = 0 () -> ()
// I2O-NEXT: operand id = 1 no dependence
// I2O-NEXT: operand id = 2 ()[s0] -> (s0), domain: s0 in [0, 2]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.while):
// I2O-NEXT: operand id = 0 no dependence
// I2O-NEXT: operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]
// I2O-NEXT: operand id = 2 (d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 2]
// I2O-NEXT: input-to-output indexing of operand #2 (stablehlo.while):
// I2O-NEXT: operand id = 0 no dependence
// I2O-NEXT: operand id = 1 no dependence
// I2O-NEXT: operand id = 2 (d0) -> (d0), domain: d0 in [0, 2]
func.func @while_counted_carry(%xs: tensor<4x3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %w:3 = stablehlo.while(%i = %c0, %x = %xs, %acc = %c) : tensor<i32>, tensor<4x3xf32>, tensor<3xf32>
   cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %r = stablehlo.reshape %row : (tensor<1x3xf32>) -> tensor<3xf32>
    %s = stablehlo.add %acc, %r : tensor<3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %x, %s : tensor<i32>, tensor<4x3xf32>, tensor<3xf32>
  }
  return %w#2 : tensor<3xf32>
}

// -----

// A loop whose trip count depends on data: the closure of what the body reads, plus
// what the condition reads (the limit) at every element: sound, not unknown.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.while):
// O2I-NEXT: operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 2], s0 in [0, 2]
// O2I-NEXT: operand id = 1 (d0) -> (), domain: d0 in [0, 2]
// O2I-NEXT: note: the trip count depends on data: every iteration count is covered, and the carries the condition reads are read whole
// O2I-NEXT: output-to-input indexing of result #1 (stablehlo.while):
// O2I-NEXT: operand id = 0 no dependence
// O2I-NEXT: operand id = 1 () -> ()
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.while):
// I2O-NEXT: operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 2], s0 in [0, 2]
// I2O-NEXT: operand id = 1 no dependence
// I2O-NEXT: note: the trip count depends on data: every iteration count is covered, and the carries the condition reads are read whole
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.while):
// I2O-NEXT: operand id = 0 ()[s0] -> (s0), domain: s0 in [0, 2]
// I2O-NEXT: operand id = 1 () -> ()
// I2O-NEXT: note: the trip count depends on data: every iteration count is covered, and the carries the condition reads are read whole
func.func @while_data_dependent(%a: tensor<3xf32>, %limit: tensor<f32>) -> tensor<3xf32> {
  %w:2 = stablehlo.while(%x = %a, %l = %limit) : tensor<3xf32>, tensor<f32>
   cond {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %sum = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %p = stablehlo.compare LT, %sum, %l, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %r = stablehlo.reverse %x, dims = [0] : tensor<3xf32>
    %s = stablehlo.add %x, %r : tensor<3xf32>
    stablehlo.return %s, %l : tensor<3xf32>, tensor<f32>
  }
  return %w#0 : tensor<3xf32>
}

// -----

// case: the branch index, then the values the branches capture (operands 1 and 2 are
// %a and %b): the union of the branches' maps.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.case):
// O2I-NEXT: operand id = 0 (d0) -> (), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 1 (d0) -> (-d0 + 3), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
// O2I-NEXT: operand id = 2 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.case):
// I2O-NEXT: operand id = 0 ()[s0] -> (s0), domain: s0 in [0, 3]
// I2O-NEXT: input-to-output indexing of operand #1 (stablehlo.case):
// I2O-NEXT: operand id = 0 (d0) -> (-d0 + 3), domain: d0 in [0, 3]
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
// I2O-NEXT: input-to-output indexing of operand #2 (stablehlo.case):
// I2O-NEXT: operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]
func.func @case_captures(%p: tensor<i32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %k = "stablehlo.case"(%p) ({
    %r = stablehlo.reverse %a, dims = [0] : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }, {
    %s = stablehlo.add %a, %b : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %k : tensor<4xf32>
}

// -----

// func.call: the callee's fused maps, in both directions.
// O2I-LABEL: output-to-input indexing of result #0 (func.call):
// O2I-NEXT: operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
// I2O-LABEL: input-to-output indexing of operand #0 (func.call):
// I2O-NEXT: operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 1], d1 in [0, 2]
func.func @call(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = func.call @t(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func private @t(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// stablehlo.composite: the decomposition's fused maps.
// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.composite):
// O2I-NEXT: operand id = 0 (d0) -> (d0 * 2 + 1), domain: d0 in [0, 1]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.composite):
// I2O-NEXT: operand id = 0 (d0) -> ((d0 - 1) floordiv 2), domain: d0 in [1, 3], (d0 + 1) mod 2 in [0, 0]
func.func @composite(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.composite "my.slice" %a {decomposition = @slice_odd} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @slice_odd(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %x [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

