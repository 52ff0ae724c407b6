"""The parts of XLA's ``GpuPerformanceModelBase`` that are not the indexing model: launch
dimensions of a fusion, the reification cost record, and the bytes a fusion reads of an
operand as ``GpuHloCostAnalysis`` counts them (``count_multiple_input_accesses``).

**Launch dimensions** (``EstimateFusionLaunchDimensions``): a Triton fusion with a
``block_level_fusion_config`` launches one block per output tile with ``warps x 32``
threads; a loop fusion one thread per output element (per ``unroll`` elements, unrolled
by the largest of 4, 2 dividing the element count once the fusion has at least as many
elements as the device has resident threads), ``min(4 warps, elements)`` per block; any
other fusion (cuDNN, ...) XLA's fallback, 128 threads per block, one per element.

**Bytes accessed**: every instruction reads each operand once by default; a broadcast
reads its operand once per output element (utilization ``out / in``), a slice or
dynamic slice only what it keeps, a dynamic-update-slice none of its in-place operand
(which it uses at ``(in - update) / in``). Inside a fusion the utilization of each
value is propagated from the root (``FusionCalculateUtilizations``): elementwise users
pass their roots' utilization through, any other user multiplies its own by its
operand utilization (rounded up to whole elements); a fusion parameter is read
``shape size x utilization`` bytes. Producer-consumer sharing
(``GetSharedOperandBytesAccessed``) combines those as XLA does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hlo_indexing.cost_model.block_level import BlockLevelParameters, fusion_block_level_config, parse_backend_config
from hlo_indexing.cost_model.element_types import byte_size
from hlo_indexing.cost_model.estimate import Estimate
from hlo_indexing.cost_model.gpu_op_costs import ELEMENTWISE_OPCODES
from hlo_indexing.devices.types import GpuDevice
from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import ArrayShape, HloGraph, Instruction, Shape

#: Threads per block of XLA's fallback launch (one thread per output element).
FALLBACK_THREADS_PER_BLOCK = 128
#: Warp schedulers per SM: the loop emitter's block is this many warps.
WARP_SCHEDULERS = 4
MAX_UNROLL = 4


def reification_cost(estimate: Estimate, device: GpuDevice, name: str = "") -> dict[str, object]:
    """``MakeReificationCostFromRuntime``: exec, compute and memory (read + write) times
    in microseconds and the end-to-end cycles (exec ns x the float clock)."""
    return {
        "name": name,
        "compute_time_us": estimate.compute_time_ns / 1000.0,
        "memory_access_time_us": (estimate.read_time_ns + estimate.write_time_ns) / 1000.0,
        "exec_time_us": estimate.exec_time_ns / 1000.0,
        "end_to_end_cycles": estimate.exec_time_ns * float(np.float32(device.clock_rate_ghz)),
    }


def _elements(shape: Shape) -> int:
    if isinstance(shape, tuple):
        return sum(_elements(element) for element in shape)
    return math.prod(shape.dims)


def _size(shape: Shape) -> int:
    """``ShapeUtil::ByteSizeOf`` of arrays, 8-byte pointers for tuples (XLA's default shape size)."""
    if isinstance(shape, tuple):
        return 8 * len(shape)
    return math.prod(shape.dims) * byte_size(shape.element_type)


def _first(shape: Shape) -> ArrayShape:
    while isinstance(shape, tuple):
        shape = shape[0]
    return shape


def launch_dimensions(graph: HloGraph, device: GpuDevice, fusion: Instruction | None = None) -> tuple[int, int]:
    """(blocks, threads per block) of a fusion (default: the ENTRY root), module docstring."""
    fusion = fusion or graph.entry_computation.root
    if fusion.opcode != "fusion":
        raise InvalidArgumentError(f"{fusion.name} is not a fusion")
    text = fusion.attrs.get("backend_config")
    backend = parse_backend_config(text, f"backend_config of {fusion.name}") if text else {}
    config = fusion_block_level_config(backend)
    kind = fusion.attrs.get("kind", "")
    root = graph.called(fusion).root
    output = _first(root.operands[0].shape) if root.opcode == "tuple" else _first(root.shape)
    if config is not None:
        params = BlockLevelParameters.from_config(config)
        blocks = math.prod(-(-d // t) for d, t in zip(output.dims, params.output_tile_sizes[0]))
        return blocks, params.num_warps * device.threads_per_warp
    elements = _elements(output)
    if kind == "kLoop" and not backend.get("fusion_backend_config"):
        resident = device.threads_per_core_limit * device.core_count
        unroll = next((u for u in (MAX_UNROLL, 2) if elements >= resident and elements % u == 0), 1)
        per_thread = -(-elements // unroll)
        threads = min(device.threads_per_warp * WARP_SCHEDULERS, per_thread)
        return -(-per_thread // threads), threads
    return -(-elements // FALLBACK_THREADS_PER_BLOCK), FALLBACK_THREADS_PER_BLOCK


# ---------------------------------------------------------------- bytes accessed


def _handler(inst: Instruction) -> tuple[list[float], list[int]]:
    """Per operand of a (non-fusion) instruction: its utilization and the bytes read,
    as ``HloCostAnalysis``'s handlers set them."""
    utilization = [1.0] * len(inst.operands)
    read = [_size(o.shape) for o in inst.operands]
    out_elements = _elements(inst.shape)
    if inst.opcode == "broadcast":
        utilization[0] = out_elements / max(_elements(inst.operands[0].shape), 1)
        read[0] = _size(inst.shape)
    elif inst.opcode in ("slice", "dynamic-slice", "gather"):
        utilization[0] = out_elements / max(_elements(inst.operands[0].shape), 1)
        read[0] = _size(inst.shape)
    elif inst.opcode == "dynamic-update-slice":
        whole = _elements(inst.operands[0].shape)
        utilization[0] = (whole - _elements(inst.operands[1].shape)) / max(whole, 1)
        read[0] = 0
    return utilization, read


@dataclass
class _FusionUse:
    """Utilizations inside one fusion (``FusionCalculateUtilizations``)."""

    utilization: dict[int, float] = field(default_factory=dict)
    roots: dict[int, set[int]] = field(default_factory=dict)
    root_utilization: dict[int, float] = field(default_factory=dict)


def _post_order(root: Instruction) -> list[Instruction]:
    order: list[Instruction] = []
    seen: set[int] = set()
    stack: list[tuple[Instruction, bool]] = [(root, False)]
    while stack:
        inst, expanded = stack.pop()
        if expanded:
            order.append(inst)
            continue
        if id(inst) in seen:
            continue
        seen.add(id(inst))
        stack.append((inst, True))
        stack.extend((o, False) for o in reversed(inst.operands) if id(o) not in seen)
    return order


def _fusion_use(graph: HloGraph, fusion: Instruction) -> _FusionUse:
    computation = graph.called(fusion)
    use = _FusionUse()
    instructions = list(reversed(_post_order(computation.root)))
    for inst in instructions:
        use.utilization[id(inst)] = 0.0
        use.roots[id(inst)] = set()
        use.root_utilization[id(inst)] = 0.0
    root = computation.root
    use.root_utilization[id(root)] = 1.0
    use.roots[id(root)].add(id(root))
    for inst in instructions:
        total = sum(use.root_utilization[r] for r in use.roots[id(inst)])
        use.utilization[id(inst)] = total
        own, _ = _handler(inst)
        for k, operand in enumerate(inst.operands):
            if inst.opcode in ELEMENTWISE_OPCODES or inst.opcode in ("tuple", "get-tuple-element"):
                use.roots[id(operand)] |= use.roots[id(inst)]
                continue
            use.roots[id(operand)].add(id(operand))
            elements = _elements(operand.shape)
            share = 0.0 if elements == 0 else math.ceil(np.float32(total * own[k]) * elements) / elements
            use.root_utilization[id(operand)] += share
    return use


def _parameter(graph: HloGraph, fusion: Instruction, index: int) -> Instruction:
    for inst in graph.called(fusion).instructions:
        if inst.opcode == "parameter" and inst.text.split("parameter(", 1)[1].split(")", 1)[0] == str(index):
            return inst
    raise InvalidArgumentError(f"{fusion.name} has no parameter {index}")


def _utilizations(graph: HloGraph, inst: Instruction) -> tuple[list[float], list[int]]:
    """Per operand of ``inst`` (a fusion or not): utilization and bytes read."""
    if inst.opcode != "fusion":
        return _handler(inst)
    use = _fusion_use(graph, inst)
    utilization, read = [], []
    for k in range(len(inst.operands)):
        parameter = _parameter(graph, inst, k)
        value = use.utilization.get(id(parameter), 0.0)
        utilization.append(value)
        read.append(int(_size(parameter.shape) * np.float32(value)))
    return utilization, read


def _named(graph: HloGraph, name: str) -> Instruction:
    try:
        return graph.instruction(name)
    except KeyError:
        raise InvalidArgumentError(f"no instruction named '{name}'") from None


def operand_bytes_accessed(graph: HloGraph, device: GpuDevice, instruction: str, operand: str) -> int:
    """``GetOperandBytesAccessed``: bytes ``instruction`` reads of ``operand`` (0 when it
    does not use it). ``device`` is accepted for symmetry with XLA's analysis; the
    counts do not depend on it."""
    inst, other = _named(graph, instruction), _named(graph, operand)
    if other not in inst.operands:
        return 0
    return _utilizations(graph, inst)[1][inst.operands.index(other)]


def _operand_utilization(graph: HloGraph, inst: Instruction, operand: Instruction) -> float:
    if operand not in inst.operands:
        return 0.0
    return _utilizations(graph, inst)[0][inst.operands.index(operand)]


def _common_utilization(graph: HloGraph, producer: Instruction, index: int, consumer: Instruction) -> float:
    operand = producer.operands[index]
    if operand not in consumer.operands:
        return 0.0
    if producer.opcode in ELEMENTWISE_OPCODES:
        return 1.0 if consumer.opcode in ELEMENTWISE_OPCODES else _fusion_common(graph, consumer, operand, producer)
    return 0.0


def _fusion_common(graph: HloGraph, consumer: Instruction, operand: Instruction, producer: Instruction) -> float:
    if consumer.opcode != "fusion":
        return 0.0
    use = _fusion_use(graph, consumer)
    a = _parameter(graph, consumer, consumer.operands.index(operand))
    b = _parameter(graph, consumer, consumer.operands.index(producer))
    return sum(use.root_utilization[r] for r in use.roots[id(a)] & use.roots[id(b)])


def shared_operand_bytes_accessed(graph: HloGraph, device: GpuDevice, producer: str, consumer: str, operand: str) -> int:
    """``GetSharedOperandBytesAccessed``: bytes of ``operand`` the fusion of ``producer``
    into ``consumer`` reads: the producer's reads scaled by how much of the producer the
    consumer uses, plus the consumer's own, minus what both read in common."""
    made, user, value = _named(graph, producer), _named(graph, consumer), _named(graph, operand)
    by_consumer = _operand_utilization(graph, user, made)
    producer_bytes = operand_bytes_accessed(graph, device, producer, operand)
    consumer_bytes = operand_bytes_accessed(graph, device, consumer, operand)
    common = _common_utilization(graph, made, made.operands.index(value), user) if value in made.operands else 0.0
    common_bytes = _llround(_size(value.shape) * common)
    return _llround(producer_bytes * float(np.float32(by_consumer))) + consumer_bytes - common_bytes


def _llround(value: float) -> int:
    """C's ``llround``: halves away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))

