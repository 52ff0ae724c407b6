"""Benchmark: the indexing analysis of a whole module against MLIR's C++ parse + print.

The analysis is what ``hlo-attach-indexing-maps`` does (output -> input maps of every HLO
op, simplified, attached as attributes) plus the fused maps of every result of every
function (``computation_indexing``: one walk per function, equal to ``fusion_indexing``
of each result; the functions share its memos and take the per-op maps the attach step
computed, as in ``analyze``). The baseline is ``ir.Module.parse(text)`` + ``str(module)`` of the same text, in
the same process. Both are timed best-of-``repeat`` (the baseline at least 7 times); the
analysis starts each repetition on a freshly parsed module with every cache cleared
(parsing not timed).

Peak memory is tracemalloc's peak of Python allocations during one separate analysis run
(MLIR's C++ allocations are not seen by tracemalloc). Example::

    record = measure(generate("elementwise", 1000))
    record["ratio"]     # analysis time / (parse + print) time (wall clock)
    record["cpu_ratio"] # the same in CPU time
"""

from __future__ import annotations

import gc
import math
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from bench_generate import Generated

from hlo_indexing.analysis.fusion import computation_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.maps.memo import clear_memo
from hlo_indexing.ops.dispatch import clear_cache
from hlo_indexing.passes.attach_indexing_maps import attach_per_op_maps
from hlo_indexing.passes.base import Diagnostics

#: The baseline is cheap and short, so it is timed more often (noise on a shared machine).
BASELINE_REPEAT = 7


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` wall-clock timings of ``fn()``, in seconds."""
    return best_of_clocks(fn, repeat)[0]


def best_of_clocks(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """The fastest wall-clock and the fastest CPU (process) time of ``repeat`` runs of
    ``fn()``, in seconds. CPU time is the steadier one on a shared machine (time spent
    waiting for a core is not counted)."""
    wall = cpu = math.inf
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start)
    return wall, cpu


def clear_caches() -> None:
    """Forget the per-op results and the compose/simplify memo (cold run)."""
    clear_cache()
    clear_memo()


def analyse(module: "ir.Module") -> tuple[int, int]:
    """Attach per-op maps and compute every function's fused maps from them; return
    (number of fused map sets, number of them over-approximated)."""
    diagnostics = Diagnostics()
    per_op = attach_per_op_maps(module.operation, "output-to-input", True, diagnostics)
    if diagnostics.items:
        raise RuntimeError(f"analysis failed: {diagnostics.items[0].message}")
    sets = capped = 0
    shared: dict = {}
    for func in module.body.operations:
        for fused in computation_indexing(func, per_op=per_op, shared=shared):
            sets += 1
            capped += bool(fused.over_approximated)
    return sets, capped


def measure(gen: Generated, repeat: int = 3, memory: bool = True) -> dict[str, Any]:
    """Timings (seconds), ratio and tracemalloc peak (bytes) of one generated module."""
    context = make_context()
    modules: list = []

    def parse() -> None:
        modules.append(ir.Module.parse(gen.text, context))

    baseline_repeat = max(repeat, BASELINE_REPEAT)
    parse_s, parse_cpu_s = best_of_clocks(parse, baseline_repeat)
    module = modules[-1]
    print_s, print_cpu_s = best_of_clocks(lambda: str(module), baseline_repeat)
    modules.clear()
    fresh = [ir.Module.parse(gen.text, context) for _ in range(repeat)]
    outcome: list = []

    def run() -> None:
        clear_caches()
        outcome.append(analyse(fresh.pop()))

    analysis_s, analysis_cpu_s = best_of_clocks(run, repeat)
    peak = None
    if memory:
        module = ir.Module.parse(gen.text, context)
        clear_caches()
        gc.collect()
        tracemalloc.start()
        analyse(module)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    sets, capped = outcome[-1]
    return {
        "family": gen.family,
        "n_ops": gen.n_ops,
        "n_functions": gen.n_functions,
        "parse_s": parse_s,
        "print_s": print_s,
        "analysis_s": analysis_s,
        "ratio": analysis_s / (parse_s + print_s),
        "parse_print_cpu_s": parse_cpu_s + print_cpu_s,
        "analysis_cpu_s": analysis_cpu_s,
        "cpu_ratio": analysis_cpu_s / (parse_cpu_s + print_cpu_s),
        "fused_sets": sets,
        "fused_over_approximated": capped,
        "peak_python_bytes": peak,
    }


def growth_per_doubling(small: dict[str, Any], large: dict[str, Any], key: str = "analysis_s") -> float:
    """``(t_large / t_small) ** (1 / log2(n_large / n_small))``: 2.0 means linear."""
    return (large[key] / small[key]) ** (1 / math.log2(large["n_ops"] / small["n_ops"]))
