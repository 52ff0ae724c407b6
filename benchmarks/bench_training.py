"""Benchmark: ``hlo_indexing.analyze`` of real JAX training steps against MLIR's C++
parse + print of the same text (issue #17).

For each layer count (:data:`jax_training_step.LAYERS`) the text of a training step
(:mod:`jax_training_step`) is parsed and printed by ``ir.Module.parse`` + ``str()``
(best of ``baseline_repeat``) and analysed by ``hlo_indexing.analyze(text)`` (per-op and
fused maps, output to input; best of ``repeat``), in the same process, in wall-clock and
in CPU time (steadier on a shared machine: waiting for a core is not counted). Every analysis
starts with the per-op cache and the compose/simplify memo cleared; imports are warmed
by one untimed analysis of the smallest step. Growth per doubling compares consecutive
layer counts (2.0 is linear). Example::

    rows = measure([1, 2])
    rows[0]["ratio"]      # analysis time / (parse + print) time (wall clock)
    rows[0]["cpu_ratio"]  # the same in CPU time
"""

from __future__ import annotations

import math
from typing import Any

import bench_analysis
import jax_training_step

import hlo_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.passes.attach_indexing_maps import hlo_ops


def measure(layers: list[int], repeat: int = 3, baseline_repeat: int = 7) -> list[dict[str, Any]]:
    """One row per layer count: ops, parse+print s, analysis s, ratio, growth per doubling
    of the layers (against the previous row; None for the first)."""
    texts = {n: jax_training_step.training_step_text(n) for n in layers}
    bench_analysis.clear_caches()
    hlo_indexing.analyze(texts[layers[0]])  # warm the imports
    context = make_context()
    rows: list[dict[str, Any]] = []
    for n in layers:
        text = texts[n]
        module = ir.Module.parse(text, context)
        ops = len(list(hlo_ops(module.operation)))
        results = len(module.body.operations[0].type.results)
        baseline, baseline_cpu = bench_analysis.best_of_clocks(lambda: str(ir.Module.parse(text, context)), baseline_repeat)

        def run() -> None:
            bench_analysis.clear_caches()
            hlo_indexing.analyze(text)

        seconds, cpu = bench_analysis.best_of_clocks(run, repeat)
        row = {"layers": n, "ops": ops, "results": results, "parse_print_s": baseline, "analysis_s": seconds,
               "ratio": seconds / baseline, "growth_per_doubling": None, "parse_print_cpu_s": baseline_cpu,
               "analysis_cpu_s": cpu, "cpu_ratio": cpu / baseline_cpu, "cpu_growth_per_doubling": None}
        if rows:
            previous = rows[-1]
            exponent = 1 / math.log2(n / previous["layers"])
            row["growth_per_doubling"] = (seconds / previous["analysis_s"]) ** exponent
            row["cpu_growth_per_doubling"] = (cpu / previous["analysis_cpu_s"]) ** exponent
        rows.append(row)
        print(f"bench: training step, {n} layer(s): {ops} ops, {seconds:.3f} s ({row['ratio']:.1f}x), "
              f"CPU {cpu:.3f} s ({row['cpu_ratio']:.1f}x)", flush=True)
    return rows
