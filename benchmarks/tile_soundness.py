"""Tile soundness on compiled programs: every element an output tile needs lies in one of
the tiles its operands are read through.

The tiling analysis claims, for each output tile of a tiling, the boxes of each fusion
parameter the tile reads (:func:`~hlo_indexing.symbolic_tiling.tile_picture.tile_picture`'s
``panel.boxes``). The fused output -> parameter maps
(:func:`~hlo_indexing.analysis.fusion.fusion_indexing`, checked against ``jax.jacfwd``
and VJP rows elsewhere) say which elements the tile needs (``panel.needed``). A needed
element outside every box is a soundness failure of the tiling (nothing is clipped).

:func:`check_module_tiles` imports compiled HLO text
(:func:`~hlo_indexing.symbolic_tiling.hlo_source.import_hlo`) and, for each fusion once
(:func:`~hlo_indexing.symbolic_tiling.tilings_report.selected_computations`; a fusion
whose body is the same as one checked before is counted, not checked again), ranks its
tilings device-blind under ``bench_tiling.BUDGET`` bytes as ``hlo-print-tilings`` does
(:class:`~hlo_indexing.symbolic_tiling.shared_bodies.TilingMemo`, layouts declared on the
fusion), or for a device as ``hlo-print-tilings{device=...}`` does
(:class:`~hlo_indexing.cost_model.ranking.DeviceRankingMemo`), and checks the best ``top``
tilings at a sample of tile ids (:func:`sample_tile_ids`: first, last and evenly between)
for each output of the fusion. The work is bounded: a budget of CPU seconds per fusion
(analysis, ranking and pictures:
:func:`~hlo_indexing.symbolic_tiling.time_budget.fusion_time_budget`) and per program
(fusions after it are not checked), the sample, and the enumeration caps of
:mod:`~hlo_indexing.symbolic_tiling.tile_picture`. What is not checked is a *skip* with
its reason (not tileable, a limit such as ``EnumerationTooLargeError``, a budget).

A tile read at runtime offsets (a gather's indices, a dynamic slice's start) is also
checked one runtime value at a time (:mod:`tile_values`: the elements the maps need at a
value against the boxes of that value), the only check of a tile with more boxes than
a picture shows (``MAX_BOXES``: a gather from a large table); ``values`` counts the
runtime-value assignments compared, ``paired_values`` those compared with the boxes of
the same value.

One inexactness of fused maps is reported in its own category, neither a failure nor
dropped: two runtime variables the tiling knows read one scalar, which the fused map
keeps apart, so it "needs any row" where the tile reads one. The fused walk makes the
starts of ``dynamic-slice`` and ``dynamic-update-slice`` one variable
(:mod:`hlo_indexing.analysis.runtime_identity`: a scan step
``dynamic-update-slice(x, f(dynamic-slice(x, i)), i)`` is exact); a start another op
reads (a gather at a scalar index) may still show it. A panel's missing elements
are put in the category *runtime variables of one value* when the parameter's fused maps
have two or more runtime variables, the tiled analysis's maps of the parameter have two
runtime variables read from one scalar value (:func:`one_value_maps`), and with those
variables made equal every element the maps need lies in a box (:func:`one_value_explains`).

``python benchmarks/tile_soundness.py FILE.hlo [...] [--top N] [--samples N] [--json OUT]``
(``--fusion-seconds``, ``--program-seconds``: the budgets; ``--allow-pad``: pads tiled
outside gemm fusions too; ``--device h100``: the tilings ranked for a device, as
``hlo-print-tilings{device=h100}`` picks them) prints one line per file, its
failures, the known inexactness and the skips by reason, and exits 1 when a file has a
failure or cannot be read.
Example::

    report = check_module_tiles(compiled.as_text(), top=3)
    report.failures      # [] when every sampled tile holds what its maps need
    report.tiles, report.elements
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import bench_tiling
import numpy as np
from tile_values import evenly_spaced, value_misses

from hlo_indexing.analysis.fusion import fusion_indexing
from hlo_indexing.cost_model.ranking import DeviceRankingMemo
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.devices.types import Device
from hlo_indexing.dialect_glue.bindings import SsaValue, ir
from hlo_indexing.errors import EnumerationTooLargeError, HloIndexingError, InvalidArgumentError, LimitExceededError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.symbolic_tiling.footprint import declared_parameter_layouts
from hlo_indexing.symbolic_tiling.hlo_source import import_hlo
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo, body_key
from hlo_indexing.symbolic_tiling.tile_picture import (
    TensorPanel, TileReads, TilePicture, needed_elements, tile_picture, tile_reads,
)
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion
from hlo_indexing.symbolic_tiling.tilings_report import selected_computations
from hlo_indexing.symbolic_tiling.time_budget import check_time, fusion_time_budget

#: Tilings checked per fusion (the best ranked), tile ids sampled per tiling.
TOP = 3
SAMPLES = 5
#: CPU seconds per fusion (analysis, ranking, pictures) and per program.
FUSION_SECONDS = 20.0
PROGRAM_SECONDS = 600.0
#: Missing elements shown per failure; failures and skips kept per program (all counted).
EXAMPLES = 3
MAX_LISTED = 50


@dataclass(frozen=True)
class Missing:
    """Needed elements of one parameter outside every box of one output tile."""

    fusion: str
    tile_sizes: tuple[int, ...]
    tile_id: int
    output: int
    parameter: int
    count: int
    examples: tuple[tuple[int, ...], ...]
    #: The runtime values the map was checked at (:mod:`tile_values`); None: every value.
    value: tuple[int, ...] | None = None

    def __str__(self) -> str:
        at = "" if self.value is None else f" at runtime values {list(self.value)}"
        return (f"{self.fusion}: tile sizes {list(self.tile_sizes)}, tile {self.tile_id}, output {self.output}: "
                f"parameter {self.parameter}{at} misses {self.count} needed elements, e.g. {list(self.examples)}")


@dataclass(frozen=True)
class Skip:
    """A fusion or tiling not (wholly) checked, and why."""

    fusion: str
    reason: str
    tile_sizes: tuple[int, ...] | None = None

    def __str__(self) -> str:
        at = f" at tile sizes {list(self.tile_sizes)}" if self.tile_sizes is not None else ""
        return f"{self.fusion}{at}: {self.reason}"


@dataclass
class TileReport:
    """What :func:`check_module_tiles` checked and found. ``fusions`` counts each fusion
    once; ``tiled`` those the analysis tiles and whose ranking holds a tiling,
    ``repeated`` those skipped as the same body as one checked before; ``tilings``,
    ``tiles`` (one output of one tile id) and ``elements`` (needed elements compared)
    what was compared, ``values`` and ``paired_values`` the runtime-value assignments
    compared (module docstring), ``checked`` the fusions with a tile compared. ``failures`` and
    ``one_value`` (the known inexactness, see the module docstring) list at most
    :data:`MAX_LISTED` entries, ``failed`` and ``one_value_count`` count them all;
    ``skips`` lists at most as many, ``skip_reasons`` counts every skip by its reason
    (names and numbers replaced). ``seconds``: CPU time."""

    fusions: int = 0
    tiled: int = 0
    repeated: int = 0
    tilings: int = 0
    tiles: int = 0
    values: int = 0
    paired_values: int = 0
    #: The tilings compared (fusion, tile sizes), at most :data:`MAX_LISTED`; ``device``:
    #: the device whose ranking chose them (None: device-blind).
    sizes: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    device: str | None = None
    elements: int = 0
    failed: int = 0
    one_value_count: int = 0
    checked: list[str] = field(default_factory=list)
    failures: list[Missing] = field(default_factory=list)
    one_value: list[Missing] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    skip_reasons: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def skip(self, entry: Skip) -> None:
        """Count ``entry`` under its reason; keep the first :data:`MAX_LISTED`."""
        reason = bench_tiling.reason_class(entry.reason)
        self.skip_reasons[reason] = self.skip_reasons.get(reason, 0) + 1
        if len(self.skips) < MAX_LISTED:
            self.skips.append(entry)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return asdict(self)

    def summary(self) -> str:
        """One line: the counts."""
        return (f"{self.fusions} fusions ({self.tiled} tiled, {self.repeated} repeated bodies), "
                f"{self.tilings} tilings, {self.tiles} tiles "
                f"({self.values} runtime values, {self.paired_values} paired), "
                f"{self.elements} elements: {self.failed} failures, "
                f"{self.one_value_count} runtime variables of one value, {sum(self.skip_reasons.values())} skips, "
                f"{self.seconds:.1f} s")


def sample_tile_ids(num_tiles: int, samples: int = SAMPLES) -> list[int]:
    """At most ``samples`` (>= 2) tile ids of ``[0, num_tiles)``: the first, the last and
    evenly spaced between (every ``num_tiles / 4``-th for 5)."""
    return evenly_spaced(num_tiles, samples)


def missing_elements(panel: TensorPanel) -> list[tuple[int, ...]]:
    """The elements of ``panel.needed`` that lie in no box of ``panel.boxes``, sorted
    (:meth:`~hlo_indexing.symbolic_tiling.tile_picture.Box.contains`, numpy over the
    elements)."""
    if not panel.needed:
        return []
    rank = len(next(iter(panel.needed)))
    needed = np.array(list(panel.needed), dtype=np.int64).reshape(len(panel.needed), rank)
    covered = np.zeros(len(needed), dtype=bool)
    for box in panel.boxes:
        inside = np.ones(len(needed), dtype=bool)
        for d in range(rank):
            indices = box.indices(d)
            column = needed[:, d]
            if not indices:
                inside[:] = False
                break
            aligned = (column - indices.start) % indices.step == 0
            inside &= (column >= indices.start) & (column <= indices[-1]) & aligned
        covered |= inside
    return sorted(tuple(row) for row in needed[~covered].tolist())


def _is_scalar(value: SsaValue) -> bool:
    return isinstance(value.type, ir.ShapedType) and ir.ShapedType(value.type).rank == 0


def one_value_maps(fusion: TiledFusion, parameter: int) -> list[IndexingMap]:
    """The tiled analysis's maps of ``parameter`` (one per node reading it) with each two
    runtime variables read from the same scalar value (:attr:`TiledFusion.runtime_sources`)
    constrained equal; [] when no map has two such variables. A tensor source (a gather's
    indices) is read at different elements and never counts as one value."""
    maps, equated = [], False
    for node in fusion.nodes:
        if node.parameter_number != parameter:
            continue
        m = node.indexing_map
        by_source: dict[SsaValue, list[int]] = {}
        for j, variable in enumerate(m.runtime_vars):
            source = fusion.runtime_sources.get(variable.origin)
            if source is not None and _is_scalar(source):
                by_source.setdefault(source, []).append(len(m.range_vars) + j)
        pairs = [(group[0], other) for group in by_source.values() for other in group[1:]]
        if pairs:
            equated = True
            m = m.add_constraints(
                (ax.add(ax.symbol(a, m.context), ax.mul(ax.symbol(b, m.context), -1)), (0, 0)) for a, b in pairs
            )
        maps.append(m)
    return maps if equated else []


def one_value_explains(
    fusion: TiledFusion, op: ir.Operation, picture: TilePicture, output: int, panel: TensorPanel
) -> bool:
    """Whether ``panel``'s missing elements are the known inexactness of the module
    docstring: the parameter's fused maps have two or more runtime variables, and with
    the runtime variables of the tiled analysis's maps that read one scalar value made
    equal (:func:`one_value_maps`), every element those maps need for the tile lies in a
    box. Only for output 0 without contracting parameters (the analysis's maps are
    defined over its dimensions)."""
    if output != 0 or len(fusion.parameters) != len(picture.output.shape):
        return False
    fused = fusion_indexing(op.regions[0], output).maps[panel.index]
    if not any(len(m.runtime_vars) >= 2 for m in fused):
        return False
    maps = one_value_maps(fusion, panel.index)
    if not maps:
        return False
    needed = needed_elements(frozenset(maps), picture.output.boxes, f"{picture.label}: parameter {panel.index}", None)
    return not missing_elements(replace(panel, needed=needed))


def _picture(op: ir.Operation, sizes: tuple[int, ...], tile_id: int, output: int, label: str,
             allow_pad: bool) -> TilePicture | None:
    """:func:`tile_picture` of one tile, or None when an operand has more boxes than a
    picture shows (``MAX_BOXES``: such a tile is checked one runtime value at a time)."""
    try:
        return tile_picture(op, sizes, tile_id, output=output, label=label, allow_pad=allow_pad)
    except EnumerationTooLargeError as exc:
        if exc.limit == "MAX_BOXES":
            return None
        raise


def _record(report: TileReport, entry: Missing, known: bool) -> None:
    """Count ``entry`` as the known inexactness (``known``) or a failure; keep the first."""
    if known:
        report.one_value_count += 1
        target = report.one_value
    else:
        report.failed += 1
        target = report.failures
    if len(target) < MAX_LISTED:
        target.append(entry)


def _compare_picture(
    op: ir.Operation, fusion: TiledFusion, picture: TilePicture, output: int, report: TileReport
) -> None:
    """The union check of one tile: every needed element in some box."""
    for panel in picture.operands:
        report.elements += len(panel.needed)
        missing = missing_elements(panel)
        if missing:
            entry = Missing(picture.label, picture.tile_sizes, picture.tile_id, output, panel.index, len(missing),
                            tuple(missing[:EXAMPLES]))
            _record(report, entry, one_value_explains(fusion, op, picture, output, panel))


def _compare_values(
    fusion: TiledFusion, reads: TileReads, output: int, every_parameter: bool, report: TileReport
) -> None:
    """The check one runtime value at a time (:mod:`tile_values`) of the parameters read
    at runtime offsets, or of ``every_parameter`` (a tile without picture)."""
    for parameter in reads.operands:
        runtime = any(b.values.shape[1] for b in parameter.boxes) or any(m.runtime_vars for m in parameter.maps)
        if not (runtime or every_parameter):
            continue
        check = value_misses(reads, parameter)
        report.values += check.checked
        report.paired_values += check.paired
        report.elements += check.compared
        for miss in check.misses:
            entry = Missing(reads.label, reads.tile_sizes, reads.tile_id, output, parameter.index, len(miss.missing),
                            miss.missing[:EXAMPLES], miss.value)
            _record(report, entry, len(miss.value) >= 2 and bool(one_value_maps(fusion, parameter.index)))


def _check_tiling(
    op: ir.Operation, fusion: TiledFusion, label: str, sizes: tuple[int, ...], samples: int, allow_pad: bool,
    report: TileReport,
) -> None:
    """Compare the sampled tiles of one tiling at every output of ``op``: the union check
    of its picture, and one runtime value at a time where offsets are runtime values or
    the tile has too many boxes for a picture."""
    first = tile_reads(op, sizes, 0, label=label, allow_pad=allow_pad)
    report.tilings += 1
    if len(report.sizes) < MAX_LISTED:
        report.sizes.append((label, sizes))
    for output in range(len(fusion.root_candidates)):
        for tile_id in sample_tile_ids(first.num_tiles, samples):
            check_time("checking the tiles")
            picture = _picture(op, sizes, tile_id, output, label, allow_pad)
            report.tiles += 1
            if label not in report.checked[-1:]:
                report.checked.append(label)
            if picture is not None:
                _compare_picture(op, fusion, picture, output, report)
            if picture is None or fusion.runtime_sources:
                reads = (first if (tile_id, output) == (0, 0)
                         else tile_reads(op, sizes, tile_id, output=output, label=label, allow_pad=allow_pad))
                _compare_values(fusion, reads, output, picture is None, report)


def _best_tilings(
    op: ir.Operation, fusion: TiledFusion, memo: DeviceRankingMemo, device: Device | None, top: int
) -> tuple[list[tuple[int, ...]], str]:
    """The best ``top`` tile sizes of ``fusion`` as ``hlo-print-tilings`` ranks them:
    device-blind under ``bench_tiling.BUDGET`` bytes, or for ``device``
    (``hlo-print-tilings{device=...}``); with the reason when there are none."""
    layouts, output_layouts = declared_parameter_layouts(op)
    if device is None:
        ranking = memo.tiling_memo.rank(fusion, bench_tiling.BUDGET, layouts=layouts, output_layouts=output_layouts)
        sizes = [tuple(footprint.tile_sizes) for footprint in ranking.tilings[:top]]
        return sizes, f"no tiling within {bench_tiling.BUDGET} bytes ({ranking.valid} valid)"
    on_device = memo.rank(fusion, device, layouts=layouts, output_layouts=output_layouts)
    sizes = [tuple(tiling.tile_sizes) for tiling in on_device.tilings[:top]]
    return sizes, f"no tiling legal on {device.name} ({on_device.considered} considered)"


def _check_fusion(
    op: ir.Operation, label: str, memo: DeviceRankingMemo, device: Device | None, top: int, samples: int,
    allow_pad: bool, report: TileReport,
) -> None:
    """Analyse, rank and check the best ``top`` tilings of one fusion (inside its budget)."""
    fusion = memo.tiling_memo.analyze(op, allow_pad=allow_pad)
    if isinstance(fusion, AnalysisFailure):
        report.skip(Skip(label, f"not tileable: {fusion.reason}"))
        return
    best, none_reason = _best_tilings(op, fusion, memo, device, top)
    if not best:
        report.skip(Skip(label, none_reason))
        return
    report.tiled += 1
    for sizes in best:
        try:
            _check_tiling(op, fusion, label, sizes, samples, allow_pad, report)
        except LimitExceededError as exc:
            if exc.limit == "FUSION_SECONDS":
                raise
            report.skip(Skip(label, f"{type(exc).__name__}: {exc.message}", sizes))
        except HloIndexingError as exc:
            report.skip(Skip(label, f"{type(exc).__name__}: {exc.message}", sizes))


def check_module_tiles(
    hlo: str | ir.Module,
    *,
    top: int = TOP,
    samples: int = SAMPLES,
    fusion_seconds: float = FUSION_SECONDS,
    time_budget_s: float = PROGRAM_SECONDS,
    allow_pad: bool = False,
    device: str | Device | None = None,
    filename: str = "<hlo>",
) -> TileReport:
    """Check the tiles of every fusion of compiled HLO text (or its imported module), as
    the module docstring says: the best ``top`` tilings of each, ``samples`` tile ids per
    tiling, ``fusion_seconds`` CPU seconds per fusion and ``time_budget_s`` per program
    (a budget <= 0: none); ``allow_pad``: pads are tiled wherever they are, as
    ``hlo-print-tilings{allow-pad}`` (else only in gemm fusions, XLA's rule); ``device``
    (a bundled name such as ``h100`` or ``tpu-v5e``, a JSON description or a device): the
    best tilings of the ranking for that device, as ``hlo-print-tilings{device=...}``
    (not with ``allow_pad``, which that pass takes only without a device). Raises
    :class:`~hlo_indexing.errors.HloIndexingError` when the text cannot be imported or
    the device is unknown or given with ``allow_pad``; a fusion's own errors are skips."""
    start = time.process_time()
    target = None if device is None else select_device(device)
    if target is not None and allow_pad:
        raise InvalidArgumentError("allow_pad is only for the device-blind ranking (hlo-print-tilings{device=...} "
                                   "tiles pads only in gemm fusions)")
    module = import_hlo(hlo, filename) if isinstance(hlo, str) else hlo
    report = TileReport(device=None if target is None else target.name)
    memo = DeviceRankingMemo(TilingMemo())
    seen: set[object] = set()
    fusions = selected_computations(module.operation, "")
    fusions = [(label, op) for label, op in fusions if op.name == "mhlo.fusion"]
    report.fusions = len(fusions)
    for k, (label, op) in enumerate(fusions):
        if time_budget_s > 0 and time.process_time() - start > time_budget_s:
            for later, _ in fusions[k:]:
                report.skip(Skip(later, f"not checked: the program's budget of {time_budget_s:g} CPU seconds is spent"))
            break
        key = body_key(op)[0]
        if key in seen:
            report.repeated += 1
            continue
        seen.add(key)
        try:
            with fusion_time_budget(fusion_seconds):
                _check_fusion(op, label, memo, target, top, samples, allow_pad, report)
        except LimitExceededError as exc:
            report.skip(Skip(label, f"{type(exc).__name__}: {exc.message}"))
        except HloIndexingError as exc:
            report.skip(Skip(label, f"{type(exc).__name__}: {exc.message}"))
    report.seconds = time.process_time() - start
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI (module docstring): 0 when no file has a failure, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="compiled HLO text files (`.compile().as_text()`)")
    parser.add_argument("--top", type=int, default=TOP, help="best-ranked tilings checked per fusion")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="tile ids sampled per tiling (>= 2)")
    parser.add_argument("--fusion-seconds", type=float, default=FUSION_SECONDS, help="CPU seconds per fusion")
    parser.add_argument("--program-seconds", type=float, default=PROGRAM_SECONDS, help="CPU seconds per file")
    parser.add_argument("--allow-pad", action="store_true", help="tile pads outside gemm fusions too")
    parser.add_argument("--device", help="check the best tilings ranked for this device (h100, tpu-v5e, a JSON file)")
    parser.add_argument("--json", type=Path, help="write the reports (one per file) as JSON")
    options = parser.parse_args(argv)
    if options.samples < 2 or options.top < 1:
        parser.error("--samples must be at least 2 and --top at least 1")
    if options.device is not None and options.allow_pad:
        parser.error("--allow-pad is only for the device-blind ranking")
    reports: dict[str, Any] = {}
    status = 0
    for path in options.files:
        try:
            report = check_module_tiles(path.read_text(), top=options.top, samples=options.samples,
                                        fusion_seconds=options.fusion_seconds, time_budget_s=options.program_seconds,
                                        allow_pad=options.allow_pad, device=options.device,
                                        filename=str(path))
        except (OSError, HloIndexingError) as exc:
            print(f"{path}: error: {exc}", flush=True)
            reports[str(path)] = {"error": str(exc)}
            status = 1
            continue
        print(f"{path}: {report.summary()}", flush=True)
        for entry in report.failures:
            print(f"  FAILURE {entry}")
        for entry in report.one_value:
            print(f"  runtime variables of one value: {entry}")
        for reason, count in sorted(report.skip_reasons.items(), key=lambda item: -item[1]):
            print(f"  skipped {count}x: {reason}")
        reports[str(path)] = report.to_json()
        status |= int(report.failed > 0)
    if options.json:
        options.json.write_text(json.dumps(reports, indent=2) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
