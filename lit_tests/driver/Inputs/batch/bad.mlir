func.func @bad() {
  retur
}
