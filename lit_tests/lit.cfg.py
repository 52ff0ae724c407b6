# lit configuration of hlo-indexing. Run with `lit -v lit_tests` from the environment
# where the project is installed (`python3 dev/run.py test` does it in `.venv`).
#
# Substitutions:
#   %PYTHON    the Python running lit (the environment's interpreter)
#   %hlo-opt   the environment's `hlo-indexing-opt` console script
#   FileCheck  the PyPI `filecheck` with --enable-var-scope
#   not        lit's internal-shell builtin (inverts the exit status)
# Features:
#   crosscheck when the C++ `iree-opt` (extra `crosscheck`) is on PATH
#   isl        when `islpy` (extra `exact`) is installed: proofs by isl run

import importlib.util
import os
import shutil
import sys

import lit.formats

config.name = "hlo-indexing"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".hlo", ".py", ".test"]
config.excludes = ["lit.cfg.py", "Inputs", "Output"]
config.test_source_root = os.path.dirname(__file__)

_bin_dir = os.path.dirname(sys.executable)
_path = os.pathsep.join([_bin_dir, os.environ.get("PATH", "")])
config.environment["PATH"] = _path
# Tests import the installed package only: never the repository root.
config.environment.pop("PYTHONPATH", None)


def _tool(name):
    """The tool next to this interpreter, else on PATH; fail loudly if missing."""
    found = shutil.which(name, path=_path)
    if found is None:
        lit_config.fatal(f"'{name}' not found next to {sys.executable} or on PATH; "
                         "install the project with `pip install -e '.[test]'`")
    return found


config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%hlo-opt", _tool("hlo-indexing-opt")))
config.substitutions.append((r"\bFileCheck\b", f"{_tool('filecheck')} --enable-var-scope"))

if shutil.which("iree-opt", path=_path):
    config.available_features.add("crosscheck")

if importlib.util.find_spec("islpy") is not None:
    config.available_features.add("isl")
