"""The wheel holds the one import package ``hlo_indexing``, every module of it (a
subpackage missing from pyproject's list would only show outside an editable install),
and no developer tool (nothing of ``dev/``, ``benchmarks/`` or the tests)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from package_layout import installed_modules

ROOT = Path(__file__).resolve().parents[1]


def _source_modules() -> set[str]:
    """Wheel paths of every module that pyproject's layout installs."""
    found = set()
    for name, path in installed_modules(ROOT).items():
        parts = name.split(".")
        found.add("/".join(parts + ["__init__.py"]) if path.stem == "__init__" else "/".join(parts[:-1] + [path.name]))
    return found


def _developer_files() -> set[str]:
    """Base names of every Python file of the developer tools, the benchmarks and the tests."""
    return {path.name for folder in ("dev", "benchmarks", "python_tests") for path in (ROOT / folder).rglob("*.py")}


@pytest.mark.slow
def test_wheel_holds_every_module_and_no_developer_tool(tmp_path):
    # Build from a copy: setuptools leaves build/ behind, and stale files there would end up in later wheels.
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", "Output", "lit_tests")
    shutil.copytree(ROOT, source, ignore=ignore)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Warning" not in done.stderr, done.stderr  # e.g. setuptools' licence-table deprecation (issue #20)
    (wheel,) = tmp_path.glob("hlo_indexing-*.whl")
    every = set(zipfile.ZipFile(wheel).namelist())
    assert {"hlo_indexing/py.typed", "hlo_indexing/schema/indexing.schema.json", "hlo_indexing/devices/gpus.json",
            "hlo_indexing/devices/tpus.json", "hlo_indexing/cost_model/xla_op_profiles.json"} <= every  # package data
    names = {name for name in every if name.endswith(".py")}
    assert {name.split("/")[0] for name in names} == {"hlo_indexing"}
    assert names == _source_modules()
    assert "hlo_indexing/maps/indexing_map.py" in names and "hlo_indexing/dev/run.py" not in names
