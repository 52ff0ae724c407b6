"""Input that corrupts the heap inside jaxlib's MLIR parser never reaches it in-process.

Shardy's parsers of ``sdy.manual_computation`` and ``sdy.named_computation`` (jaxlib
0.10.2) corrupt the heap when the op fails to parse after its region and the region
defined a value that an op before it had used: the parse error is reported as usual and
the process dies later, in another allocation. The fuzz campaign saw it as "free():
unaligned chunk detected in tcache 2" (seed 20261130, after ~45,000 CLI cases in one
worker); with glibc's heap checks (``MALLOC_CHECK_=3``) the first such parse aborts.
``parse_module`` parses text naming these ops in an isolated child first
(``parsing.check_in_child``). The parses run in a child interpreter, with the checks on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import ParseError

#: glibc's heap-checking malloc (glibc >= 2.34 reads MALLOC_CHECK_ only with it preloaded).
MALLOC_DEBUG = next((p for p in Path("/usr/lib").glob("*/libc_malloc_debug.so.0")), None)

#: The fuzz finding, minimised by hand: a forward reference to %1, which the region of
#: the Shardy op defines from its block argument; the op's type is missing.
MANUAL = """
"func.return"(%1) : (tensor<3x2xf32>) -> ()
sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={} (%a: tensor<2x3xf32>) {
  %1 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
}
"""
NAMED = """
"func.return"(%1) : (tensor<3x2xf32>) -> ()
sdy.named_computation<"foo">(%arg0) (%a: tensor<2x3xf32>) {
  %1 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
}
"""


@pytest.mark.parametrize("text", [MANUAL, NAMED], ids=["manual_computation", "named_computation"])
def test_a_failing_shardy_parse_leaves_the_heap_intact(text: str) -> None:
    code = f"""
        from hlo_indexing.dialect_glue.parsing import parse_module
        from hlo_indexing.errors import ParseError
        for k in range(20):
            try:  # as text and as bytes
                parse_module({text!r} if k % 2 else {text!r}.encode(), filename="in.mlir")
            except ParseError as exc:
                where = exc.location
        print(where.filename, where.line)
    """
    env = dict(os.environ, MALLOC_CHECK_="3", MALLOC_PERTURB_="165")
    if MALLOC_DEBUG is not None:
        env["LD_PRELOAD"] = str(MALLOC_DEBUG)
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    # the parser's error, or (when the heap checks kill the trial child) a crash at line 1
    assert completed.stdout.split() in (["in.mlir", "5"], ["in.mlir", "1"])


def test_the_error_is_the_parsers_own(context) -> None:
    with pytest.raises(ParseError) as caught:
        parse_module(MANUAL, filename="in.mlir")
    assert (caught.value.location.line, caught.value.location.column) == (5, 2)
    assert caught.value.message == "expected ':'"


def test_shardy_text_that_parses_is_parsed_in_process(context) -> None:
    module = parse_module(
        """
sdy.mesh @mesh = <["x"=2]>
func.func @f(%arg0: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {"x"}]>] manual_axes={"x"} (%a: tensor<2x3xf32>) {
    %1 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    sdy.return %1 : tensor<3x2xf32>
  } : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
""",
        filename="in.mlir",
    )
    assert module.context is context and module.operation.verify()
