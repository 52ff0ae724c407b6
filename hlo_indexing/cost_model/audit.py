"""XLA's own tiling choices, audited: for every fusion of an XLA GPU HLO dump whose
``backend_config`` holds a ``block_level_fusion_config`` (the output tiles, warps, CTAs
and stages XLA chose for its Triton emitter), :func:`audit_tilings` reports

* the tiling those block-level parameters name (XLA's ``TilingFromAnnotatedFusion``:
  each dot's contracting tile sizes from its own ``backend_config``), or why none;
* whether it is legal on the device: Triton's emitter constraints, the fusion's own
  tiling constraints, XLA's register rule (:mod:`.gpu_ranking`), and that the config
  names one output tile list per output equal to the tiles the tiling gives each
  output (``xla.output-tiles``) and launches at most the device's threads per block
  (``gpu.threads-per-block``);
* whether its tiles cover each output exactly once (every element written by one
  program; checked by enumeration, :func:`~hlo_indexing.symbolic_tiling.tiled_computation.check_partition`);
* its estimated time with XLA's warps and stages (:func:`~.gpu.estimate_symbolic`)
  against the best tiling this project finds on the device (:mod:`.ranking`, XLA's warp
  heuristic), and what makes them differ, in words.

The dump's fusions reach the audit as ``mhlo.fusion`` ops of an imported module, whose
``hlo_indexing.backend_config`` attribute keeps each instruction's ``backend_config``
(:mod:`hlo_indexing.dialect_glue.hlo_import`). Example::

    audits = audit_tilings(parse_module(Path("gpu_after_optimizations.txt")), "h100")
    [str(a) for a in audits]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from hlo_indexing.cost_model.backends import assess_tiling
from hlo_indexing.cost_model.block_level import (
    BlockLevelParameters,
    fusion_block_level_config,
    parse_backend_config,
    symbolic_tiling_sizes,
)
from hlo_indexing.cost_model.device_report import device_json
from hlo_indexing.cost_model.estimate import Estimate, Rejection, time_text
from hlo_indexing.cost_model.explain import why_slower
from hlo_indexing.cost_model.gpu import estimate_symbolic
from hlo_indexing.cost_model.ranking import DeviceRankingMemo
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.devices.types import Device, GpuDevice, TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.hlo_import import BACKEND_CONFIG_ATTR
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.errors import HloIndexingError, TilingError, UnsupportedError
from hlo_indexing.schema import load_schema
from hlo_indexing.symbolic_tiling.footprint import declared_parameter_layouts
from hlo_indexing.symbolic_tiling.hlo_source import instruction_name
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation, check_partition, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, defining_op


@dataclass(frozen=True)
class FusionAudit:
    """One fusion's audit (module docstring). ``failure`` says why the rest could not be
    worked out (no analysis, a config naming no tiling); ``covers_once`` is None when
    the tiled computation could not be built."""

    name: str
    location: str
    params: BlockLevelParameters
    tile_sizes: tuple[int, ...] | None = None
    failure: str | None = None
    rejections: tuple[Rejection, ...] = ()
    covers_once: bool | None = None
    coverage: str = ""
    estimate: Estimate | None = None
    best_tile_sizes: tuple[int, ...] | None = None
    best_params: BlockLevelParameters | None = None
    best_estimate: Estimate | None = None
    difference: str = ""

    @property
    def legal(self) -> bool:
        """True when XLA's tiling breaks no rule of the device."""
        return self.failure is None and not self.rejections

    @property
    def ratio(self) -> float | None:
        """XLA's estimated time over the best's (None when either is missing)."""
        if self.estimate is None or self.best_estimate is None or not self.best_estimate.exec_time_ns:
            return None
        return self.estimate.exec_time_ns / self.best_estimate.exec_time_ns

    def __str__(self) -> str:
        chosen = _params_text(self.params)
        if self.failure is not None:
            return f"{self.name}: XLA's tiling {chosen}: {self.failure}"
        verdict = "legal" if self.legal else "not legal (" + "; ".join(str(r) for r in self.rejections) + ")"
        parts = [f"{self.name}: XLA's tiling {chosen} is {verdict}", self.coverage]
        if self.estimate is not None:
            parts.append(f"estimated {time_text(self.estimate.exec_time_ns)}")
        if self.best_estimate is not None and self.best_params is not None:
            ratio = self.ratio
            parts.append(f"the best found {_params_text(self.best_params)}: {time_text(self.best_estimate.exec_time_ns)}"
                         + (f" ({ratio:.3g}x)" if ratio is not None else ""))
        if self.difference:
            parts.append(self.difference)
        return "; ".join(p for p in parts if p)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _params_text(params: BlockLevelParameters) -> str:
    tiles = " ".join(str(list(t)) for t in params.output_tile_sizes) or "[]"
    return f"{tiles} ({_plural(params.num_warps, 'warp')}, {_plural(params.num_stages, 'stage')})"


def fusion_config(op: ir.Operation) -> BlockLevelParameters | None:
    """The block-level parameters in an ``mhlo.fusion``'s backend config, if any."""
    if BACKEND_CONFIG_ATTR not in op.attributes:
        return None
    text = ir.StringAttr(op.attributes[BACKEND_CONFIG_ATTR]).value
    config = fusion_block_level_config(parse_backend_config(text, f"backend_config of {instruction_name(op)}"))
    return None if config is None else BlockLevelParameters.from_config(config)


def dot_tile_sizes(fusion: TiledFusion) -> dict[str, tuple[int, ...]]:
    """The contracting tile sizes (``backend_config`` ``sizes``) of the fusion's dots."""
    found = {}
    for node in fusion.nodes:
        op = defining_op(node.value) if node.opcode == "dot" else None
        if op is None or BACKEND_CONFIG_ATTR not in op.attributes:
            continue
        config = parse_backend_config(ir.StringAttr(op.attributes[BACKEND_CONFIG_ATTR]).value,
                                      f"backend_config of {node.name}")
        sizes = config.get("sizes")
        if isinstance(sizes, list):
            found[node.name] = tuple(int(s) for s in sizes)
    return found


def _coverage(computation: TiledComputation) -> tuple[bool, str]:
    for k, root in enumerate(computation.roots):
        try:
            check_partition(root, computation.num_programs, computation.roots[0])
        except TilingError as error:
            return False, f"output {k} is not covered exactly once ({error.message})"
    return True, "covers its output exactly once" if len(computation.roots) == 1 else \
        f"covers each of its {len(computation.roots)} outputs exactly once"


def _config_rejections(params: BlockLevelParameters, computation: TiledComputation,
                       device: GpuDevice) -> list[Rejection]:
    found = []
    roots = computation.roots
    if len(params.output_tile_sizes) != len(roots):
        found.append(Rejection("xla.output-tiles", f"the config names {len(params.output_tile_sizes)} output tile lists, "
                               f"the fusion has {len(roots)} outputs"))
    for k, (given, root) in enumerate(zip(params.output_tile_sizes, roots)):
        if tuple(given) != tuple(root.tile_sizes):
            found.append(Rejection("xla.output-tiles", f"output {k} ({root.name}): the config says {list(given)}, the "
                                   f"tiling gives it {list(root.tile_sizes)}", root.name))
    threads = params.num_warps * device.threads_per_warp
    if not 0 < threads <= device.threads_per_block_limit:
        found.append(Rejection("gpu.threads-per-block", f"{params.num_warps} warps are {threads} threads per block; "
                               f"the device allows 1 to {device.threads_per_block_limit}"))
    return found


def _difference(chosen: Estimate, best: Estimate, params: BlockLevelParameters, best_params: BlockLevelParameters,
                same_tiles: bool) -> str:
    if chosen.is_infinite:
        return "the model estimates it as infinite (a tile larger than the register rule allows)"
    stages = (f"; XLA's {_plural(params.num_stages, 'stage')} pipeline the dots' loads (the search estimates with "
              f"{best_params.num_stages})" if params.num_stages > 1 and best_params.num_stages != params.num_stages else "")
    return _difference_text(chosen, best, params, best_params, same_tiles) + stages


def _difference_text(chosen: Estimate, best: Estimate, params: BlockLevelParameters, best_params: BlockLevelParameters,
                     same_tiles: bool) -> str:
    if same_tiles and params.num_warps == best_params.num_warps:
        return "it is the best tiling found"
    if same_tiles:
        return (f"the same tiles as the best found; XLA's {params.num_warps} warps instead of the heuristic's "
                f"{best_params.num_warps}: " + (why_slower(best, chosen) if chosen.exec_time_ns > best.exec_time_ns
                                                  else "no slower"))
    if chosen.exec_time_ns >= best.exec_time_ns:
        return "slower than the best found: " + why_slower(best, chosen)
    return "faster than the best found with XLA's warp heuristic: " + why_slower(chosen, best).replace(
        "+", "the best takes +", 1)


def audit_fusion(op: ir.Operation, device: GpuDevice, params: BlockLevelParameters,
                 memo: DeviceRankingMemo | None = None) -> FusionAudit:
    """The audit of one ``mhlo.fusion`` with XLA's block-level parameters ``params``."""
    memo = memo or DeviceRankingMemo(TilingMemo())
    where = location_of(op.location)
    name = instruction_name(op) or op.name
    base = FusionAudit(name, str(where) if where is not None else str(op.location), params)
    analysis = memo.tiling_memo.analyze(op)  # pads in gemm fusions only, as XLA
    if isinstance(analysis, AnalysisFailure):
        return replace(base, failure=f"the fusion cannot be tiled: {analysis.reason}")
    try:
        sizes = tuple(symbolic_tiling_sizes(analysis, params, dot_tile_sizes(analysis)))
    except TilingError as error:
        return replace(base, failure=f"the config names no tiling: {error}")
    judged = assess_tiling(analysis, sizes, device)
    rejections = list(judged.rejections)
    layouts, output_layouts = declared_parameter_layouts(op)
    try:
        computation = tiled_computation(analysis, list(sizes), constraints_are_known_satisfied=True)
    except TilingError as error:
        return replace(base, tile_sizes=sizes, rejections=tuple(rejections), coverage=f"no tiled computation: {error}")
    rejections += _config_rejections(params, computation, device)
    covers, coverage = _coverage(computation)
    chosen = estimate_symbolic(analysis, sizes, device, params.num_warps or None, max(params.num_stages, 1),
                               tma=params.is_tma_allowed, computation=computation)
    ranking = memo.rank(analysis, device, layouts=layouts, output_layouts=output_layouts)
    audit = replace(base, tile_sizes=sizes, rejections=tuple(rejections), covers_once=covers, coverage=coverage,
                     estimate=chosen)
    if not ranking.tilings:
        return replace(audit, difference=f"no tiling is legal on {device.name}")
    best = ranking.tilings[0]
    best_computation = tiled_computation(analysis, list(best.tile_sizes), constraints_are_known_satisfied=True)
    best_params = BlockLevelParameters(tuple(tuple(r.tile_sizes) for r in best_computation.roots),
                                       num_warps=best.estimate.num_warps or 1)
    difference = _difference(chosen, best.estimate, params, best_params, best.tile_sizes == sizes)
    return replace(audit, best_tile_sizes=best.tile_sizes, best_params=best_params, best_estimate=best.estimate,
                    difference=difference)


def audit_tilings(
    module: ir.Module | ir.Operation,
    device: str | os.PathLike[str] | GpuDevice | TpuDevice = "h100",
    *,
    function: str = "",
) -> list[FusionAudit]:
    """The audit of every fusion of ``module`` (an HLO dump imported by
    :func:`hlo_indexing.parse_module`; only those in function ``function`` when given)
    that carries XLA's block-level parameters, in module order. XLA's block-level
    parameters are those of its GPU backend: the device must be a GPU."""
    target = select_device(device)
    if not isinstance(target, GpuDevice):
        raise UnsupportedError(f"XLA's block-level fusion configs are GPU tilings; '{target.name}' is a {target.kind}")
    operation = module.operation
    memo = DeviceRankingMemo(TilingMemo())
    audits = []
    for _, op in computations(operation):
        if op.name != "mhlo.fusion" or (function and _enclosing(op) != function.removeprefix("@")):
            continue
        try:
            params = fusion_config(op)
        except HloIndexingError as error:
            where = location_of(op.location)
            audits.append(FusionAudit(instruction_name(op) or op.name, str(where) if where else str(op.location),
                                      BlockLevelParameters(()), failure=f"unreadable backend_config: {error.message}"))
            continue
        if params is not None:
            audits.append(audit_fusion(op, target, params, memo))
    return audits


def _enclosing(op: ir.Operation) -> str:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return ir.StringAttr(parent.attributes["sym_name"]).value if parent is not None else ""


def audit_json(audit: FusionAudit) -> dict[str, object]:
    """A JSON-ready audit (times in ns, null when infinite or missing)."""
    def estimate(found: Estimate | None) -> dict[str, object] | None:
        return None if found is None else found.to_json()

    return {
        "name": audit.name,
        "location": audit.location,
        "block_level_fusion_config": audit.params.to_config(),
        "tile_sizes": list(audit.tile_sizes) if audit.tile_sizes is not None else None,
        "failure": audit.failure,
        "legal": audit.legal,
        "rejections": [{"rule": r.rule, "subject": r.subject, "message": r.message} for r in audit.rejections],
        "covers_once": audit.covers_once,
        "coverage": audit.coverage,
        "estimate": estimate(audit.estimate),
        "best": None if audit.best_params is None else {
            "tile_sizes": list(audit.best_tile_sizes or ()),
            "block_level_fusion_config": audit.best_params.to_config(),
            "estimate": estimate(audit.best_estimate),
        },
        "ratio": audit.ratio if audit.ratio is None or np.isfinite(audit.ratio) else None,
        "difference": audit.difference,
    }



#: The ``schema`` field of the audit document.
AUDIT_SCHEMA_ID = "hlo-indexing/tiling-audit/1"
#: The JSON Schema of the audit document (:mod:`hlo_indexing.schema`).
AUDIT_SCHEMA_FILE = "tiling-audit.schema.json"


def audit_schema() -> dict[str, object]:
    """The JSON Schema of the audit document (:func:`audit_document`)."""
    return load_schema(AUDIT_SCHEMA_FILE)


def audit_document(target: Device, audits: Sequence[FusionAudit]) -> dict[str, object]:
    """The audit document of ``audits`` made on ``target`` (what
    ``hlo-audit-tilings{format=json}`` prints; valid against :func:`audit_schema`)."""
    return {"schema": AUDIT_SCHEMA_ID, "device": device_json(target), "fusions": [audit_json(a) for a in audits]}


def module_audit(module: ir.Module | ir.Operation, device: "str | Device" = "h100", *, function: str = "") -> dict[str, object]:
    """The audit document of every fusion of ``module`` with a block-level config (only
    those in function ``function`` when given), on ``device`` (a bundled name, a JSON
    description file or a device object)."""
    target = select_device(device)
    return audit_document(target, audit_tilings(module, target, function=function))
