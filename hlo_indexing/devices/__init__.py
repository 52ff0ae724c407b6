"""Devices tilings are judged for: typed descriptions (:class:`GpuDevice`,
:class:`TpuDevice`), the bundled ones (XLA's GPU test devices ``*-test``, XLA's GPU
target specs such as ``h100-sxm`` alias ``h100``, and ``tpu-v4``, ``tpu-v5e``,
``tpu-v5p``, ``tpu-v6e``) and :func:`device`, which selects one by name or reads a
user's JSON description::

    >>> from hlo_indexing.devices import device
    >>> h100 = device("H100")
    >>> h100.name, h100.core_count, h100.memory_bandwidth_bytes_per_second
    ('h100-sxm', 132, 3352320000000)
    >>> device("tpu-v5e").tiling_for_bits(16)
    (16, 128)

Data and types only (this package sits just above :mod:`hlo_indexing.errors`); the cost
models that read them are in :mod:`hlo_indexing.cost_model`. Modules: ``types`` (the
dataclasses), ``reader`` (JSON -> device, validated), ``registry`` (names, bundled
files, :func:`device`); figures and their sources in ``gpus.json`` (generated from
XLA's sources by ``dev/bundle_gpu_devices.py``) and ``tpus.json``.
"""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    "GpuDevice": "hlo_indexing.devices.types",
    "TpuDevice": "hlo_indexing.devices.types",
    "Device": "hlo_indexing.devices.types",
    "DeviceKind": "hlo_indexing.devices.types",
    "ExecutionUnitRate": "hlo_indexing.devices.types",
    "device": "hlo_indexing.devices.registry",
    "load_device_file": "hlo_indexing.devices.registry",
    "bundled_devices": "hlo_indexing.devices.registry",
    "bundled_device_names": "hlo_indexing.devices.registry",
    "device_to_json": "hlo_indexing.devices.reader",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
