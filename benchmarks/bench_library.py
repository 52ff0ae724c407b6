"""Benchmark: ``hlo_indexing.analyze`` of programs built with JAX's libraries (issue #31)
against MLIR's C++ parse + print of the same text.

The programs are :mod:`library_programs`' (flax, optax, equinox, dm-haiku, diffrax, jax-md,
keras 3, keras-hub, Hugging Face's Flax models: the ``programs`` extra); a program whose
library is not installed is skipped and named. Each is lowered once, then measured as
the training steps are (:mod:`bench_training`): CPU time, the analysis best of
``repeat`` with every cache cleared, the baseline best of 7. Example::

    rows = measure(["linen_bilstm_step"])
    rows[0]["cpu_ratio"]   # analysis CPU time / (parse + print) CPU time
"""

from __future__ import annotations

from typing import Any

import bench_analysis

import hlo_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.passes.attach_indexing_maps import hlo_ops

#: The programs of a quick run: one per kind the issue names (loops, batch norm, PRNG, scans).
QUICK = ("diffrax_lotka_volterra_heun", "linen_bilstm_step", "haiku_transformer_dropout", "keras_lstm_gru_classifier")


def lowered_texts(names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> StableHLO text, name -> why it was skipped) for the programs asked for."""
    import library_programs  # imports jax: only when the library benchmark runs

    texts, skipped = {}, {}
    for name in names:
        try:
            texts[name] = library_programs.build(name).lowered().as_text()
        except ImportError as error:
            skipped[name] = f"not installed ({error.name or error})"
    return texts, skipped


def measure(names: list[str], repeat: int = 3, baseline_repeat: int = 7) -> list[dict[str, Any]]:
    """One row per program: ops, parse+print CPU s, analysis CPU s, ratio; a skipped
    program's row says why."""
    texts, skipped = lowered_texts(names)
    rows: list[dict[str, Any]] = [{"program": name, "skipped": why} for name, why in skipped.items()]
    context = make_context()
    for name, text in texts.items():
        module = ir.Module.parse(text, context)
        ops = len(list(hlo_ops(module.operation)))
        _, baseline = bench_analysis.best_of_clocks(lambda: str(ir.Module.parse(text, context)), baseline_repeat)

        def run() -> None:
            bench_analysis.clear_caches()
            hlo_indexing.analyze(text)

        run()  # warm the imports of the rules it needs
        _, cpu = bench_analysis.best_of_clocks(run, repeat)
        row = {"program": name, "ops": ops, "parse_print_cpu_s": baseline, "analysis_cpu_s": cpu, "cpu_ratio": cpu / baseline}
        rows.append(row)
        print(f"bench: {name}: {ops} ops, CPU {cpu:.3f} s ({row['cpu_ratio']:.1f}x)", flush=True)
    for name, why in skipped.items():
        print(f"bench: {name}: skipped, {why}", flush=True)
    return rows
