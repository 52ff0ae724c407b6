"""Issue #20, items 4 and 8: a discoverable Python API (``dir()``/``help()`` list the
public names of every package, ``__version__``, ``py.typed``, honest reprs, README
names the layout functions) and a first run that explains itself (``dev.py --help``,
``dev.py test`` naming its skips, README saying how to run the installed commands)."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.resources
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest

import hlo_indexing

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [
    "hlo_indexing",
    "hlo_indexing.analysis",
    "hlo_indexing.dialect_glue",
    "hlo_indexing.layout",
    "hlo_indexing.maps",
    "hlo_indexing.ops",
    "hlo_indexing.passes",
    "hlo_indexing.symbolic_tiling",
    "hlo_indexing.tools",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_dir_and_help_list_every_public_name(name):
    package = importlib.import_module(name)
    assert package.__all__, name
    listed = dir(package)
    text = pydoc.render_doc(package, renderer=pydoc.plaintext)
    for public in package.__all__:
        assert public in listed, (name, public)
        getattr(package, public)  # resolves (PADDING, a constant, may be None)
        assert public in text, (name, public)


def test_the_issue_examples():
    assert "analyze" in dir(hlo_indexing)
    import hlo_indexing.layout as layout

    assert {"parse_shape", "linear_offset_map", "tiled_coordinates_map", "pack"} <= set(dir(layout))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        hlo_indexing.nope  # noqa: B018


def test_version_and_py_typed():
    assert hlo_indexing.__version__ == importlib.metadata.version("hlo-indexing")
    assert importlib.resources.files("hlo_indexing").joinpath("py.typed").is_file()


def test_reprs_round_trip_or_do_not_pretend():
    result = hlo_indexing.analyze(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.negate %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    )
    text = repr(result)
    assert text.startswith("<ModuleIndexing") and text.endswith(">")  # not an expression
    (m,) = result.computation("f").maps[0].maps[0]
    assert eval(repr(m), {"IndexingMap": hlo_indexing.IndexingMap}) == m


def test_readme_names_the_layout_functions_and_how_to_run_commands():
    readme = (ROOT / "README.md").read_text()
    for name in ("parse_shape", "linear_offset_map", "tiled_coordinates_map", "linear_index", "pack", "unpack"):
        assert f"`{name}" in readme, name
    assert ".venv/bin/hlo-indexing-opt" in readme and "source .venv/bin/activate" in readme
    assert "dev/run.py docs" in readme and "format=json" in readme


def _dev(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "dev" / "run.py"), *argv], capture_output=True, text=True)


def test_dev_help_lists_commands_and_exits_0():
    done = _dev("--help")
    assert done.returncode == 0
    for command in ("test", "example", "bench", "conformance", "docs"):
        assert f"\n  {command} " in done.stdout
    assert _dev("nonsense").returncode == 2


def test_dev_test_names_its_skips():
    dev = importlib.import_module("run")  # dev/run.py (dev/ is on the tests' path)
    pytest_output = (
        "....s\n=========================== short test summary info ============================\n"
        "SKIPPED [7] python_tests/test_conformance.py:31: ../shared/conformance is missing\n"
        "1 passed, 7 skipped in 0.1s\n"
    )
    assert dev.pytest_skips(pytest_output) == ["pytest: [7] python_tests/test_conformance.py:31: ../shared/conformance is missing"]
    lit_output = "UNSUPPORTED: hlo-indexing :: driver/crosscheck-iree-opt.mlir (3 of 50)\nPASS: hlo-indexing :: x (4 of 50)\n"
    assert dev.lit_skips(lit_output) == [
        "lit: hlo-indexing :: driver/crosscheck-iree-opt.mlir (unsupported: a REQUIRES feature is missing)"
    ]
    modules = dev.installed_modules(ROOT)
    assert {"hlo_indexing", "hlo_indexing.passes.registry", "hlo_indexing.analysis.results"} <= set(modules)
    assert modules["hlo_indexing.passes.registry"] == ROOT / "passes" / "registry.py"
    assert not any(path.is_relative_to(ROOT / "dev") for path in modules.values())
