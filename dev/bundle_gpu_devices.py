"""Write ``hlo_indexing/devices/gpus.json`` from the GPU cost-model corpus's
``devices.json`` (XLA's test devices and its 19 GPU target specs)::

    .venv/bin/python dev/bundle_gpu_devices.py ../shared/conformance/xla_gpu_model/devices.json

The bundled file is the package's copy of those facts (the corpus is not shipped);
``python_tests/test_devices.py`` checks that it still agrees with the corpus. Names:
test devices ``<part>-test`` (``a6000-test``), target specs by their spec file name with
dashes (``h100-sxm``, alias ``h100``). XLA's dtype-class rate rows (``FillExecutionUnitDesc``:
every element type uses the row of its bit width and float-ness) are expanded to element
type names; the target specs' ``rate_infos`` are keyed by ``PrimitiveType`` numbers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "hlo_indexing" / "devices" / "gpus.json"

TEST_DEVICE_NAMES = {
    "TestGpuDeviceInfo::RTXA6000DeviceInfo": ("a6000-test", "NVIDIA RTX A6000"),
    "TestGpuDeviceInfo::A100SXMDeviceInfo": ("a100-test", "NVIDIA A100 SXM"),
    "TestGpuDeviceInfo::H100SXMDeviceInfo": ("h100-test", "NVIDIA H100 SXM"),
    "TestGpuDeviceInfo::B200SXMDeviceInfo": ("b200-test", "NVIDIA B200 SXM"),
    "TestGpuDeviceInfo::AMDMI210DeviceInfo": ("mi210-test", "AMD MI210"),
    "TestGpuDeviceInfo::AMDMI350DeviceInfo": ("mi350-test", "AMD MI350"),
    "TestGpuDeviceInfo::AMDRX7900DeviceInfo": ("rx7900-test", "AMD RX 7900"),
}
SPEC_ALIASES = {"h100-sxm": ["h100"], "a100-sxm-80": ["a100"]}

#: Corpus field -> bundled field (the unit goes into the name).
FIELDS = {
    "threads_per_block_limit": "threads_per_block_limit",
    "threads_per_warp": "threads_per_warp",
    "shared_memory_per_block": "shared_memory_per_block_bytes",
    "shared_memory_per_block_optin": "shared_memory_per_block_optin_bytes",
    "shared_memory_per_core": "shared_memory_per_core_bytes",
    "threads_per_core_limit": "threads_per_core_limit",
    "core_count": "core_count",
    "fpus_per_core": "fpus_per_core",
    "block_dim_limit_x": "block_dim_limit_x",
    "block_dim_limit_y": "block_dim_limit_y",
    "block_dim_limit_z": "block_dim_limit_z",
    "memory_bandwidth": "memory_bandwidth_bytes_per_second",
    "l2_cache_size": "l2_cache_size_bytes",
    "clock_rate_ghz": "clock_rate_ghz",
    "device_memory_size": "device_memory_size_bytes",
    "registers_per_core_limit": "registers_per_core_limit",
    "registers_per_block_limit": "registers_per_block_limit",
    "max_blocks_per_multiprocessor": "max_blocks_per_multiprocessor",
}

#: XLA dtype class of ``FillExecutionUnitDesc`` -> the element types that use its row.
CLASS_TYPES = {
    "float4": ["f4e2m1fn"],
    "float6": ["f6e2m3fn", "f6e3m2fn"],
    "float8": ["f8e3m4", "f8e4m3", "f8e4m3b11fnuz", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0fnu"],
    "float16": ["bf16", "f16"],
    "float32": ["f32"],
    "float64": ["f64"],
    "int8": ["s8", "u8"],
    "int32": ["s32", "u32"],
}


def _class_rates(rows: dict | None) -> dict:
    rates = {}
    for dtype_class, row in (rows or {}).items():
        rate = {"units_per_core": row["units_per_core"], "ops_per_clock": row["ops_per_clock"],
                "clock_rate_ghz": row["clock_rate_ghz"]}
        for element_type in CLASS_TYPES[dtype_class]:
            rates[element_type] = rate
    return rates


def _spec_rates(description: dict | None, primitive_types: dict) -> dict:
    rates = {}
    for info in (description or {}).get("rate_infos", []):
        rates[primitive_types[str(info["key"])].lower()] = dict(info["value"])
    return rates


def _keep(field: str, value: object) -> bool:
    """-1 is XLA's "not set" for the optional limits."""
    return not (field in ("registers_per_core_limit", "registers_per_block_limit", "max_blocks_per_multiprocessor")
                and value == -1)


def _test_device(function: str, entry: dict, commit: str) -> dict:
    name, part = TEST_DEVICE_NAMES[function]
    fields = {key: spec["value"] for key, spec in entry["fields"].items()}
    capability = fields["gpu_compute_capability"]
    if "cuda" in capability:
        platform, compute_capability = "cuda", "{}.{}".format(*capability["cuda"])
    else:
        platform, compute_capability = "rocm", capability["rocm"]
    source = entry["source"]
    device: dict[str, Any] = {
        "kind": "gpu",
        "name": name,
        "description": f"{part} as XLA's GPU tests describe it ({function})",
        "source": f"{source['repo']}@{commit[:12]} {source['path']}:{source['line']} ({function})",
        "platform": platform,
        "compute_capability": compute_capability,
    }
    for key, value in fields.items():
        if key in FIELDS and _keep(key, value):
            device[FIELDS[key]] = value
    scalar, matrix = _class_rates(entry.get("scalar_unit_description")), _class_rates(entry.get("matrix_unit_description"))
    if scalar:
        device["scalar_units"] = scalar
    if matrix:
        device["matrix_units"] = matrix
    return device


def _spec_device(key: str, entry: dict, primitive_types: dict, commit: str) -> dict:
    spec = entry["spec"]
    info = spec["gpu_device_info"]
    if "cuda_compute_capability" in info:
        cc = info["cuda_compute_capability"]
        platform, compute_capability = "cuda", f"{cc.get('major', 0)}.{cc.get('minor', 0)}"
    elif "rocm_compute_capability" in info:
        platform, compute_capability = "rocm", info["rocm_compute_capability"]["gcn_arch_name"]
    else:
        platform, compute_capability = "sycl", info["oneapi_compute_capability"]["architecture"]
    name = key.replace("_", "-")
    device: dict[str, Any] = {
        "kind": "gpu",
        "name": name,
        "description": spec["device_description_str"],
        "source": f"openxla/xla@{commit[:12]} {entry['path']} (GpuTargetConfig)",
        "platform": platform,
        "compute_capability": compute_capability,
    }
    if name in SPEC_ALIASES:
        device["aliases"] = SPEC_ALIASES[name]
    for corpus_key, field in FIELDS.items():
        if corpus_key in info and _keep(corpus_key, info[corpus_key]):
            device[field] = info[corpus_key]
    scalar = _spec_rates(info.get("scalar_unit_description"), primitive_types)
    matrix = _spec_rates(info.get("matrix_unit_description"), primitive_types)
    if scalar:
        device["scalar_units"] = scalar
    if matrix:
        device["matrix_units"] = matrix
    return device


def bundle(corpus: dict) -> dict:
    commit = corpus["xla"]["commit"]
    devices = [_test_device(function, entry, commit) for function, entry in corpus["test_devices"].items()]
    specs = corpus["target_config_specs"]["specs"]
    devices += [_spec_device(key, specs[key], corpus["primitive_types"], commit) for key in sorted(specs)]
    return {
        "description": (
            "GPU descriptions as XLA's cost model reads them: XLA's test devices "
            "(xla/service/gpu/gpu_device_info_for_tests.cc, names '*-test') and its GPU target specs "
            "(xla/backends/gpu/target_config/specs/*.txtpb). Units in the field names; clock_rate_ghz in GHz. "
            "Generated by dev/bundle_gpu_devices.py from the xla_gpu_model conformance corpus."
        ),
        "xla_commit": commit,
        "devices": devices,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    corpus = json.loads(Path(argv[0]).read_text())
    OUT.write_text(json.dumps(bundle(corpus), indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
