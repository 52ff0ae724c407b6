// Random number generation reads whole operands: rng_bit_generator's bits read every
// word of the state (its new state too, noted as over-approximated); rng reads its
// bounds and every element of its shape operand.
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps 2>&1 | FileCheck %s --check-prefix=O2I
// RUN: %hlo-opt %s --split-input-file --hlo-print-indexing-maps='direction=input-to-output' 2>&1 | FileCheck %s --check-prefix=I2O

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.rng_bit_generator):
// O2I-NEXT:  operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 1], s0 in [0, 1]
// O2I-NEXT:  note: the new state is taken to read every word of the state
// O2I-NEXT:  output-to-input indexing of result #1 (stablehlo.rng_bit_generator):
// O2I-NEXT:  operand id = 0 (d0, d1)[s0] -> (s0), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 1]
// O2I-NOT:   note:
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.rng_bit_generator):
// I2O-NEXT:  operand id = 0 (d0)[s0] -> (s0), domain: d0 in [0, 1], s0 in [0, 1]
// I2O-NEXT:  operand id = 1 (d0)[s0, s1] -> (s0, s1), domain: d0 in [0, 1], s0 in [0, 2], s1 in [0, 3]
// I2O-NEXT:  note: the new state is taken to read every word of the state
func.func @bits(%state: tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>) {
  %new_state, %bits = stablehlo.rng_bit_generator %state, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
  return %new_state, %bits : tensor<2xui64>, tensor<3x4xui32>
}

// -----

// O2I-LABEL: output-to-input indexing of result #0 (stablehlo.rng):
// O2I-NEXT:  operand id = 0 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
// O2I-NEXT:  operand id = 1 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
// O2I-NEXT:  operand id = 2 (d0, d1)[s0] -> (s0), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 1]
// I2O-LABEL: input-to-output indexing of operand #0 (stablehlo.rng):
// I2O-NEXT:  operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 2]
// I2O-NEXT:  input-to-output indexing of operand #1 (stablehlo.rng):
// I2O-NEXT:  operand id = 0 ()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 2]
// I2O-NEXT:  input-to-output indexing of operand #2 (stablehlo.rng):
// I2O-NEXT:  operand id = 0 (d0)[s0, s1] -> (s0, s1), domain: d0 in [0, 1], s0 in [0, 1], s1 in [0, 2]
func.func @uniform(%a: tensor<f32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %shape = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %r = stablehlo.rng %a, %b, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
