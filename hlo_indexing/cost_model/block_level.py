"""XLA's block-level parameters of a Triton fusion and the tilings they name.

A fusion XLA's GPU backend emits with Triton carries, in its ``backend_config``,
``fusion_backend_config.block_level_fusion_config``: the output tile sizes per fusion
output, warps, CTAs and stages (:class:`BlockLevelParameters`, read by
:meth:`~BlockLevelParameters.from_config` as XLA's ``FromBlockLevelFusionConfig``: an
absent field is 0, ``num_tiles_per_pid`` at least 1). A dot inside such a fusion may
carry its own ``backend_config`` ``{sizes: [k]}``: its contracting tile sizes.

:func:`symbolic_tiling_sizes` turns them into the flat tile sizes of a symbolic analysis
(XLA's ``TilingFromAnnotatedFusion``: each dot's contracting sizes, from an override or
its backend config, the root's output tile sizes); :func:`tiling_space_sizes` into the
sizes of an experimental tiling space (``GetTilingSpaceConcreteSizes``: parallel
dimensions from the output tiles, sequential ones from their instruction's backend
config or whole).

HLO backend configs are JSON written loosely (``{sizes:[11]}``, numbers as strings):
:func:`parse_backend_config` reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hlo_indexing.errors import InvalidInputError, TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import Computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion
from hlo_indexing.symbolic_tiling.experimental.tiling_space import TilingSpace

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$.\-]*|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[{}\[\]:,]|\s+|.')


def parse_backend_config(text: str, where: str = "backend_config") -> dict[str, object]:
    """A backend config as a dict: JSON, or JSON with bare keys and bare enum values
    (XLA's text accepts both). ``InvalidInputError`` naming ``where`` when it is
    neither."""
    pieces = []
    tokens = [t for t in _TOKEN.findall(text) if not t.isspace()]
    for index, token in enumerate(tokens):
        bare = re.fullmatch(r"[A-Za-z_$][\w$.\-]*", token) is not None
        if bare and token not in ("true", "false", "null"):
            token = json.dumps(token)
        pieces.append(token)
    try:
        value = json.loads("".join(pieces))
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"{where}: not a backend config ({error.msg}): {text[:120]}") from None
    if not isinstance(value, dict):
        raise InvalidInputError(f"{where}: a backend config is a JSON object: {text[:120]}")
    return value


def _int(value: object, field: str, where: str) -> int:
    try:
        if isinstance(value, int | float | str):  # proto JSON writes int64 fields as strings
            return int(value)
    except (ValueError, OverflowError):
        pass
    raise InvalidInputError(f"{where}: {field} is not an integer: {value!r}") from None


@dataclass(frozen=True)
class BlockLevelParameters:
    """XLA's ``BlockLevelParameters``: ``output_tile_sizes`` (one list per fusion output),
    warps, CTAs and stages per block, whether TMA and warp specialization are allowed,
    tiles per program and waves per EU (ROCm). Defaults as XLA's struct (1 warp, 1 CTA,
    1 stage)."""

    output_tile_sizes: tuple[tuple[int, ...], ...]
    num_warps: int = 1
    num_ctas: int = 1
    num_stages: int = 1
    is_tma_allowed: bool = False
    is_warp_specialization_allowed: bool = False
    num_tiles_per_pid: int = 1
    waves_per_eu: int = 0

    @classmethod
    def from_config(cls, config: Mapping[str, object], where: str = "block_level_fusion_config") -> BlockLevelParameters:
        """From a ``block_level_fusion_config`` object (proto JSON: absent fields are 0)."""
        tiles = []
        output_tiles = config.get("output_tiles", [])
        if not isinstance(output_tiles, list):
            raise InvalidInputError(f"{where}: output_tiles is not a list")
        for k, tile in enumerate(output_tiles):
            sizes = tile.get("sizes", []) if isinstance(tile, Mapping) else None
            if not isinstance(sizes, list):
                raise InvalidInputError(f"{where}: output_tiles[{k}] has no list of sizes")
            tiles.append(tuple(_int(s, f"output_tiles[{k}].sizes", where) for s in sizes))
        return cls(
            output_tile_sizes=tuple(tiles),
            num_warps=_int(config.get("num_warps", 0), "num_warps", where),
            num_ctas=_int(config.get("num_ctas", 0), "num_ctas", where),
            num_stages=_int(config.get("num_stages", 0), "num_stages", where),
            is_tma_allowed=bool(config.get("is_tma_allowed", False)),
            is_warp_specialization_allowed=bool(config.get("is_warp_specialization_allowed", False)),
            num_tiles_per_pid=max(1, _int(config.get("num_tiles_per_pid", 0), "num_tiles_per_pid", where)),
            waves_per_eu=_int(config.get("waves_per_eu", 0), "waves_per_eu", where),
        )

    def to_config(self) -> dict[str, object]:
        """The ``block_level_fusion_config`` object (``ToBlockLevelFusionConfig``;
        ``num_tiles_per_pid`` only when above 1)."""
        config: dict[str, object] = {
            "output_tiles": [{"sizes": list(sizes)} for sizes in self.output_tile_sizes],
            "num_warps": self.num_warps,
            "num_ctas": self.num_ctas,
            "num_stages": self.num_stages,
            "is_tma_allowed": self.is_tma_allowed,
            "is_warp_specialization_allowed": self.is_warp_specialization_allowed,
            "waves_per_eu": self.waves_per_eu,
        }
        if self.num_tiles_per_pid > 1:
            config["num_tiles_per_pid"] = self.num_tiles_per_pid
        return config


def fusion_block_level_config(backend_config: Mapping[str, object]) -> Mapping[str, object] | None:
    """The ``block_level_fusion_config`` of a fusion's backend config, if it has one."""
    fusion_config = backend_config.get("fusion_backend_config")
    if not isinstance(fusion_config, Mapping):
        return None
    found = fusion_config.get("block_level_fusion_config")
    return found if isinstance(found, Mapping) else None


def dot_tile_configs(computation: Computation) -> dict[str, tuple[int, ...]]:
    """The contracting tile sizes (backend config ``sizes``) of the dots of a fused
    computation that have them, by instruction name."""
    found = {}
    for inst in computation.instructions:
        text = inst.attrs.get("backend_config")
        if inst.opcode in ("dot", "scaled-dot") and text:
            sizes = parse_backend_config(text, f"backend_config of {inst.name}").get("sizes")
            if isinstance(sizes, list):
                found[inst.name] = tuple(_int(s, "sizes", f"backend_config of {inst.name}") for s in sizes)
    return found


def symbolic_tiling_sizes(
    fusion: TiledFusion,
    params: BlockLevelParameters,
    dot_tiles: Mapping[str, Sequence[int]],
    override: Sequence[int] | None = None,
    real_root_index: int = 0,
) -> list[int]:
    """The flat tile sizes ``params`` name (``TilingFromAnnotatedFusion``); raises
    ``TilingError(FAILED_PRECONDITION)`` for a dot without contracting sizes or an output
    index out of range. Not checked against any constraint."""
    if real_root_index >= len(params.output_tile_sizes):
        raise TilingError(
            "FAILED_PRECONDITION",
            f"the block-level parameters give {len(params.output_tile_sizes)} output tilings, the real root is output "
            f"{real_root_index}",
        )
    root_name = next(p.owner for p in fusion.parameters if not p.contracting) if any(
        not p.contracting for p in fusion.parameters) else ""
    per_owner: dict[str, list[int]] = {}
    for parameter in fusion.parameters:
        if parameter.contracting and parameter.owner not in per_owner:
            sizes = override if override is not None else dot_tiles.get(parameter.owner)
            if not sizes:
                raise TilingError("FAILED_PRECONDITION", f"dot {parameter.owner} has no contracting tile sizes "
                                  "(a backend_config {sizes: [...]})")
            per_owner[parameter.owner] = list(sizes)
    per_owner.setdefault(root_name, []).extend(params.output_tile_sizes[real_root_index])
    return fusion.flat_tile_sizes(per_owner)


def tiling_space_sizes(space: TilingSpace, params: BlockLevelParameters, same_shape_multi_output: bool = False) -> list[int]:
    """The concrete size of each tiling-space dimension (``GetTilingSpaceConcreteSizes``,
    not padded); ``TilingError`` with XLA's status and message otherwise."""
    tiles = params.output_tile_sizes
    if not tiles:
        raise TilingError("INTERNAL", "the block-level parameters give no output tile sizes")
    if len(tiles) > 1:
        if not same_shape_multi_output:
            raise TilingError(
                "UNIMPLEMENTED",
                "Only single-result fusions are supported for now. Same-shape multi-output fusions need "
                "xla_gpu_experimental_enable_same_shape_multi_output_fusion.",
            )
        if any(t != tiles[0] for t in tiles[1:]):
            raise TilingError(
                "UNIMPLEMENTED", "Same-shape multi-output fusions must have identical tile sizes for all outputs."
            )
    output = iter(tiles[0])
    parallel = sum(1 for d in space.dimensions if d.type == "parallel")
    if parallel != len(tiles[0]):
        raise TilingError("INTERNAL", f"{len(tiles[0])} output tile sizes for {parallel} parallel dimensions")
    sizes = []
    for dim in space.dimensions:
        if dim.type == "parallel":
            sizes.append(next(output))
            continue
        text = dim.hlo.attrs.get("backend_config")
        configured = parse_backend_config(text, f"backend_config of {dim.hlo.name}").get("sizes") if text else None
        rank = len(dim.hlo.array.dims)
        if isinstance(configured, list) and dim.dim_position - rank < len(configured):
            sizes.append(_int(configured[dim.dim_position - rank], "sizes", f"backend_config of {dim.hlo.name}"))
        else:
            sizes.append(dim.size)
    return sizes
