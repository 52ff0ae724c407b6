// Pallas TPU kernels in exported programs (tpu_custom_call): the grid and blocks are read
// from the Mosaic kernel in backend_config, the index maps followed piecewise.
// RUN: %hlo-opt %s --hlo-print-indexing-maps 2>&1 | FileCheck %s

// The kernel of
//   pl.pallas_call(kernel, out_shape=(24, 128) f32, grid=(3, 3),
//                  in_specs=[pl.BlockSpec((8, 128), lambda i, j: (jnp.where(j <= i, j, 0), 0))],
//                  out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, 0)))
// exported with jax.export(..., platforms=['tpu']). An output element in block i is written
// by the steps (i, j); step (i, j) reads block j where j <= i (s0 - s1 in [0, 2]), else
// block 0 (s0 - s1 in [-2, -1]): one map per region of the grid, s0 = i, s1 = j, then
// the offsets in the block.
// CHECK-LABEL: output-to-input indexing of result #0 (stablehlo.custom_call):
// CHECK-NEXT: operand id = 0 (d0, d1)[s0, s1, s2, s3] -> (s1 * 8 + s2, s3), domain: d0 in [0, 23], d1 in [0, 127], s0 in [0, 2], s1 in [0, 2], s2 in [0, 7], s3 in [0, 127], d0 - s0 * 8 in [0, 7], s0 - s1 in [0, 2]
// CHECK-NEXT: operand id = 0 (d0, d1)[s0, s1, s2, s3] -> (s2, s3), domain: d0 in [0, 23], d1 in [0, 127], s0 in [0, 2], s1 in [0, 2], s2 in [0, 7], s3 in [0, 127], d0 - s0 * 8 in [0, 7], s0 - s1 in [-2, -1]
// CHECK-NEXT: note: Pallas kernel kernel: a grid step is taken to read its input blocks whole (its body is not read)
func.func @causal_blocks(%x: tensor<24x128xf32>) -> tensor<24x128xf32> {
  %0 = stablehlo.custom_call @tpu_custom_call(%x) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSMjMuMC4wZ2l0AAEhBwEDBQEDBwMPCQsNDxETFQPJpxMBoQcTCxMPCwsLDw8LCwtTCwsLDwsPDxMLD0sLEwuFC1MLCwsLExsLGwsbGw8TCw8PCw8LDxsPCw8LDxsPCw8LDwsPCw8bCw8LDxsjCw8LUwsTBQeRYU0BEw8PByMHCxsfHwISBx8DAyFVBRcDAyF9HYmLBRkFGwUdHX+BEQMBBR8FIQUjIwMFIQgAAAAAAAAAgAAAAAAAAAAFJQ0RBScdJWcFKR0Phx0PkQMDLS8FKxEDLQMRMzULNzs9PxNBEw0PQ6VFRwUtAQWhoQ0PYWZmaW5lX21hcDwoZDAsIGQxKSAtPiAoZDAsIGQxKT4ABS8jAwUhAwAAAAAAAAADAAAAAAAAAAUxBTMFNQU3AQVJTQMFFUsZGwkXAwUVTxkbCR0DBQsfDRcDBQsfDR0RAQEDA1lbBTkRAw0dX2EFOx1jZQU9FSMjLQUHFYOPHWttBT8db3EFQR0lcy0FBxVvnR13eQVDHXsBBUURBQEFRx2DhQVJFScnLQUHD09jBUsdjY8FTRUpKS0FBw81SQMHlZeZm52fBU8RCwAFUSMBCSEBAAAAAQAAAAIAAAAAAAAABVMjAQEBI3RwdS5kaW1lbnNpb25fc2VtYW50aWNzPGFyYml0cmFyeT4AI3RwdS5tZW1vcnlfc3BhY2U8dm1lbT4AI3RwdS5jb3JlX3R5cGU8dGM+AAECAgECBAMXowUhAgQJOQsBCScFIQIECQUJAQEHBwEFBQEBBQEBBJoCBQERASsHAwENBREBMQcDFSMJAQEBAQcBBwEDAxEHAwUDAxEHAwUJBhEDDQcFCQsDAwkHAwUDAwkHAwUJBgkDDQcHDxEPBQmTCQ0HDxEHAAEFEQFRBwMPGwUBAQEBCwddVwMLBQMBAwNpAwMBDQZ1AwEHBQMHAwMBAwMBAwMBAwMBBwQBBQkLBREBUwcDCQ8FAQEBAQMDAQMDAQMDAQMDAQcEAQUBBQYDAQUBAFoIVREpCRUNEQslFQkLDQkVHR0jISMpLSkNGR0ZJQ8THSUjGxcZGRUfDwkdEWJ1aWx0aW4Ac3RhYmxlX21vc2FpYwB0cHUAbW9kdWxlAGFyaXRoLmNvbnN0YW50AGZ1bmMuZnVuYwBmdW5jLnJldHVybgB2ZWN0b3IubG9hZABhcml0aC5jbXBpAGFyaXRoLnNlbGVjdAB0cHUudmVjdG9yX3N0b3JlAC90bXAvczM4L21rbGl0LnB5AGZ1bmN0aW9uX3R5cGUAc3ltX25hbWUAa2VybmVsAHRyYW5zZm9ybV9pbmRpY2VzAHRyYW5zZm9ybV8wAHdpbmRvd19ib3VuZHMAdHJhbnNmb3JtXzEAdmFsdWUAZi48bG9jYWxzPi48bGFtYmRhPgBzdGFibGVfbW9zYWljLnZlcnNpb24AZGltZW5zaW9uX3NlbWFudGljcwBpdGVyYXRpb25fYm91bmRzAHNjYWxhcl9wcmVmZXRjaABzY3JhdGNoX29wZXJhbmRzAHRwdS5jb3JlX3R5cGUAd2luZG93X3BhcmFtcwBwcmVkaWNhdGUAbGU6AGxlL2xlAGppdDoAaml0AHNlbGVjdF9uOgBzZWxlY3Rfbi9zZWxlY3RfbgBnZXQ6AGdldC9nZXQAc3dhcDoAc3dhcC9zd2FwAGFkZABvcGVyYW5kU2VnbWVudFNpemVzAHN0cmlkZXMA\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}"} : (tensor<24x128xf32>) -> tensor<24x128xf32>
  return %0 : tensor<24x128xf32>
}
