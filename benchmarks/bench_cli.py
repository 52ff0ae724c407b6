"""Benchmark: start-up of ``hlo-indexing-opt --help`` and what the CLI path imports.

The start-up time is the best of ``repeat`` wall-clock runs of the installed script (the
one next to this Python), in a subprocess. The ratio's baseline is ``python -c pass``
with the same interpreter (the floor any Python tool pays). ``python -X importtime``
of the same command tells whether ``jax`` is imported and which packages' imports cost
most. Example::

    record = measure(repeat=5)
    record["help_s"], record["jax_imported"], record["import_ms_by_package"]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).parent / ("hlo-indexing-opt" + (".exe" if os.name == "nt" else ""))


def _best_run(command: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def import_profile() -> list[tuple[str, int]]:
    """``(top-level package, microseconds)`` imported by ``hlo-indexing-opt --help``:
    the self time of every module summed per top-level package, most expensive first."""
    command = [sys.executable, "-X", "importtime", "-m", "hlo_indexing.tools.opt", "--help"]
    stderr = subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    totals: dict[str, int] = {}
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)", line)
        if match:
            package = match.group(2).split(".")[0]
            totals[package] = totals.get(package, 0) + int(match.group(1))
    return sorted(totals.items(), key=lambda item: -item[1])


def measure(repeat: int = 5) -> dict[str, Any]:
    help_s = _best_run([str(SCRIPT), "--help"], repeat)
    python_s = _best_run([sys.executable, "-c", "pass"], repeat)
    profile = import_profile()
    return {
        "repeat": repeat,
        "help_s": help_s,
        "python_s": python_s,
        "ratio": help_s / python_s,
        "jax_imported": any(name == "jax" for name, _ in profile),
        "import_ms_by_package": {name: round(us / 1000, 1) for name, us in profile[:5]},
    }
