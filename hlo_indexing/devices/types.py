"""Typed descriptions of the devices tilings are judged for: :class:`GpuDevice` (XLA's
``se::DeviceDescription`` as its GPU cost model reads it) and :class:`TpuDevice` (the
public figures of a TPU chip that Pallas/Mosaic block rules and a roofline need).

Data only: the figures, their units (in the field names or the docstrings) and small
look-ups over them. How a cost model combines them lives in :mod:`hlo_indexing.cost_model`;
where each bundled figure comes from is written next to it in ``gpus.json`` and ``tpus.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

#: The device kinds; a cost-model backend is chosen by this (``device.kind``).
DeviceKind = Literal["gpu", "tpu"]


@dataclass(frozen=True)
class ExecutionUnitRate:
    """Throughput of one kind of execution unit for one element type (XLA's
    ``ExecutionUnitDescription::RateInfo``): ``units_per_core`` units per SM, each doing
    ``ops_per_clock`` operations per clock at ``clock_rate_ghz`` (a fused multiply-add
    counts as one operation here)."""

    units_per_core: int
    ops_per_clock: int
    clock_rate_ghz: float


@dataclass(frozen=True)
class GpuDevice:
    """A GPU as XLA's cost model sees it (field names follow ``se::DeviceDescription``,
    with the unit appended where it is not a count).

    ``platform`` is ``"cuda"``, ``"rocm"`` or ``"sycl"``; ``compute_capability`` is
    ``"<major>.<minor>"`` on CUDA, the gfx architecture name on ROCm (``"gfx90a"``) and
    the architecture on SYCL (``"BMG"``). ``clock_rate_ghz`` is the value as written;
    XLA stores it as a C++ ``float`` (the cost model rounds it the same way).

    Derived by XLA from the architecture (``DeviceDescription`` getters), stored here so
    that a user's description can state them: ``l1_cache_size_per_sm_bytes``,
    ``dram_to_l2_transaction_size_bytes`` and ``memory_transactions_per_clock``.

    ``registers_per_block_limit`` (32-bit registers) and ``max_blocks_per_multiprocessor``
    are ``None`` when the description does not give them. ``scalar_units`` and
    ``matrix_units`` map an XLA element type name (``"f32"``, ``"bf16"``, ``"s8"``) to
    its :class:`ExecutionUnitRate`; empty when the description has no rate tables (then
    XLA's peak matrix rate falls back to the scalar FP32 rate).
    """

    kind: ClassVar[DeviceKind] = "gpu"

    name: str
    description: str
    source: str
    platform: Literal["cuda", "rocm", "sycl"]
    compute_capability: str
    core_count: int
    fpus_per_core: int
    threads_per_warp: int
    threads_per_block_limit: int
    threads_per_core_limit: int
    shared_memory_per_block_bytes: int
    shared_memory_per_block_optin_bytes: int
    shared_memory_per_core_bytes: int
    registers_per_core_limit: int | None
    registers_per_block_limit: int | None
    max_blocks_per_multiprocessor: int | None
    block_dim_limit_x: int
    block_dim_limit_y: int
    block_dim_limit_z: int
    memory_bandwidth_bytes_per_second: int
    l2_cache_size_bytes: int
    l1_cache_size_per_sm_bytes: int
    dram_to_l2_transaction_size_bytes: int
    memory_transactions_per_clock: int
    clock_rate_ghz: float
    device_memory_size_bytes: int
    scalar_units: tuple[tuple[str, ExecutionUnitRate], ...] = ()
    matrix_units: tuple[tuple[str, ExecutionUnitRate], ...] = ()

    def __hash__(self) -> int:
        # Cheap and consistent with equality (equal devices have equal names): devices
        # key the cost models' caches.
        return hash(("gpu", self.name))

    def scalar_rate(self, element_type: str) -> ExecutionUnitRate | None:
        """The scalar (CUDA core) rate for an XLA element type name, if described."""
        return dict(self.scalar_units).get(element_type)

    def matrix_rate(self, element_type: str) -> ExecutionUnitRate | None:
        """The matrix (tensor core) rate for an XLA element type name, if described."""
        return dict(self.matrix_units).get(element_type)

    @property
    def cuda_compute_capability(self) -> tuple[int, int] | None:
        """``(major, minor)`` on CUDA, else ``None``."""
        if self.platform != "cuda":
            return None
        major, _, minor = self.compute_capability.partition(".")
        return int(major), int(minor or 0)


@dataclass(frozen=True)
class TpuDevice:
    """A TPU chip (public figures; Pallas kernels run per TensorCore).

    Per chip: ``hbm_bandwidth_bytes_per_second``, ``hbm_capacity_bytes``,
    ``peak_ops_per_second`` (element type name -> MXU operations per second, a
    multiply-add counting as two, as the published "peak compute per chip" does),
    ``tensor_cores_per_chip``. Per TensorCore: ``vmem_bytes``, ``smem_bytes``,
    ``mxus_per_core`` MXUs of ``mxu_shape`` (rows, columns) multiply-accumulate cells.
    ``clock_rate_ghz`` is the TensorCore clock. ``sublanes`` x ``lanes`` is the vector
    register shape of 32-bit values; ``native_tiling`` maps an element bit width to the
    (sublane, lane) tile a block's last two dimensions are laid out in (32-bit (8, 128),
    16-bit (16, 128), 8-bit (32, 128): narrower types pack more rows per sublane).
    """

    kind: ClassVar[DeviceKind] = "tpu"

    name: str
    description: str
    source: str
    generation: int
    tensor_cores_per_chip: int
    clock_rate_ghz: float
    hbm_bandwidth_bytes_per_second: int
    hbm_capacity_bytes: int
    vmem_bytes: int
    smem_bytes: int
    mxu_shape: tuple[int, int]
    mxus_per_core: int
    sublanes: int
    lanes: int
    peak_ops_per_second: tuple[tuple[str, int], ...]
    native_tiling: tuple[tuple[int, tuple[int, int]], ...]

    def __hash__(self) -> int:
        # As GpuDevice.__hash__: cheap, consistent with equality.
        return hash(("tpu", self.name))

    def peak_rate(self, element_type: str) -> int | None:
        """Peak MXU operations per second of the chip for an XLA element type name, if
        the chip has a native rate for it."""
        return dict(self.peak_ops_per_second).get(element_type)

    def tiling_for_bits(self, bit_width: int) -> tuple[int, int] | None:
        """The native (sublane, lane) tile of an element bit width, if described."""
        return dict(self.native_tiling).get(bit_width)


#: Either kind of device.
Device = GpuDevice | TpuDevice
