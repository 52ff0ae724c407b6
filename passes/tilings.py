"""The passes ``hlo-print-tilings`` and ``hlo-attach-tiles``: the symbolic tiling of every
``func.func`` and ``mhlo.fusion`` (:mod:`hlo_indexing.symbolic_tiling`), as remarks or
attributes.

``hlo-print-tilings{budget=48KiB max=5 format=text func=}`` ranks the valid tilings whose
per-tile footprint fits the budget (:func:`~hlo_indexing.symbolic_tiling.ranking.rank_tilings`,
argument layouts from ``hlo_indexing.layout`` attributes) and emits one remark per
tiling, best first (``func=NAME``: only that function and the fusions in it; without it,
every computation, or only the ``mhlo.fusion`` ops of a module that has some, as compiled
HLO does)::

    @softmax tiling #1: tile sizes [1, 6]: 4 tiles, 48 B per tile (read 24, write 24), ..., exactness parameter(0) 1

each with the exactness of its operand tiles (:mod:`~hlo_indexing.symbolic_tiling.exactness`:
per parameter, the fraction of the tile elements the fused maps read over the whole
output, with the worst tile's when lower, or ``not computed (reason)``). ``prove=true``
has isl prove each printed exactness (``1 (proven by isl)``, ``... (below 1, proven by
isl)``; an exactness too large to count but proven 1 is printed ``1 (proven by isl)``),
with ``islpy`` installed (else each says the proof was not run).

``format=json`` prints instead one JSON document per module, verbatim (no remark
wrapper), as the other print passes do (:mod:`hlo_indexing.passes.report`):
``{"schema": "hlo-indexing/tilings/1", "budget_bytes": ..., "computations": [{"name":
"@softmax", "parameters": [...], "tilings": [...]}]}``, each tiling with its rank, its
footprint, its ``exactness`` (one entry per parameter, ``{index, name, method, exactness,
worst_tile, read_elements, tile_elements}``, or ``reason`` with nulls when not computed)
and its Pallas BlockSpecs (or why its tiles are not blocks); ``skipped``
counts the tilings with more than 65536 programs, not evaluated, ``unbuildable`` those
the tiled computation refuses to build (a negative stride, a concatenate tile across
operands: ``UNIMPLEMENTED``, as in XLA), ``capped`` the
candidate tilings not considered, past ``limits.MAX_TILING_CANDIDATES``,
``limits.MAX_FOOTPRINTS_PER_FUSION`` or ``limits.MAX_PER_TILING_ROWS`` (also said in a
remark in text), ``failure``
says why a computation cannot be tiled. The schema ships in the package
(``hlo_indexing/schema/tilings.schema.json``); the document is made by
:mod:`hlo_indexing.symbolic_tiling.tilings_report` (:func:`~hlo_indexing.symbolic_tiling.tilings_report.module_tilings`
gives it in Python). The budget is bytes
(``49152``) or with a unit ``B``, ``KiB``, ``MiB``.

``hlo-print-tilings{device=NAME top=N}`` ranks instead the tilings legal on a device
(a bundled name such as ``h100`` or ``tpu-v5e``, or a JSON description file), fastest
first by its cost model, each with its time split and, for the runners-up, why they lose
to the first (:mod:`hlo_indexing.cost_model.device_report`, which also makes the JSON
document, with ``device``, ``device_ranking`` and per tiling ``estimate``/``legal``/``loses``);
``top`` tilings per computation (0: ``max``); the budget is not used. As without a
device, a computation that cannot be tiled or ranked is a warning naming the reason
(text) or a ``failure``/``error`` entry (json, jsonl), and the others are ranked.

A ``pad`` outside a gemm fusion is not tiled, nor is a read cut at the low end of an
index by padding (left padding, a convolution's padded window), as XLA's Triton tiling
does not tile them (the warning names the option): ``allow-pad=true`` tiles them (a tile
in the padding reads no operand element; the document records ``"allow_pad": true``).
Not with a device: Triton refuses such pads, and the Pallas TPU kernel described (grid
and BlockSpecs) has no block of the padded operand for a tile in the padding, nor a body
that writes the padding value; ``allow-pad`` with ``device=`` is an option error
(:data:`~hlo_indexing.symbolic_tiling.tilings_report.DEVICE_PAD_REFUSALS`).

``hlo-attach-tiles{tile-sizes=8,128}`` tiles every computation at these flat sizes (one
per tiling parameter, as ``valid_tilings`` lists them) and attaches to each op of the
tiled computation ``hlo_indexing.tile``: an array with one dictionary per tiled
instruction of its result, ``{offsets = {map from pid_0 ...}, sizes = array<i64: ...>,
strides = array<i64: ...>}``; the computation gets ``hlo_indexing.tiling = {num_tiles,
tile_sizes}`` and, for each argument read, ``hlo_indexing.argument_tiles`` (on a
function's argument attributes; an ``mhlo.fusion`` lists them per operand). A
computation that cannot be tiled, or sizes that are not a valid tiling, give an error
naming the reason. ``allow-pad=true`` tiles pads outside gemm fusions too, as
``hlo-print-tilings``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

from hlo_indexing.cost_model.device_report import (
    device_computation_tilings,
    device_document,
    module_tilings,
    rejections_text,
    tiling_text,
)
from hlo_indexing.cost_model.ranking import DeviceRankingMemo
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.devices.types import Device
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.locations import enclosing_function
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.limits import FUSION_SECONDS, MAX_PROGRAMS, MAX_TILED_NODES
from hlo_indexing.maps.attributes import indexing_map_to_attribute
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.fusion_maps import set_argument_attributes
from hlo_indexing.passes.selection import func_field
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tiled_computation import TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, defining_op
from hlo_indexing.symbolic_tiling.tilings_report import (
    ComputationEntry,
    body_uses,
    check_allow_pad_on,
    computation_tilings,
    parameters_text,
    parse_bytes,
    selected_computations,
    tilings_document,
    tilings_schema,
)

#: ``module_tilings``, ``tilings_schema`` and ``parse_bytes`` lived here before issue #25; still importable.
__all__ = [
    "AttachTiles", "PrintTilings", "module_tilings", "parse_bytes", "parse_seconds", "parse_tile_sizes",
    "parse_tile_sizes_per_computation", "tile_attribute", "tilings_schema",
]

TILE_ATTRIBUTE = "hlo_indexing.tile"
TILING_ATTRIBUTE = "hlo_indexing.tiling"
ARGUMENT_TILES_ATTRIBUTE = "hlo_indexing.argument_tiles"

#: ``format`` values of ``hlo-print-tilings``.
TILINGS_FORMATS = ("text", "json", "jsonl")


def allow_pad_field(note: str = "") -> bool:
    """The ``allow-pad`` option of the passes that tile (module docstring), its help
    ending with ``note``."""
    return field(default=False, metadata={"help": "also tile the padding XLA's Triton tiling refuses: pads outside gemm "
                                                  "fusions, reads cut at an index's low end (left padding, padded "
                                                  "convolution windows)" + note})


@dataclass(frozen=True)
class PrintTilings(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-print-tilings"
    description: ClassVar[str] = "Print the valid tilings of each function and mhlo.fusion, ranked under a byte budget or by time on a device"

    budget: str = field(default="48KiB", metadata={"help": "per-tile footprint budget (bytes, KiB, MiB); not used with a device"})
    max: int = field(default=5, metadata={"help": "tilings printed per computation"})
    format: str = field(
        default="text",
        metadata={
            "help": "text (remarks), json (one JSON document per module) or jsonl (one JSON line per computation, as each is done)",
            "choices": TILINGS_FORMATS,
        },
    )
    func: str = func_field()
    max_programs: int = field(
        default=MAX_PROGRAMS, metadata={"help": "tilings with more programs are not evaluated", "min": 1}
    )
    max_nodes: int = field(
        default=MAX_TILED_NODES, metadata={"help": "a fusion with more tiled instructions is not tiled", "min": 1}
    )
    fusion_seconds: str = field(
        default=f"{FUSION_SECONDS:g}", metadata={"help": "CPU seconds spent tiling one computation at most (0: no limit)"}
    )
    device: str = field(default="", metadata={
        "help": "rank the tilings legal on this device by estimated time (a bundled name such as h100 or tpu-v5e, or a "
                "JSON description file); empty: by bytes moved under the budget"})
    top: int = field(default=0, metadata={"help": "with a device: tilings printed per computation (0: max)", "min": 0})
    prove: bool = field(default=False, metadata={"help": "prove each printed exactness by isl (needs islpy)"})
    allow_pad: bool = allow_pad_field("; not with a device")

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Emit the ranked tilings of every computation as each is done (see the module
        docstring); an invalid option is an error, a computation that cannot be tiled a
        warning (text) or a ``failure``/``error`` entry (json, jsonl)."""
        try:
            budget = parse_bytes(self.budget)
            seconds = parse_seconds(self.fusion_seconds)
            selected = selected_computations(module, self.func)
            target = select_device(self.device) if self.device else None
            if target is not None:
                check_allow_pad_on(self.allow_pad, target.kind, target.name)
        except HloIndexingError as exc:
            diagnostics.error(module.location, str(exc) if exc.location else exc.message)
            return
        text = self.format == "text"
        entries = []
        memo = TilingMemo()
        uses = body_uses(module)
        if target is not None:
            self._run_for_device(selected, target, budget, seconds, uses, memo, diagnostics)
            return
        for label, op in selected:
            entry, ranked, note = computation_tilings(
                label, op, budget, self.max, blockspecs=not text, memo=memo, max_programs=self.max_programs,
                max_nodes=self.max_nodes, seconds=seconds, used_in=uses.get(str(op.location), ()), prove=self.prove,
                allow_pad=self.allow_pad,
            )
            entries.append(entry)
            if self.format == "jsonl":
                diagnostics.output(json.dumps(entry))
            if not text:
                continue
            if entry["used_in"]:
                diagnostics.remark(op.location, f"{label}: in @{enclosing_function(op)}, also used by {', '.join(entry['used_in'])}")
            problem = entry["failure"] or entry["error"]
            if problem is not None:
                diagnostics.warning(op.location, f"{label}: cannot tile: {problem.removeprefix('cannot tile: ')}")
                continue
            if not ranked:
                diagnostics.remark(op.location, f"{label}: {_none_ranked(entry, budget, self.max_programs)}")
            for k, tiling in enumerate(ranked):
                diagnostics.remark(op.location, f"{label} tiling #{k + 1}: {tiling.text}")
            if note:
                diagnostics.remark(op.location, f"{label}: {note}")
        if self.format == "json":
            diagnostics.output(json.dumps(tilings_document(budget, entries, allow_pad=self.allow_pad), indent=2))

    def _run_for_device(self, selected: list[tuple[str, "ir.Operation"]], target: Device, budget: int, seconds: float,
                        uses: dict[str, list[str]], memo: TilingMemo, diagnostics: Diagnostics) -> None:
        text = self.format == "text"
        top = self.top or self.max
        device_memo = DeviceRankingMemo(memo)
        entries = []
        for label, op in selected:
            entry, ranking, ranked_tilings = device_computation_tilings(
                label, op, target, top, memo=device_memo, blockspecs=not text, max_nodes=self.max_nodes, seconds=seconds,
                used_in=uses.get(str(op.location), ()),
            )
            entries.append(entry)
            if self.format == "jsonl":
                diagnostics.output(json.dumps(entry))
            problem = entry["failure"] or entry["error"]
            if problem is not None:
                if text:
                    diagnostics.warning(op.location, f"{label}: cannot tile: {problem.removeprefix('cannot tile: ')}")
            elif text and ranking is not None:
                if not ranked_tilings:
                    diagnostics.remark(op.location, f"{label}: no tiling is legal on {target.name}")
                for k, (tiling, printed) in enumerate(ranked_tilings):
                    diagnostics.remark(op.location, tiling_text(label, ranking, k, tiling, printed))
                note = rejections_text(label, ranking)
                if note:
                    diagnostics.remark(op.location, note)
        if self.format == "json":
            diagnostics.output(json.dumps(device_document(budget, target, entries), indent=2))


def _none_ranked(entry: ComputationEntry, budget: int, max_programs: int) -> str:
    """Why a computation's ranking is empty, in words: no tiling fits the budget, none
    the tiled computation can build, or none within the limits, among those evaluated."""
    evaluated = entry["valid_tilings"] - entry["skipped"]
    if evaluated and entry["unbuildable"] == evaluated:
        return "no valid tiling can be built"
    if evaluated and entry["capped"] == evaluated:
        return "no valid tiling was considered (each past a limit: see below)"
    fits = f"no valid tiling fits the budget of {budget} bytes"
    if entry["skipped"]:
        fits += f" among those with at most {max_programs} programs (max-programs)"
    return fits


def parse_seconds(text: str) -> float:
    """Seconds from ``30``, ``2.5`` (``0``: no limit). Raises :class:`HloIndexingError`."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise HloIndexingError(f"invalid fusion-seconds '{text}': expected a number of seconds, 0 for no limit")
    return value


def parse_tile_sizes(text: str) -> list[int]:
    """Sizes from ``8,128`` (positive integers). Raises :class:`HloIndexingError`."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise HloIndexingError(f"invalid tile sizes '{text}': expected positive integers separated by commas")
    return [int(p) for p in parts]


def parse_tile_sizes_per_computation(text: str) -> dict[str, list[int]]:
    """``{computation: sizes}`` from ``ynn_fusion.6:16,32,128;fusion.2:8`` (a
    computation is an HLO instruction name or a function, ``@`` optional), or ``{"": sizes}``
    from plain ``8,128`` (every computation). Raises :class:`HloIndexingError`."""
    if ":" not in text:
        return {"": parse_tile_sizes(text)}
    out: dict[str, list[int]] = {}
    for entry in (e.strip() for e in text.split(";") if e.strip()):
        name, colon, sizes = entry.rpartition(":")
        if not colon or not name.strip():
            raise HloIndexingError(f"invalid tile sizes '{entry}': expected NAME:SIZES (e.g. ynn_fusion.6:16,32,128)")
        out[name.strip().removeprefix("@")] = parse_tile_sizes(sizes)
    return out


def tile_attribute(inst: TiledInstruction, context: "ir.Context") -> "ir.Attribute":
    """``{offsets = <pid_0 -> offsets map>, sizes = array<i64>, strides = array<i64>}``."""
    return ir.DictAttr.get(
        {
            "offsets": indexing_map_to_attribute(inst.tile_offsets_indexing, context),
            "sizes": ir.DenseI64ArrayAttr.get(list(inst.tile_sizes), context=context),
            "strides": ir.DenseI64ArrayAttr.get(list(inst.tile_strides), context=context),
        },
        context=context,
    )


@dataclass(frozen=True)
class AttachTiles(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-attach-tiles"
    description: ClassVar[str] = "Attach each op's tile (pid->offsets map, sizes, strides) for the given tile sizes"

    tile_sizes: str = field(
        default="",
        metadata={
            "help": "flat tile sizes, one per tiling parameter (e.g. 8,128), or per fusion (ynn_fusion.6:16,32,128;fusion.2:8)"
        },
    )
    func: str = func_field()
    allow_pad: bool = allow_pad_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Attach the tiles of every computation selected (``func``, and the names of
        per-computation sizes) at its sizes (see the module docstring); an error names
        the computation and the reason when it cannot."""
        try:
            per_computation = parse_tile_sizes_per_computation(self.tile_sizes)
            selected = selected_computations(module, self.func)
            named = {
                op: sizes for name, sizes in per_computation.items() if name for _, op in selected_computations(module, name)
            }
        except HloIndexingError as exc:
            diagnostics.error(module.location, exc.message)
            return
        if "" not in per_computation:
            targets = [(label, op, named[op]) for label, op in selected if op in named]
        else:
            targets = [(label, op, per_computation[""]) for label, op in selected]
        memo = TilingMemo()
        for label, op, sizes in targets:
            fusion = memo.analyze(op, allow_pad=self.allow_pad)
            if isinstance(fusion, AnalysisFailure):
                diagnostics.error(op.location, f"{label}: {fusion}")
                continue
            if len(sizes) != len(fusion.parameters):
                diagnostics.error(
                    op.location,
                    f"{label}: {len(sizes)} tile sizes given, the tiling has {len(fusion.parameters)} parameters: "
                    + ", ".join(parameters_text(fusion)),
                )
                continue
            try:
                computation = tiled_computation(fusion, sizes)
            except HloIndexingError as exc:
                diagnostics.error(op.location, f"{label}: tile sizes {sizes} are not a valid tiling: {exc.message}")
                continue
            self._attach(op, computation.instructions, sizes, computation.num_programs)

    def _attach(self, op: "ir.Operation", instructions: list[TiledInstruction], sizes: list[int], num_tiles: int) -> None:
        context = op.context
        on_ops: dict[ir.Operation, list[ir.Attribute]] = {}
        on_arguments: dict[int, list[ir.Attribute]] = {}
        owners: dict[ir.Operation, ir.Operation] = {}
        for inst in instructions:
            owner = defining_op(inst.node.value)
            if owner is None:
                number = inst.node.parameter_number
                assert number is not None
                on_arguments.setdefault(number, []).append(tile_attribute(inst, context))
            else:
                key = owner.operation
                owners[key] = owner.operation
                on_ops.setdefault(key, []).append(tile_attribute(inst, context))
        for key, tiles in on_ops.items():
            owners[key].attributes[TILE_ATTRIBUTE] = ir.ArrayAttr.get(tiles, context=context)
        op.attributes[TILING_ATTRIBUTE] = ir.DictAttr.get(
            {
                "num_tiles": ir.IntegerAttr.get(ir.IntegerType.get_signless(64, context), num_tiles),
                "tile_sizes": ir.DenseI64ArrayAttr.get(sizes, context=context),
            },
            context=context,
        )
        n_args = len(op.regions[0].blocks[0].arguments)
        per_argument: list[ir.Attribute] = [ir.ArrayAttr.get(on_arguments.get(a, []), context=context) for a in range(n_args)]
        if op.name == "func.func":
            set_argument_attributes(op, {ARGUMENT_TILES_ATTRIBUTE: per_argument})
        else:
            op.attributes[ARGUMENT_TILES_ATTRIBUTE] = ir.ArrayAttr.get(per_argument, context=context)

