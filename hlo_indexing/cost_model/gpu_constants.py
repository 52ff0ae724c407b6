"""The constants of XLA's GPU cost model, each named as in XLA's sources
(``xla/service/gpu/model/``, openxla/xla at 183fa00cb5d8; file and line in the comment).

Times in nanoseconds; the HBM tables are ``(bytes moved, fraction of the peak DRAM
bandwidth attained)`` rows (``gpu_dot_fusion_cost_model.cc``).
"""

from __future__ import annotations

from hlo_indexing.devices.types import GpuDevice

#: kL2CacheSpeedup, kL1CacheSpeedup (gpu_performance_model_base.h:180-181): re-reads of an
#: operand that fits in L2 (and in the SMs' L1) are this much faster than DRAM.
L2_CACHE_SPEEDUP = 2.5
L1_CACHE_SPEEDUP = 8.0
#: kMemoryComputeParallelism (gpu_performance_model_base.h:192).
MEMORY_COMPUTE_PARALLELISM = 0.95
#: kFractionOfRegistersAvailableToStoreTile (gpu_indexing_performance_model.cc:129).
REGISTER_FRACTION_FOR_TILES = 0.4
#: kMaxTensorNumElements (triton_emitter_constraints.cc:62): Triton's TRITON_MAX_TENSOR_NUMEL.
MAX_TENSOR_ELEMENTS = 1048576
#: kMaxMMADimSize (triton_emitter_constraints.cc:66).
MAX_MMA_DIM_SIZE = 256
#: kLoopLatencyTax (gpu_dot_fusion_cost_model.h:55): latency of one main-loop step.
LOOP_LATENCY_TAX_NS = 1300.0
#: kH100L2CacheBandwidthBytesPerSec, kH100SxmPeakMemoryBandwidthBytesPerSec
#: (gpu_dot_fusion_cost_model.cc:142-145): the L2 bandwidth scales with DRAM's.
H100_L2_BANDWIDTH = 6.65e12
H100_DRAM_BANDWIDTH = 3.35232e12
#: kTmaLoopOverheadSeconds, kLegacyLoopOverheadSeconds (gpu_dot_fusion_cost_model.cc:319-321).
TMA_LOOP_OVERHEAD_NS = 150.0
LEGACY_LOOP_OVERHEAD_NS = 400.0
#: Warps per block by the largest padded tile (GetNumWarps, gpu_indexing_performance_model.cc):
#: (at most this many elements, warps); larger tiles get 8.
WARPS_BY_TILE_ELEMENTS = ((256, 1), (1024, 2), (4096, 4))
LARGEST_NUM_WARPS = 8

#: kAmpereScaledHbmBandwidthTable (gpu_dot_fusion_cost_model.cc:74).
AMPERE_HBM_TABLE = (
    (8192, 0.00043418), (16384, 0.00092645), (32768, 0.00184066),
    (65536, 0.00359877), (131072, 0.00724035), (262144, 0.01447766),
    (524288, 0.028301), (1048576, 0.05448203), (2097152, 0.10550455),
    (4194304, 0.19454216), (8388608, 0.32555948), (16777216, 0.48194352),
    (33554432, 0.60084187), (67108864, 0.71295513), (134217728, 0.79326842),
    (268435456, 0.83355906), (536870912, 0.89447866), (1073741824, 0.93435348),
    (2147483648, 0.9430824), (4294967296, 0.947391), (8589934592, 0.949896),
)
#: kHopperScaledHbmBandwidthTable (gpu_dot_fusion_cost_model.cc:88).
HOPPER_HBM_TABLE = (
    (8192, 0.00042359), (16384, 0.00090385), (32768, 0.00179577),
    (65536, 0.003511), (131072, 0.00706376), (262144, 0.01412455),
    (524288, 0.02761073), (1048576, 0.05341375), (2097152, 0.10343583),
    (4194304, 0.19072761), (8388608, 0.31917596), (16777216, 0.47249365),
    (33554432, 0.58906066), (67108864, 0.69897562), (134217728, 0.78541428),
    (268435456, 0.825306), (536870912, 0.88562244), (1073741824, 0.9324885),
    (2147483648, 0.9412), (4294967296, 0.9455), (8589934592, 0.948),
)
#: kBlackwellScaledHbmBandwidthTable (gpu_dot_fusion_cost_model.cc:102).
BLACKWELL_HBM_TABLE = (
    (8192, 0.00041057), (16384, 0.00080983), (32768, 0.00159736),
    (65536, 0.00315074), (131072, 0.00621472), (262144, 0.01009557),
    (524288, 0.01892165), (1048576, 0.03517364), (2097152, 0.0644137),
    (4194304, 0.11489171), (8388608, 0.1961171), (16777216, 0.31310696),
    (33554432, 0.4572719), (67108864, 0.60433204), (134217728, 0.72808478),
    (268435456, 0.8164454), (536870912, 0.87240125), (1073741824, 0.90518887),
    (2147483648, 0.92353306), (4294967296, 0.9335317), (8589934592, 0.93890402),
)


def hbm_bandwidth_table(device: GpuDevice) -> tuple[tuple[int, float], ...]:
    """The HBM table of the device's generation: Hopper (9.x), Blackwell (10.x and
    later), Ampere otherwise (8.x, and devices without a CUDA compute capability)."""
    capability = device.cuda_compute_capability
    major = capability[0] if capability else 0
    if major == 9:
        return HOPPER_HBM_TABLE
    if major >= 10:
        return BLACKWELL_HBM_TABLE
    return AMPERE_HBM_TABLE
