"""Tilings ranked for a device: :func:`rank_tilings` with ``device=`` keeps the tilings
the device's backend accepts (:mod:`.backends`) and orders them by estimated time;
without a device it is :func:`hlo_indexing.symbolic_tiling.ranking.rank_tilings`
(bytes moved per output element under a byte budget), unchanged.

With a device the candidates are those of the device-blind ranking (per tiling
parameter the powers of two below its size and the size; at most
``limits.MAX_TILING_CANDIDATES``, the smallest sizes dropped first, counted in
:attr:`DeviceRanking.capped`), minus those breaking the fusion's own tiling constraints;
the backend judges them all at once. The legal ones are ordered by estimated time,
fastest first; ties keep the candidates' order (XLA's stable sort), so the first is the
tiling XLA's own search picks on a GPU. Each broken rule is counted per rule id
(:attr:`DeviceRanking.rejected`) with one example. A ranked tiling's footprint (bytes
per tile and per output element, as the device-blind ranking counts them) is computed
when read.

Example::

    ranking = rank_tilings(fusion, device="h100")
    best = ranking.tilings[0]
    best.tile_sizes, best.estimate.exec_time_ns, best.footprint.bytes_per_output_element
    ranking.rejected            # {"triton.tile-elements": 12, "gpu.register-spill": 40}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar, overload

import numpy as np

from hlo_indexing.layout.attributes import LayoutLike, as_layout
from hlo_indexing.cost_model.backends import evaluator
from hlo_indexing.cost_model.estimate import CandidateEstimates, ConstraintCheck, Estimate, Rejection, renamed
from hlo_indexing.cost_model.explain import why_slower
from hlo_indexing.cost_model.per_tiling import valid_candidates
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices.registry import device as select_device
from hlo_indexing.devices.types import Device, GpuDevice, TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError
from hlo_indexing.layout.types import Layout
from hlo_indexing.symbolic_tiling import ranking as blind
from hlo_indexing.symbolic_tiling.footprint import Footprint, tiling_footprint
from hlo_indexing.symbolic_tiling.shared_bodies import TilingMemo
from hlo_indexing.symbolic_tiling.tile_counts import CountsCache, Grid
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode

_K = TypeVar("_K")
_V = TypeVar("_V")


class Footprints:
    """The footprints of a device ranking's tilings, from the device-blind ranking's
    tables (:func:`hlo_indexing.symbolic_tiling.ranking.rank_tilings` without a budget,
    computed once, on the first read, its counts shared through ``counts_cache``); a
    tiling those tables leave out (more programs than they count) gets
    :func:`~hlo_indexing.symbolic_tiling.footprint.tiling_footprint`. ``base`` and
    ``nodes``: the footprints of a fusion with the same body, read through the node map
    (their figures, this fusion's names)."""

    def __init__(self, fusion: TiledFusion, layouts: Mapping[int, LayoutLike], output_layouts: Mapping[int, LayoutLike],
                 counts_cache: CountsCache | None = None, base: Footprints | None = None,
                 nodes: Mapping[TiledNode, TiledNode] | None = None):
        self.fusion, self.layouts, self.output_layouts = fusion, layouts, output_layouts
        self._counts_cache, self._base, self._nodes = counts_cache, base, nodes
        self._ranking: blind.Ranking | None = None
        self._positions: dict[tuple[int, ...], int] | None = None
        self._failed = False

    def rebound(self, fusion: TiledFusion, nodes: Mapping[TiledNode, TiledNode]) -> Footprints:
        """These footprints for ``fusion`` (same body; ``nodes``: this fusion's nodes to its)."""
        return Footprints(fusion, self.layouts, self.output_layouts, self._counts_cache, self, nodes)

    def _table(self) -> tuple[blind.Ranking, dict[tuple[int, ...], int]] | None:
        if self._ranking is None and not self._failed:
            if self._base is not None and self._nodes is not None:
                found = self._base._table()
                if found is None:
                    self._failed = True
                    return None
                self._ranking, self._positions = found[0].rebound(self._nodes), found[1]
            else:
                try:
                    ranking = blind.rank_tilings(self.fusion, _NO_BUDGET, layouts=self.layouts,
                                                 output_layouts=self.output_layouts, counts_cache=self._counts_cache)
                except HloIndexingError:
                    self._failed = True
                    return None
                sizes = (ranking.tilings.tile_sizes if isinstance(ranking.tilings, blind.RankedTilings)
                         else [f.tile_sizes for f in ranking.tilings])
                self._ranking, self._positions = ranking, {s: i for i, s in enumerate(sizes)}
        if self._ranking is None or self._positions is None:
            return None
        return self._ranking, self._positions

    def get(self, tile_sizes: tuple[int, ...]) -> Footprint:
        """The footprint of ``tile_sizes``."""
        table = self._table()
        if table is not None and tile_sizes in table[1]:
            return table[0].tilings[table[1][tile_sizes]]
        return tiling_footprint(self.fusion, tile_sizes, layouts=self.layouts, output_layouts=self.output_layouts)


#: The budget of the device-blind tables footprints are read from: none.
_NO_BUDGET = 1 << 62


@dataclass(frozen=True)
class RankedTiling:
    """One legal tiling of a device ranking: ``rank`` (1 for the fastest), its flat
    ``tile_sizes`` and the backend's :class:`~.estimate.Estimate`; :attr:`footprint`
    (bytes per tile and per output element) is computed on first read."""

    rank: int
    tile_sizes: tuple[int, ...]
    estimate: Estimate
    _footprints: Footprints = field(repr=False, compare=False)
    _cache: dict[str, Footprint] = field(default_factory=dict, repr=False, compare=False)

    @property
    def footprint(self) -> Footprint:
        """The tiling's footprint (what
        :func:`~hlo_indexing.symbolic_tiling.footprint.tiling_footprint` counts)."""
        if "footprint" not in self._cache:
            self._cache["footprint"] = self._footprints.get(self.tile_sizes)
        return self._cache["footprint"]


class RankedTilings(Sequence[RankedTiling]):
    """The legal tilings, fastest first, each built when read (``names``: instruction
    names of the judged fusion -> those of ``fusion``, when it shares its body)."""

    def __init__(self, order: np.ndarray, sizes: list[np.ndarray], judged: CandidateEstimates, footprints: Footprints,
                 names: Mapping[str, str] | None = None):
        self._order, self._sizes, self._judged = order, sizes, judged
        self._footprints, self._names = footprints, names
        self._built: dict[int, RankedTiling] = {}

    def rebound(self, fusion: TiledFusion, names: Mapping[str, str], nodes: Mapping[TiledNode, TiledNode] | None = None) -> RankedTilings:
        """The same ranking for ``fusion``, a fusion with the same body (``names``: the
        ranked fusion's instruction names to ``fusion``'s; ``nodes``: its nodes to
        ``fusion``'s, which lets footprints share the ranked fusion's tables)."""
        footprints = (self._footprints.rebound(fusion, nodes) if nodes is not None else
                      Footprints(fusion, self._footprints.layouts, self._footprints.output_layouts))
        return RankedTilings(self._order, self._sizes, self._judged, footprints, names)

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> RankedTiling: ...

    @overload
    def __getitem__(self, index: slice) -> list[RankedTiling]: ...

    def __getitem__(self, index: int | slice) -> RankedTiling | list[RankedTiling]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = range(len(self))[index]
        if position not in self._built:
            candidate = int(self._order[position])
            sizes = tuple(int(column[candidate]) for column in self._sizes)
            estimate = self._judged.estimate(candidate)
            if self._names:
                estimate = replace(estimate, breakdown=tuple(replace(item, label=_renamed_label(item.label, self._names))
                                                             for item in estimate.breakdown))
            self._built[position] = RankedTiling(position + 1, sizes, estimate, self._footprints)
        return self._built[position]

    def __iter__(self) -> Iterator[RankedTiling]:
        return (self[i] for i in range(len(self)))


@dataclass(frozen=True)
class DeviceRanking:
    """A fusion's tilings judged on ``device``: the legal ones, fastest first
    (:attr:`tilings`); per rule id, how many candidates broke it (:attr:`rejected`; a
    candidate may break several) and one example (tile sizes and the rejection);
    ``considered`` candidates judged (those satisfying the fusion's own constraints),
    ``capped`` left out by the candidate limit."""

    device: Device
    tilings: Sequence[RankedTiling]
    considered: int
    rejected: Mapping[str, int]
    examples: Mapping[str, tuple[tuple[int, ...], Rejection]]
    capped: int = 0

    def rebound(self, fusion: TiledFusion, names: Mapping[str, str],
                nodes: Mapping[TiledNode, TiledNode] | None = None) -> DeviceRanking:
        """This ranking for ``fusion``, which has the same body as the fusion ranked:
        ``names`` maps that fusion's instruction names to ``fusion``'s (``nodes`` its
        nodes to ``fusion``'s, when known: footprints then share its tables)."""
        tilings = self.tilings.rebound(fusion, names, nodes) if isinstance(self.tilings, RankedTilings) else self.tilings
        return replace(self, tilings=tilings, examples=RenamedExamples(self.examples, names))

    def loses(self, index: int) -> str:
        """Why ranked tiling ``index`` (0-based) is slower than the best, in words ('' for
        the best)."""
        if index == 0 or not self.tilings:
            return ""
        return why_slower(self.tilings[0].estimate, self.tilings[index].estimate)

    @property
    def note(self) -> str:
        """The rejections and left-out candidates in words ('' when none)."""
        parts = []
        if self.rejected:
            counts = ", ".join(f"{rule} {count}" for rule, count in sorted(self.rejected.items(), key=lambda kv: -kv[1]))
            parts.append(f"{self.considered - len(self.tilings)} of {self.considered} tilings rejected on "
                         f"{self.device.name} ({counts})")
        if self.capped:
            parts.append(f"{self.capped} candidate tilings not considered (limits.MAX_TILING_CANDIDATES)")
        return "; ".join(parts)


class CheckExamples(Mapping[str, tuple[tuple[int, ...], Rejection]]):
    """A ranking's examples, rule -> tile sizes and rejection, each rejection's message
    written when it is read (from the check it breaks)."""

    def __init__(self) -> None:
        self._checks: dict[str, tuple[tuple[int, ...], ConstraintCheck, int]] = {}
        self._written: dict[str, tuple[tuple[int, ...], Rejection]] = {}

    def add(self, sizes: tuple[int, ...], check: ConstraintCheck, index: int) -> None:
        """Candidate ``index`` (tile ``sizes``) as the example of ``check``'s rule."""
        self._checks[check.rule] = (sizes, check, index)

    def __getitem__(self, rule: str) -> tuple[tuple[int, ...], Rejection]:
        if rule not in self._written:
            sizes, check, index = self._checks[rule]
            self._written[rule] = (sizes, check.rejection(index))
        return self._written[rule]

    def __contains__(self, rule: object) -> bool:
        return rule in self._checks  # without writing the message (Mapping's would)

    def __iter__(self) -> Iterator[str]:
        return iter(self._checks)

    def __len__(self) -> int:
        return len(self._checks)


class RenamedExamples(Mapping[str, tuple[tuple[int, ...], Rejection]]):
    """A ranking's examples (rule -> tile sizes and rejection) with the instruction
    names of ``names`` replaced in each rejection, when it is read (most rankings of a
    module's fusions are counted, their examples never read)."""

    def __init__(self, examples: Mapping[str, tuple[tuple[int, ...], Rejection]], names: Mapping[str, str]):
        self._examples, self._names = examples, names
        self._renamed: dict[str, tuple[tuple[int, ...], Rejection]] = {}

    def __getitem__(self, rule: str) -> tuple[tuple[int, ...], Rejection]:
        if rule not in self._renamed:
            sizes, rejection = self._examples[rule]
            self._renamed[rule] = (sizes, renamed(rejection, self._names))
        return self._renamed[rule]

    def __iter__(self) -> Iterator[str]:
        return iter(self._examples)

    def __len__(self) -> int:
        return len(self._examples)


def _renamed_label(label: str, names: Mapping[str, str]) -> str:
    head, _, name = label.partition(" ")
    return f"{head} {names.get(name, name)}" if name else label


class _Deferred(Mapping[_K, _V]):
    """The mapping ``compute()`` returns, computed when first read (a backend that reads
    operands in their logical layout, as the TPU one, never reads their parsed layouts;
    most rebound rankings are counted, their instruction names never read)."""

    def __init__(self, compute: Callable[[], dict[_K, _V]]) -> None:
        self._compute = compute
        self._found: dict[_K, _V] | None = None

    def _mapping(self) -> dict[_K, _V]:
        if self._found is None:
            self._found = self._compute()
        return self._found

    def __getitem__(self, key: _K) -> _V:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[_K]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())


def parsed_layouts(fusion: TiledFusion, layouts: Mapping[int, LayoutLike] | None, tiles: TileArrays) -> dict[int, Layout]:
    """Per fusion parameter number, its layout as the backends take it (each layout text
    parsed once per rank, kept with the facts of ``tiles``)."""
    found: dict[int, Layout] = {}
    if not layouts:
        return found
    wanted = sum(1 for layout in layouts.values() if layout is not None)
    for node in fusion.nodes:
        if len(found) == wanted:
            break  # every declared layout found (those of numbers the fusion lacks are never)
        if node.opcode != "parameter":
            continue
        number = node.parameter_number
        if number is not None and layouts.get(number) is not None and number not in found:
            layout, rank = layouts[number], len(ir.RankedTensorType(node.value.type).shape)
            found[number] = (as_layout(layout, rank) if not isinstance(layout, str) else
                             tiles.fact(("layout", layout, rank), lambda: as_layout(layout, rank)))
    return found


def rank_for_device(
    fusion: TiledFusion,
    device: Device,
    *,
    layouts: Mapping[int, LayoutLike] | None = None,
    output_layouts: Mapping[int, LayoutLike] | None = None,
    tiles: MutableMapping[tuple[int, ...], TileArrays] | None = None,
    counts_cache: CountsCache | None = None,
    facts: dict[object, object] | None = None,
) -> DeviceRanking:
    """The device ranking of ``fusion`` (module docstring). ``tiles``: the candidates'
    :class:`~.tile_arrays.TileArrays` by parameter sizes, shared with other rankings
    (the backend judges every candidate of the grid; those breaking the fusion's own
    constraints are left out here). ``facts``: the facts new TileArrays share
    (:meth:`~.tile_arrays.TileArrays.fact`; pass the same dict with the same ``tiles``).
    ``counts_cache``: shared by the footprints' tables (:class:`Footprints`)."""
    sizes_key = tuple(p.size for p in fusion.parameters)
    shared = tiles if tiles is not None else {}
    arrays = shared.get(sizes_key)
    if arrays is None:
        grid = Grid.over(sizes_key)
        arrays = shared[sizes_key] = TileArrays(list(grid.flat_sizes) if fusion.parameters else [], facts)
        arrays.memo("grid", lambda: grid)
    grid = arrays.memo("grid", lambda: Grid.over(sizes_key))
    valid = valid_candidates(fusion, arrays)
    judged = evaluator(device)(fusion, arrays, device, _Deferred(lambda: parsed_layouts(fusion, layouts, arrays)))
    # one row per check: the valid candidates breaking it
    broken = ~np.array([check.ok for check in judged.checks], bool).reshape(len(judged.checks), arrays.count) & valid
    legal = (valid & ~broken.any(axis=0)).nonzero()[0]
    order = legal[judged.exec_time_ns[legal].argsort(kind="stable")]
    counts = broken.sum(axis=1).tolist()
    rows_of_rule: dict[str, list[int]] = {}
    examples = CheckExamples()
    for row in [row for row, count in enumerate(counts) if count]:
        check = judged.checks[row]
        rows_of_rule.setdefault(check.rule, []).append(row)
        if check.rule not in examples:
            first = int(broken[row].argmax())
            examples.add(tuple(int(c[first]) for c in arrays.flat), check, first)
    rejected = {rule: counts[rows[0]] if len(rows) == 1 else int(broken[rows].any(axis=0).sum())
                for rule, rows in rows_of_rule.items()}
    footprints = Footprints(fusion, dict(layouts or {}), dict(output_layouts or {}), counts_cache)
    ranked = RankedTilings(order, arrays.flat, judged, footprints)
    return DeviceRanking(device, ranked, int(np.count_nonzero(valid)), rejected, examples, grid.capped)


def rank_tilings(
    fusion: TiledFusion,
    budget_bytes: int | None = None,
    *,
    device: str | os.PathLike[str] | GpuDevice | TpuDevice | None = None,
    layouts: Mapping[int, LayoutLike] | None = None,
    output_layouts: Mapping[int, LayoutLike] | None = None,
    max_programs: int = 1 << 16,
    counts_cache: CountsCache | None = None,
) -> blind.Ranking | DeviceRanking:
    """Without ``device``: the device-blind ranking under ``budget_bytes``
    (:func:`hlo_indexing.symbolic_tiling.ranking.rank_tilings`, unchanged). With
    ``device`` (a bundled name, a JSON description file or a device object): the tilings
    legal on it, fastest first (:class:`DeviceRanking`); the device's rules decide what
    fits, so ``budget_bytes`` must then be None. ``max_programs`` and ``counts_cache``
    are the device-blind ranking's."""
    if device is None:
        if budget_bytes is None:
            raise InvalidArgumentError("rank_tilings needs a byte budget or a device")
        return blind.rank_tilings(fusion, budget_bytes, layouts=layouts, output_layouts=output_layouts,
                                  max_programs=max_programs, counts_cache=counts_cache)
    if budget_bytes is not None:
        raise InvalidArgumentError("rank_tilings takes a byte budget or a device, not both: a device's own rules decide "
                                   "which tilings fit")
    return rank_for_device(fusion, select_device(device), layouts=layouts, output_layouts=output_layouts)


class DeviceRankingMemo:
    """Device rankings of one module's fusions, one per distinct body, device and
    layouts, shared the way :class:`~hlo_indexing.symbolic_tiling.shared_bodies.TilingMemo`
    shares analyses (use the analyses it hands out)."""

    def __init__(self, tiling_memo: TilingMemo) -> None:
        self.tiling_memo = tiling_memo
        self._rankings: dict[tuple[object, ...], DeviceRanking] = {}
        self._tiles: dict[tuple[int, ...], TileArrays] = {}
        self._facts: dict[object, object] = {}
        self._counts = CountsCache()

    def rank(self, fusion: TiledFusion, device: Device, *, layouts: Mapping[int, LayoutLike] | None = None,
             output_layouts: Mapping[int, LayoutLike] | None = None) -> DeviceRanking:
        """:func:`rank_for_device` of ``fusion``, computed once per body."""
        origin = self.tiling_memo.origin(fusion)
        if origin is None:
            return rank_for_device(fusion, device, layouts=layouts, output_layouts=output_layouts, tiles=self._tiles,
                                   counts_cache=self._counts, facts=self._facts)
        first, nodes = origin
        key = (id(first), device, _layouts_key(layouts), _layouts_key(output_layouts))
        ranking = self._rankings.get(key)
        if ranking is None:
            ranking = self._rankings[key] = rank_for_device(first, device, layouts=layouts, output_layouts=output_layouts,
                                                            tiles=self._tiles, counts_cache=self._counts, facts=self._facts)
        if fusion is first:
            return ranking
        return ranking.rebound(fusion, _Deferred(lambda: {node.name: other.name for node, other in nodes.items()}),
                               nodes)


def _layouts_key(layouts: Mapping[int, LayoutLike] | None) -> tuple[tuple[int, LayoutLike], ...]:
    # Layouts and layout strings are hashable: a string and its parsed Layout key apart,
    # which only costs a second ranking.
    return tuple(sorted((layouts or {}).items(), key=lambda kv: kv[0]))
