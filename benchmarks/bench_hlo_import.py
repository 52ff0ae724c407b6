"""Benchmark: what parsing untrusted HLO text in a forked child costs.

XLA's HLO parser aborts its process on some malformed text, so
:func:`hlo_indexing.dialect_glue.hlo_import.import_hlo_text` parses and translates in a
forked child (``isolate=True``, the default) and loads the result in the caller. This
measures both paths (best of ``repeat`` runs, after one warm-up) on the bundled softmax
dump and on a generated chain of ``n`` elementwise instructions. :func:`scan_scaling`
times the scan of the HLO text that runs before XLA's parser (layouts, names and
locations, :func:`~hlo_indexing.dialect_glue.hlo_text.scan_hlo_text`) on chains of
:data:`SCAN_SIZES` instructions: it must grow linearly (a slice of the rest of the text
per instruction once made it quadratic: 0.93 s for an 8-layer compiled training step).
Example::

    rows = measure(repeat=5)
    rows[0]["isolated_s"], rows[0]["in_process_s"], rows[0]["overhead_s"]
    scan_scaling(repeat=3)["growth_per_doubling"]
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import bench_analysis

from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.hlo_import import import_hlo_text
from hlo_indexing.dialect_glue.hlo_text import scan_hlo_text

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "softmax_cpu.hlo"
#: Instructions of the chains whose text scan is timed.
SCAN_SIZES = (5000, 40000)


def chain(n: int, metadata: bool = False) -> str:
    """HLO text of ``n`` negates in a row on an f32[64,64] parameter; with ``metadata``,
    each carries the ``metadata={...}`` of a jitted function, as XLA's dumps do."""
    lines = ["HloModule chain", "", "ENTRY e {", "  x0 = f32[64,64]{1,0} parameter(0)"]
    suffix = ', metadata={op_name="jit(step)/jvp(transformer)/layer_norm/neg" source_file="/home/user/model.py" source_line=42}'
    lines += [f"  x{i} = f32[64,64]{{1,0}} negate(x{i - 1}){suffix if metadata else ''}" for i in range(1, n + 1)]
    lines[-1] = "  ROOT" + lines[-1][1:]
    return "\n".join(lines + ["}", ""])


def _best(text: str, isolate: bool, repeat: int) -> float:
    context = make_context()
    import_hlo_text(text, "bench.hlo", context, isolate=isolate)  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        import_hlo_text(text, "bench.hlo", context, isolate=isolate)
        best = min(best, time.perf_counter() - start)
    return best


def measure(repeat: int = 5, sizes: tuple[int, ...] = (100, 2000)) -> list[dict[str, Any]]:
    """One row per input: isolated and in-process import time, and the difference."""
    inputs = [("examples/softmax_cpu.hlo", EXAMPLE.read_text())] + [(f"{n}-instruction chain", chain(n)) for n in sizes]
    rows = []
    for name, text in inputs:
        isolated, in_process = _best(text, True, repeat), _best(text, False, repeat)
        rows.append(
            {"input": name, "isolated_s": isolated, "in_process_s": in_process, "overhead_s": isolated - in_process}
        )
    return rows


def scan_scaling(repeat: int = 3) -> dict[str, Any]:
    """CPU seconds of the text scan of a chain of each of :data:`SCAN_SIZES`
    instructions with metadata (best of ``repeat``, the garbage collector off) and their
    growth per doubling of the instructions."""
    rows = []
    for n in SCAN_SIZES:
        text = chain(n, metadata=True)
        best = float("inf")
        for _ in range(repeat):
            gc.disable()  # as timeit: the collector's passes over the growing heap are noise here
            try:
                start = time.process_time()
                scan_hlo_text(text)
                best = min(best, time.process_time() - start)
            finally:
                gc.enable()
        rows.append({"n_ops": n, "cpu_s": best})
    return {"rows": rows, "growth_per_doubling": bench_analysis.growth_per_doubling(rows[0], rows[-1], "cpu_s")}
