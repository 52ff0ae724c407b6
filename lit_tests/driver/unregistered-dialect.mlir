// RUN: %hlo-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: not %hlo-opt %s 2>&1 | FileCheck %s --check-prefix=ERROR

// CHECK: "my.op"() : () -> ()
// ERROR: unregistered-dialect.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: operation being parsed with an unregistered dialect
func.func @f() {
  "my.op"() : () -> ()
  return
}
