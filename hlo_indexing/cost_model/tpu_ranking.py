"""The TPU backend over many candidate tilings (the ``tpu`` entry of
:data:`~.backends.EVALUATORS`): Mosaic's shape rules on every block, for all candidates
at once, then the kernel of each surviving candidate judged and estimated one by one
(:mod:`.tpu`).

1. **Block shapes, vectorized.** Every fusion parameter and the output is read or
   written through one tile per candidate (the symbolic tiles of its nodes, evaluated
   over the candidates by :class:`~.tile_arrays.TileArrays`); Mosaic's rules on the
   last two dimensions (:func:`.mosaic.shape_ok`, the same rules the Pallas checker
   applies) reject most candidates without building anything.
2. **Kernels, one by one.** Each candidate left, the fewest grid steps first, becomes a
   Pallas kernel (:func:`.tpu.tpu_kernel`): tiles that are not blocks
   (``mosaic.not-a-block``), the VMEM budget (``mosaic.vmem``) and the estimate. At most
   :data:`~hlo_indexing.limits.MAX_FOOTPRINTS_PER_FUSION` candidates are built; the
   others break ``tpu.not-evaluated`` (their count says so; the fewest grid steps are
   the ones the model favours, a step costing :data:`.tpu.STEP_OVERHEAD_NS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from hlo_indexing.cost_model import mosaic
from hlo_indexing.cost_model.element_types import xla_name
from hlo_indexing.cost_model.estimate import Assessment, BreakdownItem, CandidateEstimates, ConstraintCheck, Rejection
from hlo_indexing.cost_model.tile_arrays import TileArrays
from hlo_indexing.cost_model.tpu import RULE_NOT_A_BLOCK, RULE_NOT_EVALUATED, assess_tpu
from hlo_indexing.devices.types import TpuDevice
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.layout.types import Layout
from hlo_indexing.limits import MAX_FOOTPRINTS_PER_FUSION
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TilingError



def _shape_checks(fusion: TiledFusion, tiles: TileArrays, device: TpuDevice) -> list[ConstraintCheck]:
    """``mosaic.block-shape`` per fusion parameter node and output, over the candidates."""
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


def evaluate_candidates(
    fusion: TiledFusion,
    tiles: TileArrays,
    device: TpuDevice,
    layouts: Mapping[int, Layout] | None = None,
) -> CandidateEstimates:
    """Every candidate of ``tiles`` judged on ``device`` (see the module docstring;
    ``layouts`` are not used: a Pallas block is copied whole, whatever the HBM layout)."""
    del layouts
    count = tiles.count
    checks = _shape_checks(fusion, tiles, device)
    passing = np.ones(count, bool)
    for check in checks:
        passing &= check.ok
    steps = np.ones(count, np.int64)
    for parameter, column in zip(fusion.parameters, tiles.flat):
        steps *= -(-parameter.size // np.maximum(column, 1))
    order = [int(i) for i in np.argsort(steps, kind="stable") if passing[i]]
    built = order[:MAX_FOOTPRINTS_PER_FUSION]
    assessments: dict[int, Assessment] = {}
    for index in built:
        sizes = tuple(int(column[index]) for column in tiles.flat)
        if not fusion.satisfies_constraints(list(sizes)):
            continue
        try:
            assessments[index] = assess_tpu(fusion, sizes, device)
        except TilingError as error:
            assessments[index] = Assessment(sizes, (Rejection(RULE_NOT_A_BLOCK, f"the tiled computation cannot be built: {error}"),))
    evaluated = np.zeros(count, bool)
    evaluated[built] = True
    checks.append(ConstraintCheck(RULE_NOT_EVALUATED, "", evaluated | ~passing, lambda i: (
        f"not built: {len(order)} candidates pass Mosaic's block shapes, the {MAX_FOOTPRINTS_PER_FUSION} with the fewest "
        "grid steps were judged (limits.MAX_FOOTPRINTS_PER_FUSION)")))
    for rule in (RULE_NOT_A_BLOCK, mosaic.RULE_VMEM, RULE_NOT_EVALUATED, mosaic.RULE_SHAPE, mosaic.RULE_SHAPE_1D):
        ok = np.ones(count, bool)
        for index, assessment in assessments.items():
            ok[index] = not any(r.rule == rule for r in assessment.rejections)
        checks.append(ConstraintCheck(rule, "", ok, lambda i, rule=rule: _message(assessments, i, rule)))
    return _estimates(checks, assessments, count)


def _message(assessments: Mapping[int, Assessment], index: int, rule: str) -> str:
    return next(r.message for r in assessments[index].rejections if r.rule == rule)


def _estimates(checks: list[ConstraintCheck], assessments: Mapping[int, Assessment], count: int) -> CandidateEstimates:
    fields = {name: np.full(count, math.inf) for name in ("exec", "read", "write", "compute")}
    counts = {name: np.zeros(count, np.int64) for name in ("bytes_read", "bytes_written", "flops", "blocks")}
    for index, assessment in assessments.items():
        estimate = assessment.estimate
        if estimate is None:
            continue
        fields["exec"][index] = estimate.exec_time_ns
        fields["read"][index] = estimate.read_time_ns
        fields["write"][index] = estimate.write_time_ns
        fields["compute"][index] = estimate.compute_time_ns
        counts["bytes_read"][index] = estimate.bytes_read
        counts["bytes_written"][index] = estimate.bytes_written
        counts["flops"][index] = estimate.flops
        counts["blocks"][index] = estimate.num_blocks

    def breakdown(index: int) -> tuple[BreakdownItem, ...]:
        assessment = assessments.get(index)
        return assessment.estimate.breakdown if assessment is not None and assessment.estimate is not None else ()

    return CandidateEstimates(
        checks=checks,
        exec_time_ns=fields["exec"],
        read_time_ns=fields["read"],
        write_time_ns=fields["write"],
        compute_time_ns=fields["compute"],
        bytes_read=counts["bytes_read"],
        bytes_written=counts["bytes_written"],
        flops=counts["flops"],
        num_blocks=counts["blocks"],
        num_warps=None,
        breakdown=breakdown,
    )
