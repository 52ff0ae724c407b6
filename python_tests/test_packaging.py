"""The wheel holds the one import package ``hlo_indexing``, every module of it (a
subpackage missing from pyproject's list would only show outside an editable install),
and no developer tool (``tools/dev.py``, ``tools/devtools/``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Installed package -> repository folder, as pyproject's package-dir says.
PACKAGE_DIRS = {"hlo_indexing": "hlo_indexing", "hlo_indexing/passes": "passes",
                "hlo_indexing/dialect_glue": "dialect_glue", "hlo_indexing/tools": "tools"}


def _source_modules() -> set[str]:
    """Wheel paths of every installable module in the repository."""
    found = set()
    for package, folder in PACKAGE_DIRS.items():
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT / folder)
            if folder == "tools" and (relative.parts[0] == "devtools" or relative.name == "dev.py"):
                continue
            if folder == "hlo_indexing" and relative.parts[0] in {"passes", "dialect_glue", "tools"}:
                continue
            found.add(f"{package}/{relative.as_posix()}")
    return found


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
    assert "hlo_indexing/maps/indexing_map.py" in names and "hlo_indexing/tools/dev.py" not in names
