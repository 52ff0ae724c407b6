"""Benchmark: the tiling analysis of every fusion of XLA-compiled JAX training steps
against MLIR's C++ parse + print of the same step's StableHLO text (issue #19).

For each layer count (:data:`jax_training_step.LAYERS`) the step is compiled by XLA's CPU
backend (:func:`jax_training_step.compiled_training_step_text`, cached) and its HLO text
imported once (XLA's parser and translator in an isolated child: timed, reported as
``import_s``, not part of the ratio). The timed work, best of ``repeat``, every cache
cleared first, is the tiled fusion analysis of each ``mhlo.fusion``
(:func:`~hlo_indexing.symbolic_tiling.tiled_fusion.analyze_fusion`) and, when it tiles,
every valid tiling ranked under ``budget`` bytes with its figures (bytes per tile, bytes
moved, tiles, programs: :func:`~hlo_indexing.symbolic_tiling.ranking.rank_tilings`,
operand layouts from the fusion's ``hlo_indexing.layout`` attributes). Building the
best :data:`TOP` :class:`~hlo_indexing.symbolic_tiling.footprint.Footprint` objects of
each fusion (per operand detail; what ``hlo-print-tilings`` prints besides) is timed
apart, once (``footprints_s``). The baseline is ``ir.Module.parse`` +
``str()`` of the step's StableHLO text (``.lower(...).as_text()``), best of
``baseline_repeat``. Both are also timed in CPU time of the process (``*_cpu_s``,
``cpu_ratio``), which a loaded machine (2 cores shared by several jobs) distorts less
than wall-clock time. Growth per doubling compares consecutive layer counts (2.0 is
linear in layers, and so in fusions, which grow with them).

A fusion the analysis cannot tile counts as not tileable under its reason (names and
numbers replaced, so equal reasons group); a ranking refused with an
``HloIndexingError`` counts the same way; anything else is a crash and stops the
benchmark. Example::

    rows = measure([1, 2])
    rows[0]["ratio"]       # tiling time / (parse + print) time
    rows[0]["reasons"]     # {reason: count} of the fusions not tiled
"""

from __future__ import annotations

import collections
import math
import re
import time
from typing import Any

import bench_analysis
import jax_training_step

from hlo_indexing.cost_model.ranking import DeviceRanking, DeviceRankingMemo, RankedTiling
from hlo_indexing.devices.types import Device
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.symbolic_tiling.footprint import declared_parameter_layouts
from hlo_indexing.symbolic_tiling.hlo_source import import_hlo
from hlo_indexing.symbolic_tiling.ranking import Ranking
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure

#: The per-tile footprint budget of ``hlo-print-tilings`` (its default, 48KiB).
BUDGET = 48 * 1024
#: Footprints ``hlo-print-tilings`` prints per fusion (its default ``max``).
TOP = 5


def reason_class(reason: str) -> str:
    """``reason`` with maps, instruction names and numbers replaced, so that the same
    failure on different fusions groups together."""
    reason = re.sub(r"\([^()]*\) -> \(.*?\)(, domain: [^:]*?(?=(: | for |$)))?", "<map>", reason)
    reason = re.sub(r"\b[A-Za-z_][\w-]*\.\d+\b", "<name>", reason)
    return re.sub(r"\d+", "N", reason)


def _ops_in(region: ir.Region) -> int:
    """Ops in ``region``, nested regions included."""
    count, pending = 0, [region]
    while pending:
        for block in pending.pop().blocks:
            for op in block.operations:
                count += 1
                pending.extend(op.regions)
    return count


def tile_all(fusions: list[ir.Operation], budget: int = BUDGET, top: int = 0,
             device: Device | None = None) -> dict[str, Any]:
    """Analyse and rank every fusion (the timed work); counts and reasons. With ``top``,
    also build the best ``top`` footprints of each (what ``hlo-print-tilings`` prints),
    timed apart as ``footprints_s``. With ``device``, the ranking is the device's:
    every candidate judged by its cost model (its rules and estimated time,
    :func:`~hlo_indexing.cost_model.ranking.rank_for_device`, one ranking per distinct
    body as ``hlo-print-tilings{device=}`` does); ``ranked_tilings`` then counts the
    legal ones, ``rejected`` the candidates per broken rule."""
    reasons: collections.Counter[str] = collections.Counter()
    rejected: collections.Counter[str] = collections.Counter()
    tiled = valid = ranked = skipped = capped = per_tiling = 0
    most_valid = 0
    analysis_s = ranking_s = footprints_s = 0.0
    memo = TilingMemo()
    device_memo = DeviceRankingMemo(memo)
    for op in fusions:
        start = time.perf_counter()
        fusion = memo.analyze(op)
        middle = time.perf_counter()
        analysis_s += middle - start
        if isinstance(fusion, AnalysisFailure):
            reasons[reason_class(fusion.reason)] += 1
            continue
        layouts, output_layouts = declared_parameter_layouts(op)
        try:
            ranking: Ranking | DeviceRanking = (
                device_memo.rank(fusion, device, layouts=layouts, output_layouts=output_layouts) if device is not None
                else memo.rank(fusion, budget, layouts=layouts, output_layouts=output_layouts))
        except HloIndexingError as exc:
            reasons["ranking: " + reason_class(exc.message)] += 1
            continue
        finally:
            ranking_s += time.perf_counter() - middle
        tiled += 1
        if isinstance(ranking, DeviceRanking):
            considered = ranking.considered
            rejected.update(ranking.rejected)
        else:
            considered = ranking.valid
            skipped += ranking.skipped
            per_tiling += ranking.method == "per-tiling"
        valid += considered
        most_valid = max(most_valid, considered)
        ranked += len(ranking.tilings)
        capped += bool(ranking.capped)
        if top:
            start = time.perf_counter()
            for tiling in ranking.tilings[:top]:
                _ = tiling.footprint if isinstance(tiling, RankedTiling) else tiling
            footprints_s += time.perf_counter() - start
    return {
        "tiled": tiled, "not_tileable": len(fusions) - tiled, "reasons": dict(reasons.most_common()),
        "valid_tilings": valid, "most_valid_tilings": most_valid, "ranked_tilings": ranked,
        "skipped_tilings": skipped, "capped_fusions": capped, "per_tiling_fusions": per_tiling,
        "analysis_s": analysis_s, "ranking_s": ranking_s, "footprints_s": footprints_s,
        **({"device": device.name, "rejected": dict(rejected.most_common())} if device is not None else {}),
    }


def measure(
    layers: list[int], repeat: int = 3, baseline_repeat: int = 7, shape: tuple[int, int, int, int] = jax_training_step.SIZES,
    device: Device | None = None,
) -> list[dict[str, Any]]:
    """One row per layer count of the step at ``shape`` (:data:`jax_training_step.SIZES`,
    or :data:`jax_training_step.ISSUE_28`: batched, with layer-norm backward fusions):
    fusions, tiled / not tileable (with reasons), valid tilings, ops in the fusions'
    bodies, parse+print s, import s, tiling s (analysis + ranking, and each), ratio,
    growth per doubling of the layers (None for the first row) and, in CPU time, per
    doubling of the ops in fusion bodies (the analysis's input: XLA's fusions grow with
    the layers, so the bodies' ops grow faster than the fusions). With ``device``, the
    rankings are the device's (:func:`tile_all`)."""
    context = make_context()
    rows: list[dict[str, Any]] = []
    for n in layers:
        stablehlo = jax_training_step.training_step_text(n, shape)
        hlo = jax_training_step.compiled_training_step_text(n, shape)
        start = time.perf_counter()
        module = import_hlo(hlo, f"compiled_training_step_L{n}.hlo")
        import_s = time.perf_counter() - start
        fusions = [op for _, op in computations(module.operation) if op.name == "mhlo.fusion"]
        body_ops = sum(_ops_in(op.regions[0]) for op in fusions)
        kinds = collections.Counter(str(op.attributes["fusion_kind"]).split()[-1].rstrip(">") for op in fusions)
        baseline, baseline_cpu = bench_analysis.best_of_clocks(lambda: str(ir.Module.parse(stablehlo, context)), baseline_repeat)
        if not rows:
            tile_all(fusions[:20], device=device)  # warm the imports
        results: list[dict[str, Any]] = []

        def run() -> None:
            bench_analysis.clear_caches()
            results.append(tile_all(fusions, device=device))

        seconds, cpu = bench_analysis.best_of_clocks(run, repeat)
        best = min(results, key=lambda r: r["analysis_s"] + r["ranking_s"])
        bench_analysis.clear_caches()
        best["footprints_s"] = tile_all(fusions, top=TOP, device=device)["footprints_s"]
        row = {"layers": n, "fusions": len(fusions), "body_ops": body_ops, "fusion_kinds": dict(kinds), **best,
               "parse_print_s": baseline,
               "import_s": import_s, "tiling_s": seconds, "ratio": seconds / baseline, "parse_print_cpu_s": baseline_cpu,
               "tiling_cpu_s": cpu, "cpu_ratio": cpu / baseline_cpu, "growth_per_doubling": None}
        if rows:
            previous = rows[-1]
            exponent = 1 / math.log2(n / previous["layers"])
            row["growth_per_doubling"] = (seconds / previous["tiling_s"]) ** exponent
            row["cpu_growth_per_doubling"] = (cpu / previous["tiling_cpu_s"]) ** exponent
            row["cpu_growth_per_doubling_of_ops"] = (cpu / previous["tiling_cpu_s"]) ** (
                1 / math.log2(body_ops / previous["body_ops"])
            )
        rows.append(row)
        on = f" on {device.name}" if device is not None else ""
        print(f"bench: tiling{on} of the compiled {n}-layer step {shape}: {len(fusions)} fusions ({best['tiled']} tiled), "
              f"{best['valid_tilings']} valid tilings, {seconds:.3f} s, {row['ratio']:.0f}x ({row['cpu_ratio']:.0f}x in CPU time)",
              flush=True)
    return rows
