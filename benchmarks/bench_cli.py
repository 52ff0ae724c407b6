"""Benchmark: start-up of ``hlo-indexing-opt``, what the CLI path imports, and how the
cost of printing a module's remarks grows with the module.

Three runs of the installed script (the one next to this Python), each in a subprocess,
best of ``repeat`` in wall-clock and in CPU time (user + system of the child): ``--help``
(no bindings), and the analysis of a tiny file (one transpose, with
``--hlo-attach-indexing-maps``). The baselines are ``python -c pass`` (the floor any
Python tool pays) and ``python -c "import jaxlib.mlir.ir"`` (the floor of any tool on the
bindings: numpy and the MLIR bindings). Children run with bytecode caching allowed (an
installed package has its ``.pyc`` files; an environment's ``PYTHONDONTWRITEBYTECODE``
would otherwise make every run compile our modules again), after one warm-up run.
``python -X importtime`` of ``--help`` tells whether ``jax`` is imported and which
packages' imports cost most. :func:`remarks_scaling` runs ``--hlo-print-indexing-maps``
(one remark, with its source line, per op) on generated modules of
:data:`REMARK_SIZES` ops: its CPU time must grow linearly (a remark's excerpt once split
the whole input again: 22 s for the 24,886 remarks of a compiled training step, 6.3 s
for 10,000 ops where 0.6 s do). Example::

    record = measure(repeat=5)
    record["help_s"], record["tiny_s"], record["jax_imported"], record["import_ms_by_package"]
    record["remarks"]["growth_per_doubling"]
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_analysis
import bench_generate

SCRIPT = Path(sys.executable).parent / ("hlo-indexing-opt" + (".exe" if os.name == "nt" else ""))


#: The tiny file the start-up of an analysis is measured on.
TINY = """func.func @f(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""


#: Ops of the generated modules (elementwise family) whose remarks are printed.
REMARK_SIZES = (5000, 20000)


def _environment() -> dict[str, str]:
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def _best_run(command: list[str], repeat: int) -> tuple[float, float]:
    """Best wall-clock and best CPU (user + system) seconds of ``repeat`` runs, after a warm-up."""
    environment = _environment()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    wall = cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
        wall = min(wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def import_profile() -> list[tuple[str, int]]:
    """``(top-level package, microseconds)`` imported by ``hlo-indexing-opt --help``:
    the self time of every module summed per top-level package, most expensive first."""
    command = [sys.executable, "-X", "importtime", "-m", "hlo_indexing.tools.opt", "--help"]
    stderr = subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_environment()
    ).stderr
    totals: dict[str, int] = {}
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)", line)
        if match:
            package = match.group(2).split(".")[0]
            totals[package] = totals.get(package, 0) + int(match.group(1))
    return sorted(totals.items(), key=lambda item: -item[1])


def remarks_scaling(repeat: int) -> dict[str, Any]:
    """CPU seconds of ``--hlo-print-indexing-maps`` on a generated module of each of
    :data:`REMARK_SIZES` ops (best of ``repeat``) and their growth per doubling of the
    ops (start-up included, which only lowers it: a quadratic term still shows)."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in REMARK_SIZES:
            generated = bench_generate.generate("elementwise", size)
            path = Path(folder) / f"elementwise_{size}.mlir"
            path.write_text(generated.text)
            wall, cpu = _best_run([str(SCRIPT), str(path), "--hlo-print-indexing-maps", "-o", os.devnull], repeat)
            rows.append({"n_ops": generated.n_ops, "s": wall, "cpu_s": cpu})
    return {"rows": rows, "growth_per_doubling": bench_analysis.growth_per_doubling(rows[0], rows[-1], "cpu_s")}


def measure(repeat: int = 5) -> dict[str, Any]:
    help_s, help_cpu_s = _best_run([str(SCRIPT), "--help"], repeat)
    python_s, python_cpu_s = _best_run([sys.executable, "-c", "pass"], repeat)
    bindings_s, bindings_cpu_s = _best_run([sys.executable, "-c", "import jaxlib.mlir.ir"], repeat)
    with tempfile.TemporaryDirectory() as folder:
        tiny = Path(folder) / "tiny.mlir"
        tiny.write_text(TINY)
        tiny_s, tiny_cpu_s = _best_run([str(SCRIPT), str(tiny), "--hlo-attach-indexing-maps"], repeat)
    profile = import_profile()
    remarks = remarks_scaling(min(repeat, 2))
    return {
        "repeat": repeat,
        "help_s": help_s,
        "python_s": python_s,
        "ratio": help_s / python_s,
        "tiny_s": tiny_s,
        "bindings_s": bindings_s,
        "cpu_s": {"help": help_cpu_s, "tiny": tiny_cpu_s, "python": python_cpu_s, "bindings": bindings_cpu_s},
        "jax_imported": any(name == "jax" for name, _ in profile),
        "import_ms_by_package": {name: round(us / 1000, 1) for name, us in profile[:5]},
        "remarks": remarks,
    }
