#!/usr/bin/env python3
"""Dump every device ranking of the benchmark's training steps and of the examples, to
compare a cost-model backend before and after a change (``diff`` the two files).

For each device and each source (the compiled 1- to 8-layer training steps of
``benchmarks/bench_tiling.py`` in both its shapes, issue 19's and issue 28's,
``examples/transformer_step_cpu.hlo``, ``examples/tiling.mlir``), one JSON line per
computation: its tiling analysis as text (nodes, maps, tiles, constraints, parameters)
or why it cannot be tiled; the ranking as
``hlo-print-tilings{device=}`` computes it (one per body, through
:class:`~hlo_indexing.cost_model.ranking.DeviceRankingMemo`: the order, each ranked
tiling's estimate with its breakdown, the rejection counts and examples, the note, the
footprints of the best :data:`TOP`), then every candidate as the backend judged it (its
rejections' messages and its estimate), or the error the ranking raised. With
``--device none``, the device-blind ranking under ``hlo-print-tilings``' default budget
instead (each valid tiling's figures, the footprints of the best :data:`TOP`). Run with
the repository's ``.venv``::

    .venv/bin/python dev/ranking_dump.py --device tpu-v5e --layers 1,2,4,8 > before.jsonl
    .venv/bin/python dev/ranking_dump.py --device none --layers 1,2 --shapes 28 > before.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from hlo_indexing.cost_model.backends import evaluator
from hlo_indexing.cost_model.ranking import DeviceRanking, DeviceRankingMemo, parsed_layouts
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.devices.types import Device
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.symbolic_tiling import ranking as blind
from hlo_indexing.symbolic_tiling.footprint import declared_parameter_layouts
from hlo_indexing.symbolic_tiling.hlo_source import import_hlo
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tile_counts import Grid
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion

ROOT = Path(__file__).resolve().parent.parent
#: Footprints dumped per ranking (``hlo-print-tilings``' default ``max``).
TOP = 5
#: The device-blind ranking's budget (``hlo-print-tilings``' default, 48KiB).
BUDGET = 48 * 1024


def training_steps() -> ModuleType:
    """``benchmarks/jax_training_step.py`` (the benchmark's steps, cached there), loaded
    by path."""
    path = ROOT / "benchmarks" / "jax_training_step.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ranking_json(ranking: DeviceRanking) -> dict[str, Any]:
    """The ranking's every figure."""
    return {
        "considered": ranking.considered, "capped": ranking.capped, "note": ranking.note,
        "rejected": dict(sorted(ranking.rejected.items())),
        "examples": {rule: [list(sizes), str(rejection), rejection.subject]
                     for rule, (sizes, rejection) in sorted(ranking.examples.items())},
        "tilings": [{"rank": t.rank, "tile_sizes": list(t.tile_sizes), "estimate": t.estimate.to_json(),
                     "loses": ranking.loses(k)} for k, t in enumerate(ranking.tilings)],
        "footprints": [t.footprint.to_json() for t in ranking.tilings[:TOP]],
    }


def blind_json(ranking: blind.Ranking) -> dict[str, Any]:
    """The device-blind ranking's every figure."""
    tilings = ranking.tilings
    return {
        "valid": ranking.valid, "skipped": ranking.skipped, "capped": ranking.capped, "method": ranking.method,
        "note": ranking.note,
        "tilings": ([{"tile_sizes": list(sizes), **tilings.summary(k)} for k, sizes in enumerate(tilings.tile_sizes)]
                    if isinstance(tilings, blind.RankedTilings) else [list(t.tile_sizes) for t in tilings]),
        "footprints": [footprint.to_json() for footprint in tilings[:TOP]],
    }


def candidates_json(fusion: TiledFusion, device: Device, layouts: dict[int, Any]) -> list[dict[str, Any]]:
    """Every candidate satisfying the fusion's constraints, as the backend judged it."""
    grid = Grid.over(tuple(p.size for p in fusion.parameters))
    tiles = TileArrays(list(grid.flat_sizes) if fusion.parameters else [])
    valid = blind.constraint_mask(fusion.constraints, grid.flat_sizes, grid.total)
    judged = evaluator(device)(fusion, tiles, device, parsed_layouts(fusion, layouts, tiles))
    out = []
    for i in map(int, valid.nonzero()[0]):
        rejections = [str(r) for r in judged.rejections(i)]
        estimate = judged.estimate(i).to_json()
        out.append({"tile_sizes": [int(c[i]) for c in tiles.flat], "rejections": rejections, "estimate": estimate})
    return out


def dump(label: str, module: ir.Module | ir.Operation, device: Device | None, out: Any) -> None:
    """One JSON line per computation of ``module`` (module docstring; ``device`` None:
    the device-blind ranking)."""
    operation = module.operation if isinstance(module, ir.Module) else module
    memo = TilingMemo()
    device_memo = DeviceRankingMemo(memo)
    for name, op in computations(operation):
        record: dict[str, Any] = {"source": label, "device": device.name if device else None, "computation": name}
        try:
            fusion = memo.analyze(op)
        except HloIndexingError as exc:
            record["analysis_error"] = exc.message
            fusion = None
        if isinstance(fusion, AnalysisFailure):
            record["failure"] = fusion.reason
        elif fusion is not None:
            record["analysis"] = str(fusion)
            record["parameters"] = [repr(parameter) for parameter in fusion.parameters]
            rank(record, op, fusion, device, memo, device_memo)
        out.write(json.dumps(record, sort_keys=True) + "\n")


def rank(record: dict[str, Any], op: ir.Operation, fusion: TiledFusion, device: Device | None, memo: TilingMemo,
         device_memo: DeviceRankingMemo) -> None:
    """Add ``fusion``'s ranking to ``record`` (``device`` None: the device-blind one; with
    a device, also every candidate as the backend judged it), or the error it raised."""
    layouts, output_layouts = declared_parameter_layouts(op)
    if device is None:
        try:
            record["ranking"] = blind_json(memo.rank(fusion, BUDGET, layouts=layouts, output_layouts=output_layouts))
        except HloIndexingError as exc:
            record["ranking_error"] = exc.message
        return
    try:
        record["ranking"] = ranking_json(device_memo.rank(fusion, device, layouts=layouts, output_layouts=output_layouts))
    except HloIndexingError as exc:
        record["ranking_error"] = exc.message
    try:
        record["candidates"] = candidates_json(fusion, device, layouts)
    except HloIndexingError as exc:
        record["candidates_error"] = exc.message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", required=True, help="a bundled device name or a JSON description file; none: "
                        "the device-blind ranking")
    parser.add_argument("--layers", default="1,2,4,8", help="the training steps' layer counts ('' for none)")
    parser.add_argument("--shapes", default="19,28", help="the training steps' shapes: 19 (SIZES), 28 (ISSUE_28)")
    args = parser.parse_args()
    device = None if args.device == "none" else select_device(args.device)
    jax_training_step = training_steps()
    shapes = {"19": jax_training_step.SIZES, "28": jax_training_step.ISSUE_28}
    families = [x for x in args.shapes.split(",") if x]
    if not set(families) <= shapes.keys():
        parser.error(f"--shapes: {args.shapes!r}: each must be one of {sorted(shapes)}")
    for family in families:
        for n in [int(x) for x in args.layers.split(",") if x]:
            hlo = jax_training_step.compiled_training_step_text(n, shapes[family])
            label = f"training step L{n}" if family == "19" else f"training step {family} L{n}"
            dump(label, import_hlo(hlo, f"compiled_training_step_L{n}.hlo"), device, sys.stdout)
    for example in ("transformer_step_cpu.hlo", "tiling.mlir"):
        dump(example, parse_module(ROOT / "examples" / example), device, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
