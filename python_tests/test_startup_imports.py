"""Start-up (issue #17): what a fresh process imports, and that deferring it keeps
programs of every dialect working.

Each check runs in a fresh interpreter (what is imported is a property of the process):

* analysing a StableHLO module imports neither the MHLO, CHLO nor Shardy op classes
  (the dialects are registered through jaxlib's native extensions), nor
  ``importlib.metadata`` (the HLO importer and the pass manager, a few ms, are imported
  with the parser and ``analyze``);
* an MHLO + CHLO module still parses and its maps are right (checked by enumeration
  against the elementwise ops' identity), and so does a Shardy mesh;
* ``hlo-indexing-opt`` on a one-op file does not import the process-pool machinery;
* ``__version__`` and ``--version`` still read the installed metadata.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import textwrap

import pytest

STABLEHLO = """
func.func @f(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""

MHLO_CHLO = """
func.func @g(%a: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = mhlo.add %a, %a : tensor<3x5xf32>
  %1 = chlo.erf %0 : tensor<3x5xf32> -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
"""

SHARDY = """
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @h(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""

DEFERRED = [
    "importlib.metadata",
    "concurrent.futures",
    "jaxlib.mlir.dialects.mhlo",
    "jaxlib.mlir.dialects.chlo",
    "jaxlib.mlir.dialects.sdy",
]


def _run(code: str) -> dict:
    """Runs ``code`` in a fresh interpreter; it prints one JSON document."""
    completed = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_analysing_stablehlo_imports_none_of_the_deferred_modules() -> None:
    found = _run(
        f"""
        import json, sys
        import hlo_indexing
        result = hlo_indexing.analyze({STABLEHLO!r})
        print(json.dumps({{"loaded": [m for m in {DEFERRED!r} if m in sys.modules],
                          "maps": result.computation("f").lines()}}))
        """
    )
    assert found["loaded"] == []
    assert found["maps"] == ["@f result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]"]


def test_mhlo_and_chlo_programs_parse_in_a_fresh_process() -> None:
    found = _run(
        f"""
        import json
        import hlo_indexing
        result = hlo_indexing.analyze({MHLO_CHLO!r})
        maps = result.computation("g").maps[0].maps[0]
        pairs = sorted(pair for m in maps for pair in m.relation())
        print(json.dumps({{"ops": [op.op for op in result.ops], "pairs": pairs}}))
        """
    )
    assert found["ops"] == ["mhlo.add", "chlo.erf"]
    identity = sorted([[i, j], [i, j]] for i in range(3) for j in range(5))
    assert found["pairs"] == identity


def test_a_shardy_mesh_parses_in_a_fresh_process() -> None:
    found = _run(
        f"""
        import json
        import hlo_indexing
        result = hlo_indexing.analyze({SHARDY!r})
        print(json.dumps(result.computation("h").lines()))
        """
    )
    assert found == ["@h result 0 -> arg 0: (d0) -> (d0), domain: d0 in [0, 3]"]


def test_the_cli_on_a_small_file_imports_no_process_pool(tmp_path) -> None:
    source = tmp_path / "tiny.mlir"
    source.write_text(STABLEHLO)
    found = _run(
        f"""
        import contextlib, io, json, sys
        from hlo_indexing.tools import opt
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = opt.main([{str(source)!r}, "--hlo-attach-indexing-maps"])
        print(json.dumps({{"code": code, "attached": "hlo_indexing.output_to_input" in out.getvalue(),
                          "loaded": [m for m in ("concurrent.futures", "importlib.metadata") if m in sys.modules]}}))
        """
    )
    assert found == {"code": 0, "attached": True, "loaded": []}


def test_the_version_is_still_read_from_the_installed_metadata() -> None:
    expected = importlib.metadata.version("hlo-indexing")
    found = _run(
        """
        import contextlib, io, json
        import hlo_indexing
        from hlo_indexing.tools import opt
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            opt.main(["--version"])
        print(json.dumps({"version": hlo_indexing.__version__, "listed": "__version__" in dir(hlo_indexing),
                          "cli": out.getvalue().split()[1]}))
        """
    )
    assert found == {"version": expected, "listed": True, "cli": expected}


@pytest.mark.parametrize("module", ["jaxlib.mlir.dialects.stablehlo", "jaxlib.mlir.dialects.mhlo"])
def test_typed_op_classes_of_a_dialect_module_imported_first_do_not_change_the_maps(module: str) -> None:
    found = _run(
        f"""
        import importlib, json
        importlib.import_module({module!r})
        import hlo_indexing
        print(json.dumps(hlo_indexing.analyze({STABLEHLO!r}).computation("f").lines()
                         + hlo_indexing.analyze({MHLO_CHLO!r}).computation("g").lines()))
        """
    )
    assert found == [
        "@f result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]",
        "@g result 0 -> arg 0: (d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 4]",
    ]
