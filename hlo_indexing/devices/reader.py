"""Device descriptions from JSON: the bundled ``gpus.json``/``tpus.json`` and a user's own file go
through the same validation, so an error names the file and the field.

A description is a JSON object with ``"kind": "gpu"`` or ``"tpu"`` and the fields of
:class:`~hlo_indexing.devices.types.GpuDevice` / :class:`~hlo_indexing.devices.types.TpuDevice`
under the same names. ``"base": NAME`` starts from a bundled device and overrides only
the fields given (a user's H100 with another clock); ``kind`` is then the base's unless
given. GPU fields XLA derives from the
architecture (``l1_cache_size_per_sm_bytes``, ``dram_to_l2_transaction_size_bytes``,
``memory_transactions_per_clock``) may be left out: :func:`xla_derived_gpu_fields` fills
them with XLA's rules. Rate tables are objects ``{element type: {units_per_core,
ops_per_clock, clock_rate_ghz}}`` (GPU) and ``{element type: ops per second}`` (TPU);
``native_tiling`` is ``{bit width: [sublanes, lanes]}``; ``aliases`` (bundled data)
lists other names the device answers to.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Callable, Mapping

from hlo_indexing.devices.types import Device, ExecutionUnitRate, GpuDevice, TpuDevice
from hlo_indexing.errors import InvalidArgumentError

#: Keys of a description that are not device fields.
META_KEYS = ("kind", "base", "aliases")
#: Fields a description may leave out: limits XLA may not know, derived figures, rate tables.
OPTIONAL_FIELDS = frozenset(
    {
        "registers_per_core_limit",
        "registers_per_block_limit",
        "max_blocks_per_multiprocessor",
        "l1_cache_size_per_sm_bytes",
        "dram_to_l2_transaction_size_bytes",
        "memory_transactions_per_clock",
        "scalar_units",
        "matrix_units",
    }
)

#: ROCm architectures with a larger L1 per compute unit (``DeviceDescription::l1_cache_size_per_SM``).
_ROCM_L1_BYTES = {"gfx908": 16 * 1024, "gfx90a": 16 * 1024, "gfx942": 32 * 1024, "gfx950": 32 * 1024}
#: The MI300 series, whose DRAM->L2 transactions are 128 bytes and which issue 16 per clock.
_MI300_SERIES = ("gfx942", "gfx950")


def xla_derived_gpu_fields(platform: str, compute_capability: str) -> dict[str, int]:
    """The three ``DeviceDescription`` getters XLA derives from the architecture:
    L1 per SM (2 KiB, 16 KiB on MI100/MI200, 32 KiB on the MI300 series), the DRAM->L2
    transaction size (64 B, 128 B on MI300) and memory transactions per clock (32, 16 on
    MI300)."""
    arch = compute_capability.split(":")[0] if platform == "rocm" else ""
    mi300 = arch in _MI300_SERIES
    return {
        "l1_cache_size_per_sm_bytes": _ROCM_L1_BYTES.get(arch, 2 * 1024),
        "dram_to_l2_transaction_size_bytes": 128 if mi300 else 64,
        "memory_transactions_per_clock": 16 if mi300 else 32,
    }


class _Fields:
    """Typed access to one description's fields; every complaint names ``origin`` (the
    file, or the bundled device) and the field."""

    def __init__(self, origin: str, data: Mapping[str, object]):
        self.origin, self.data = origin, data

    def error(self, field: str, problem: str) -> InvalidArgumentError:
        return InvalidArgumentError(f"{self.origin}: field '{field}': {problem}")

    def _get(self, field: str, optional: bool) -> object:
        if field not in self.data:
            if optional:
                return None
            raise self.error(field, "missing")
        return self.data[field]

    def string(self, field: str) -> str:
        value = self._get(field, False)
        if not isinstance(value, str) or not value:
            raise self.error(field, f"expected a non-empty string, got {value!r}")
        return value

    def integer(self, field: str) -> int:
        return self.positive_int(field, self._get(field, False))

    def optional_integer(self, field: str) -> int | None:
        value = self._get(field, True)
        return None if value is None else self.positive_int(field, value)

    def number(self, field: str) -> float:
        return self.positive_number(field, self._get(field, False))

    def positive_int(self, where: str, value: object) -> int:
        """``value`` if it is a positive integer; else an error naming ``where``."""
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(where, f"expected a positive integer, got {value!r}")
        return value

    def positive_number(self, where: str, value: object) -> float:
        """``value`` as a float if it is a positive finite number; else an error naming ``where``."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise self.error(where, f"expected a positive number, got {value!r}")
        return float(value)

    def choice(self, field: str, choices: tuple[str, ...]) -> str:
        value = self.string(field)
        if value not in choices:
            raise self.error(field, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def table(self, field: str) -> Mapping[str, object]:
        value = self._get(field, True)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(field, f"expected an object, got {type(value).__name__}")
        return value


def _unit_rates(fields: _Fields, field: str) -> tuple[tuple[str, ExecutionUnitRate], ...]:
    rates = []
    for element_type, row in sorted(fields.table(field).items()):
        where = f"{field}.{element_type}"
        if not isinstance(row, dict) or set(row) != {"units_per_core", "ops_per_clock", "clock_rate_ghz"}:
            raise fields.error(where, f"expected {{units_per_core, ops_per_clock, clock_rate_ghz}}, got {row!r}")
        rates.append(
            (
                element_type,
                ExecutionUnitRate(
                    fields.positive_int(f"{where}.units_per_core", row["units_per_core"]),
                    fields.positive_int(f"{where}.ops_per_clock", row["ops_per_clock"]),
                    fields.positive_number(f"{where}.clock_rate_ghz", row["clock_rate_ghz"]),
                ),
            )
        )
    return tuple(rates)


def _gpu(fields: _Fields) -> GpuDevice:
    platform = fields.choice("platform", ("cuda", "rocm", "sycl"))
    compute_capability = fields.string("compute_capability")
    if platform == "cuda":
        major, _, minor = compute_capability.partition(".")
        if not (major.isdigit() and (minor == "" or minor.isdigit())):
            raise fields.error("compute_capability", f"expected '<major>.<minor>' on CUDA, got {compute_capability!r}")
    derived = xla_derived_gpu_fields(platform, compute_capability)
    derived.update({key: fields.integer(key) for key in derived if key in fields.data})
    return GpuDevice(
        name=fields.string("name"),
        description=fields.string("description"),
        source=fields.string("source"),
        platform=platform,  # type: ignore[arg-type]  # checked by choice()
        compute_capability=compute_capability,
        core_count=fields.integer("core_count"),
        fpus_per_core=fields.integer("fpus_per_core"),
        threads_per_warp=fields.integer("threads_per_warp"),
        threads_per_block_limit=fields.integer("threads_per_block_limit"),
        threads_per_core_limit=fields.integer("threads_per_core_limit"),
        shared_memory_per_block_bytes=fields.integer("shared_memory_per_block_bytes"),
        shared_memory_per_block_optin_bytes=fields.integer("shared_memory_per_block_optin_bytes"),
        shared_memory_per_core_bytes=fields.integer("shared_memory_per_core_bytes"),
        registers_per_core_limit=fields.optional_integer("registers_per_core_limit"),
        registers_per_block_limit=fields.optional_integer("registers_per_block_limit"),
        max_blocks_per_multiprocessor=fields.optional_integer("max_blocks_per_multiprocessor"),
        block_dim_limit_x=fields.integer("block_dim_limit_x"),
        block_dim_limit_y=fields.integer("block_dim_limit_y"),
        block_dim_limit_z=fields.integer("block_dim_limit_z"),
        memory_bandwidth_bytes_per_second=fields.integer("memory_bandwidth_bytes_per_second"),
        l2_cache_size_bytes=fields.integer("l2_cache_size_bytes"),
        clock_rate_ghz=fields.number("clock_rate_ghz"),
        device_memory_size_bytes=fields.integer("device_memory_size_bytes"),
        scalar_units=_unit_rates(fields, "scalar_units"),
        matrix_units=_unit_rates(fields, "matrix_units"),
        **derived,
    )


def _pair(fields: _Fields, field: str, value: object) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise fields.error(field, f"expected [rows, columns], got {value!r}")
    return fields.positive_int(field, value[0]), fields.positive_int(field, value[1])


def _tpu(fields: _Fields) -> TpuDevice:
    peaks = tuple(
        (element_type, fields.positive_int(f"peak_ops_per_second.{element_type}", rate))
        for element_type, rate in sorted(fields.table("peak_ops_per_second").items())
    )
    if not peaks:
        raise fields.error("peak_ops_per_second", "expected at least one element type's rate")
    tilings = []
    for bits, tile in fields.table("native_tiling").items():
        if not bits.isdigit() or int(bits) <= 0:
            raise fields.error("native_tiling", f"keys are element bit widths, got {bits!r}")
        tilings.append((int(bits), _pair(fields, f"native_tiling.{bits}", tile)))
    if not tilings:
        raise fields.error("native_tiling", "expected at least one bit width's tile")
    return TpuDevice(
        name=fields.string("name"),
        description=fields.string("description"),
        source=fields.string("source"),
        generation=fields.integer("generation"),
        tensor_cores_per_chip=fields.integer("tensor_cores_per_chip"),
        clock_rate_ghz=fields.number("clock_rate_ghz"),
        hbm_bandwidth_bytes_per_second=fields.integer("hbm_bandwidth_bytes_per_second"),
        hbm_capacity_bytes=fields.integer("hbm_capacity_bytes"),
        vmem_bytes=fields.integer("vmem_bytes"),
        smem_bytes=fields.integer("smem_bytes"),
        mxu_shape=_pair(fields, "mxu_shape", fields.data.get("mxu_shape")),
        mxus_per_core=fields.integer("mxus_per_core"),
        sublanes=fields.integer("sublanes"),
        lanes=fields.integer("lanes"),
        peak_ops_per_second=peaks,
        native_tiling=tuple(sorted(tilings)),
    )


_BUILDERS: dict[str, tuple[type, Callable[[_Fields], Device]]] = {"gpu": (GpuDevice, _gpu), "tpu": (TpuDevice, _tpu)}


def device_from_mapping(data: object, origin: str, base: Device | None = None) -> Device:
    """Validate one description (a parsed JSON object) and build its device. ``base`` is
    the device named by the description's ``"base"`` (resolved by the caller); its
    fields are the defaults. ``origin`` names the description in errors (a file path,
    or ``bundled device 'h100-sxm'``)."""
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"{origin}: a device description is a JSON object, got {type(data).__name__}")
    if base is not None and "kind" not in data:
        data = {**data, "kind": base.kind}  # a description based on a bundled device is of its kind
    fields = _Fields(origin, data)
    kind = fields.choice("kind", tuple(_BUILDERS))
    device_type, build = _BUILDERS[kind]
    known = {field.name for field in dataclasses.fields(device_type)} | set(META_KEYS)
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise fields.error(key, f"not a field of a {kind} device{hint}")
    if base is not None:
        if base.kind != kind:
            raise fields.error("base", f"'{base.name}' is a {base.kind} device, this description is a {kind} device")
        merged = {**_as_mapping(base), **{key: value for key, value in data.items() if key not in META_KEYS}}
        fields = _Fields(origin, merged)
    missing = [
        field.name
        for field in dataclasses.fields(device_type)
        if field.name not in fields.data and field.name not in OPTIONAL_FIELDS
    ]
    if missing:
        raise InvalidArgumentError(f"{origin}: field{'s' if len(missing) > 1 else ''} missing: {', '.join(missing)}")
    return build(fields)


def _as_mapping(device: Device) -> dict[str, object]:
    """A device's fields in the JSON form :func:`device_from_mapping` reads."""
    result: dict[str, object] = {}
    for field in dataclasses.fields(device):
        value = getattr(device, field.name)
        if field.name in ("scalar_units", "matrix_units"):
            value = {name: dataclasses.asdict(rate) for name, rate in value}
        elif field.name == "peak_ops_per_second":
            value = dict(value)
        elif field.name == "native_tiling":
            value = {str(bits): list(tile) for bits, tile in value}
        elif field.name == "mxu_shape":
            value = list(value)
        if value is not None:
            result[field.name] = value
    return result


def device_to_json(device: Device) -> dict[str, object]:
    """A device as a JSON object that :func:`device_from_mapping` reads back unchanged
    (``kind`` included): a starting point for a user's own description."""
    return {"kind": device.kind, **_as_mapping(device)}
