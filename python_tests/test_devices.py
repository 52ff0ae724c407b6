"""Device descriptions: selection by name, the bundled figures against their sources
(XLA's device descriptions in the GPU cost-model corpus, JAX's own TPU table), and a
user's JSON file with every kind of mistake named."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import bundle_gpu_devices

from hlo_indexing.devices import GpuDevice, TpuDevice, bundled_device_names, bundled_devices, device, device_to_json
from hlo_indexing.errors import InputNotFoundError, InvalidArgumentError, ParseError

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "xla_gpu_model"  # ../shared beside the clone


def _corpus_devices() -> dict:
    if not (CORPUS / "devices.json").exists():
        pytest.skip(f"{CORPUS} is missing (the shared conformance corpus)")
    return json.loads((CORPUS / "devices.json").read_text())


# --- selection -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("h100", "h100-sxm"),
        ("H100_SXM", "h100-sxm"),
        ("h100 sxm", "h100-sxm"),
        ("a6000-test", "a6000-test"),
        ("A6000Test", "a6000-test"),
        ("tpu-v5e", "tpu-v5e"),
        ("TPU_V5E", "tpu-v5e"),
        ("v5e", "tpu-v5e"),
        ("trillium", "tpu-v6e"),
        ("gfx1250", "gfx1250"),
    ],
)
def test_names_are_case_and_separator_insensitive(spec, name):
    assert device(spec).name == name


def test_every_bundled_device_is_found_by_its_name_and_kinds_are_right():
    names = bundled_device_names()
    assert len(names) == len(set(names)) == 7 + 19 + 4
    for name in names:
        assert device(name).name == name
    kinds = {found.name: found.kind for found in bundled_devices()}
    assert {name for name, kind in kinds.items() if kind == "tpu"} == {"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"}


def test_a_device_object_is_returned_as_is():
    h100 = device("h100")
    assert device(h100) is h100


@pytest.mark.parametrize(("typo", "suggestion"), [("h1OO", "h100-sxm"), ("tpu-v5ee", "tpu-v5e"), ("a6000test2", "a6000-test")])
def test_a_typo_suggests_the_closest_names(typo, suggestion):
    with pytest.raises(InvalidArgumentError) as error:
        device(typo)
    message = str(error.value)
    assert f"unknown device {typo!r}" in message
    assert "did you mean" in message and repr(suggestion) in message
    assert "tpu-v6e" in message  # the full list


def test_a_name_nothing_resembles_gets_the_list_only():
    with pytest.raises(InvalidArgumentError) as error:
        device("zzzzzzzzzz")
    assert "did you mean" not in str(error.value) and "known devices: a6000-test" in str(error.value)


def test_a_wrong_type_is_refused():
    with pytest.raises(InvalidArgumentError, match="got int"):
        device(3)  # type: ignore[arg-type]


# --- bundled GPU figures against XLA's (the corpus) -----------------------------------

#: Corpus field -> GpuDevice field: the generator's own table (bundle_gpu_devices.py);
#: the figures it maps are compared here with XLA's values in the corpus.
_FIELD_NAMES = bundle_gpu_devices.FIELDS
_TEST_DEVICES = {
    "TestGpuDeviceInfo::RTXA6000DeviceInfo": "a6000-test",
    "TestGpuDeviceInfo::A100SXMDeviceInfo": "a100-test",
    "TestGpuDeviceInfo::H100SXMDeviceInfo": "h100-test",
    "TestGpuDeviceInfo::B200SXMDeviceInfo": "b200-test",
    "TestGpuDeviceInfo::AMDMI210DeviceInfo": "mi210-test",
    "TestGpuDeviceInfo::AMDMI350DeviceInfo": "mi350-test",
    "TestGpuDeviceInfo::AMDRX7900DeviceInfo": "rx7900-test",
}


def test_test_devices_match_xla_including_the_derived_getters():
    corpus = _corpus_devices()
    assert set(corpus["test_devices"]) == set(_TEST_DEVICES)
    for function, name in _TEST_DEVICES.items():
        entry, ours = corpus["test_devices"][function], device(name)
        for field, our_field in _FIELD_NAMES.items():
            if field in entry["fields"]:
                assert getattr(ours, our_field) == entry["fields"][field]["value"], (name, field)
        derived = entry["derived"]
        # Our rule for the architecture-derived getters against XLA's values as extracted.
        assert ours.l1_cache_size_per_sm_bytes == derived["l1_cache_size_per_SM"]["value"], name
        assert ours.dram_to_l2_transaction_size_bytes == derived["dram_to_l2_transaction_size_bytes"]["value"], name
        assert ours.memory_transactions_per_clock == derived["memory_transactions_per_clock"]["value"], name
        capability = entry["fields"]["gpu_compute_capability"]["value"]
        assert ours.platform == ("cuda" if "cuda" in capability else "rocm")
        if "cuda" in capability:
            assert ours.cuda_compute_capability == tuple(capability["cuda"])
        for table, our_table in (("scalar_unit_description", ours.scalar_rate), ("matrix_unit_description", ours.matrix_rate)):
            for dtype_class, row in (entry.get(table) or {}).items():
                example = {"float16": "bf16", "float32": "f32", "float64": "f64", "int8": "s8", "int32": "s32",
                           "float8": "f8e4m3fn", "float4": "f4e2m1fn", "float6": "f6e2m3fn"}[dtype_class]
                rate = our_table(example)
                assert rate is not None, (name, table, example)
                assert (rate.units_per_core, rate.ops_per_clock, rate.clock_rate_ghz) == (
                    row["units_per_core"], row["ops_per_clock"], row["clock_rate_ghz"]), (name, example)


def test_target_specs_match_xla():
    corpus = _corpus_devices()
    specs = corpus["target_config_specs"]["specs"]
    assert len(specs) == 19
    for key, entry in specs.items():
        info, ours = entry["spec"]["gpu_device_info"], device(key)
        assert ours.description == entry["spec"]["device_description_str"]
        for field, our_field in _FIELD_NAMES.items():
            if field in info and info[field] != -1:
                assert getattr(ours, our_field) == info[field], (key, field)
        for info_row in info.get("matrix_unit_description", {}).get("rate_infos", []):
            element_type = corpus["primitive_types"][str(info_row["key"])].lower()
            assert dataclasses.asdict(ours.matrix_rate(element_type)) == info_row["value"], (key, element_type)


def test_the_a6000_test_device_is_not_the_a6000_spec():
    # XLA's tests use 8.9 and 1.41 GHz; the target spec of the real part says 8.6 and 1.8 GHz.
    test, spec = device("a6000-test"), device("a6000")
    assert (test.compute_capability, test.clock_rate_ghz) == ("8.9", 1.41)
    assert (spec.compute_capability, spec.clock_rate_ghz) == ("8.6", 1.8)


# --- bundled TPU figures --------------------------------------------------------------


@pytest.mark.parametrize("name", ["tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"])
def test_tpu_native_tiling_per_bit_width(name):
    tpu = device(name)
    assert isinstance(tpu, TpuDevice)
    assert tpu.tiling_for_bits(32) == (8, 128)
    assert tpu.tiling_for_bits(16) == (16, 128)
    assert tpu.tiling_for_bits(8) == (32, 128)
    assert tpu.tiling_for_bits(64) is None


@pytest.mark.parametrize("name", ["tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"])
def test_tpu_clock_is_what_the_bf16_peak_implies(name):
    tpu = device(name)
    rows, columns = tpu.mxu_shape
    implied = tpu.peak_rate("bf16") / (2 * rows * columns * tpu.mxus_per_core * tpu.tensor_cores_per_chip) / 1e9
    assert tpu.clock_rate_ghz == pytest.approx(implied, rel=2e-3)


@pytest.mark.parametrize(("name", "chip"), [("tpu-v4", "TPU_V4"), ("tpu-v5e", "TPU_V5E"), ("tpu-v5p", "TPU_V5P"), ("tpu-v6e", "TPU_V6E")])
def test_tpu_core_figures_agree_with_jax_tpu_info(name, chip):
    tpu_info = pytest.importorskip("jax._src.pallas.mosaic.tpu_info")
    version = tpu_info.ChipVersion[chip]
    info = tpu_info.get_tpu_info_for_chip(version, 1)
    tpu = device(name)
    assert tpu.tensor_cores_per_chip == version.num_physical_tensor_cores_per_chip
    assert (tpu.vmem_bytes, tpu.smem_bytes) == (info.vmem_capacity_bytes, info.smem_capacity_bytes)
    assert tpu.mxu_shape == (info.mxu_column_size, info.mxu_column_size)
    assert (tpu.mxus_per_core, tpu.sublanes, tpu.lanes) == (info.num_mxus if chip != "TPU_V6E" else 2, info.num_sublanes, info.num_lanes)
    assert tpu.generation == info.generation


# --- a user's JSON file ---------------------------------------------------------------


def _write(tmp_path: Path, data: object, name: str = "dev.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_a_full_description_round_trips(tmp_path):
    for original in (device("h100"), device("mi350-test"), device("tpu-v6e")):
        data = device_to_json(original)
        data["name"] = "mine"
        loaded = device(_write(tmp_path, data))
        assert loaded == dataclasses.replace(original, name="mine")


def test_the_derived_gpu_fields_may_be_left_out(tmp_path):
    data = device_to_json(device("mi350-test"))
    for field in ("l1_cache_size_per_sm_bytes", "dram_to_l2_transaction_size_bytes", "memory_transactions_per_clock"):
        del data[field]
    loaded = device(str(_write(tmp_path, data)))
    assert (loaded.l1_cache_size_per_sm_bytes, loaded.dram_to_l2_transaction_size_bytes) == (32768, 128)


def test_base_overrides_only_the_fields_given(tmp_path):
    path = _write(tmp_path, {"kind": "gpu", "base": "h100", "name": "slow-h100", "memory_bandwidth_bytes_per_second": 10**12})
    loaded = device(path)
    assert isinstance(loaded, GpuDevice)
    assert loaded == dataclasses.replace(device("h100"), name="slow-h100", memory_bandwidth_bytes_per_second=10**12)
    # kind defaults to the base's
    path = _write(tmp_path, {"base": "tpu-v5e", "name": "my-v5e", "vmem_bytes": 64 * 2**20})
    assert device(path).kind == "tpu" and device(path).vmem_bytes == 64 * 2**20


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "gpu", "base": "h100", "core_count": -3}, "field 'core_count': expected a positive integer, got -3"),
        ({"kind": "gpu", "base": "h100", "core_count": 1.5}, "field 'core_count': expected a positive integer, got 1.5"),
        ({"kind": "gpu", "base": "h100", "core_count": True}, "field 'core_count': expected a positive integer"),
        ({"kind": "gpu", "base": "h100", "clock_rate_ghz": "fast"}, "field 'clock_rate_ghz': expected a positive number"),
        ({"kind": "gpu", "base": "h100", "core_cuont": 3}, "field 'core_cuont': not a field of a gpu device (did you mean 'core_count'?)"),
        ({"kind": "gpu", "base": "h100", "platform": "metal"}, "field 'platform': expected one of cuda, rocm, sycl"),
        ({"kind": "gpu", "base": "h100", "compute_capability": "nine"}, "field 'compute_capability': expected '<major>.<minor>'"),
        ({"kind": "gpu", "base": "h100", "scalar_units": {"f32": {"units_per_core": 1}}}, "field 'scalar_units.f32'"),
        ({"kind": "gpu", "base": "h100", "scalar_units": {"f32": {"units_per_core": 1, "ops_per_clock": 0, "clock_rate_ghz": 1}}},
         "field 'scalar_units.f32.ops_per_clock': expected a positive integer, got 0"),
        ({"kind": "gpu", "base": "tpu-v5e"}, "field 'base': 'tpu-v5e' is a tpu device, this description is a gpu device"),
        ({"kind": "gpu", "base": "h10"}, "unknown device 'h10'"),
        ({"kind": "gpu", "base": 7}, "field 'base': expected a device name"),
        ({"kind": "npu"}, "field 'kind': expected one of gpu, tpu, got 'npu'"),
        ({"name": "x"}, "field 'kind': missing"),
        ({"kind": "gpu", "name": "x"}, "fields missing: description, source, platform, compute_capability, core_count"),
        ({**device_to_json(device("tpu-v5e")), "name": "x", "lanes": None} , "field 'lanes': expected a positive integer, got None"),
        ({"kind": "tpu", "base": "tpu-v5e", "mxu_shape": [128]}, "field 'mxu_shape': expected [rows, columns]"),
        ({"kind": "tpu", "base": "tpu-v5e", "native_tiling": {"bf16": [16, 128]}}, "field 'native_tiling': keys are element bit widths"),
        ({"kind": "tpu", "base": "tpu-v5e", "native_tiling": {}}, "field 'native_tiling': expected at least one bit width's tile"),
        ({"kind": "tpu", "base": "tpu-v5e", "peak_ops_per_second": {"bf16": -1}}, "field 'peak_ops_per_second.bf16'"),
        ([1, 2], "a device description is a JSON object, got list"),
    ],
)
def test_a_bad_description_names_the_file_and_the_field(tmp_path, data, message):
    path = _write(tmp_path, data)
    with pytest.raises(InvalidArgumentError) as error:
        device(path)
    assert message in str(error.value)
    if "unknown device" not in message:
        assert str(error.value).startswith(str(path))


def test_malformed_json_is_a_located_parse_error(tmp_path):
    path = _write(tmp_path, '{"kind": "gpu",\n  "name": }')
    with pytest.raises(ParseError) as error:
        device(path)
    assert str(error.value).startswith(f"{path}:2:11: error: invalid JSON")


def test_a_missing_file_is_input_not_found(tmp_path):
    with pytest.raises(InputNotFoundError, match="no such device description file"):
        device(str(tmp_path / "nope.json"))
