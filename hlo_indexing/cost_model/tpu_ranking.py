"""The TPU backend over many candidate tilings (the ``tpu`` entry of
:data:`~.backends.EVALUATORS`: :func:`~.backends.per_tiling` of
:func:`.tpu.assess_tpu` with :func:`shape_checks` first).

1. **Block shapes, vectorized** (:func:`shape_checks`). Every fusion parameter and the
   output is read or written through one tile per candidate (the symbolic tiles of its
   nodes, evaluated over the candidates by :class:`~.tile_arrays.TileArrays`); Mosaic's
   rules on the last two dimensions (:func:`.mosaic.shape_ok`, the same rules the Pallas
   checker applies) reject most candidates without building anything.
2. **Kernels, one by one.** Each candidate left, the fewest grid steps first, is judged
   by :func:`.tpu.assess_tpu`: tiles that are not blocks (``mosaic.not-a-block``), the
   VMEM budget (``mosaic.vmem``) and the estimate; at most
   :data:`~hlo_indexing.limits.MAX_FOOTPRINTS_PER_FUSION` of them (the fewest grid steps
   are the ones the model favours, a step costing :data:`.tpu.STEP_OVERHEAD_NS`).
"""

from __future__ import annotations

import numpy as np

from hlo_indexing.cost_model import mosaic
from hlo_indexing.cost_model.element_types import xla_name
from hlo_indexing.cost_model.estimate import ConstraintCheck
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.devices.types import TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion


def shape_checks(fusion: TiledFusion, tiles: TileArrays, device: TpuDevice) -> list[ConstraintCheck]:
    """Mosaic's shape rules on every fusion parameter tile and output tile, over all the
    candidates (:func:`.mosaic.shape_ok`)."""
    checks = []
    outputs = {id(node): k for k, candidates in enumerate(fusion.root_candidates) for node in candidates}
    for node in fusion.nodes:
        number = node.parameter_number
        if number is None and id(node) not in outputs:
            continue
        subject = f"parameter {number}" if number is not None else f"output {outputs[id(node)]}"
        tensor = ir.RankedTensorType(node.value.type)
        array = tuple(tensor.shape)
        if not array:
            continue  # a scalar is read from SMEM, whole: no shape rule
        element_type = xla_name(tensor.element_type)
        sizes = tiles.columns(node.tile.sizes)
        ok = mosaic.shape_ok(sizes, array, element_type, device)

        def describe(index: int, sizes: np.ndarray = sizes, array: tuple[int, ...] = array, element_type: str = element_type, subject: str = subject) -> str:
            block = mosaic.TpuBlock(subject, tuple(int(s) for s in sizes[index]), array, element_type)
            found = mosaic.block_rejections(block, device)
            return found[0].message if found else f"{subject}: block {tuple(sizes[index])} rejected"

        rule = mosaic.RULE_SHAPE if len(array) >= 2 else mosaic.RULE_SHAPE_1D
        checks.append(ConstraintCheck(rule, subject, ok, describe))
    return checks
