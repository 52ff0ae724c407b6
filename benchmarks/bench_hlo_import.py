"""Benchmark: what parsing untrusted HLO text in a forked child costs.

XLA's HLO parser aborts its process on some malformed text, so
:func:`hlo_indexing.dialect_glue.hlo_import.import_hlo_text` parses and translates in a
forked child (``isolate=True``, the default) and loads the result in the caller. This
measures both paths (best of ``repeat`` runs, after one warm-up) on the bundled softmax
dump and on a generated chain of ``n`` elementwise instructions. Example::

    rows = measure(repeat=5)
    rows[0]["isolated_s"], rows[0]["in_process_s"], rows[0]["overhead_s"]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.hlo_import import import_hlo_text

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "softmax_cpu.hlo"


def chain(n: int) -> str:
    """HLO text of ``n`` negates in a row on an f32[64,64] parameter."""
    lines = ["HloModule chain", "", "ENTRY e {", "  x0 = f32[64,64]{1,0} parameter(0)"]
    lines += [f"  x{i} = f32[64,64]{{1,0}} negate(x{i - 1})" for i in range(1, n + 1)]
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
