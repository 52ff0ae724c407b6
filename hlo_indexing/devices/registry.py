"""Selecting a device: by bundled name (``"h100"``, ``"a6000-test"``, ``"tpu-v5e"``) or
from a user's JSON description file.

Names compare case- and separator-insensitively (``"H100_SXM"`` is ``"h100-sxm"``); an
unknown name is an :class:`~hlo_indexing.errors.InvalidArgumentError` that suggests the
closest bundled names and lists them all. The bundled descriptions are read and
validated once per process, the first time a device is asked for.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
from typing import TypedDict, cast
from pathlib import Path

from hlo_indexing.devices.reader import device_from_mapping
from hlo_indexing.devices.types import Device, GpuDevice, TpuDevice
from hlo_indexing.errors import InputNotFoundError, InvalidArgumentError, ParseError, SourceLocation

DATA = Path(__file__).resolve().parent
#: The bundled description files, in the order their devices are listed.
BUNDLED_FILES = ("gpus.json", "tpus.json")


def normalize_name(name: str) -> str:
    """The form names are compared in: lower case, without separators or spaces."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


class _BundledEntry(TypedDict, total=False):
    """The fields of a bundled description :func:`_bundled` reads itself (the others:
    :func:`~hlo_indexing.devices.reader.device_from_mapping`)."""

    name: str
    aliases: list[str]


class _BundledFile(TypedDict):
    """A bundled device file (data of this package)."""

    devices: list[_BundledEntry]


def _read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputNotFoundError(f"{path}: no such device description file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidArgumentError(f"{path}: cannot read the device description: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(f"invalid JSON: {error.msg}", SourceLocation(str(path), error.lineno, error.colno)) from None


@functools.cache
def _bundled() -> tuple[tuple[Device, ...], dict[str, Device]]:
    """(every bundled device in file order, normalized name or alias -> device)."""
    devices: list[Device] = []
    by_name: dict[str, Device] = {}
    for file_name in BUNDLED_FILES:
        document = cast(_BundledFile, _read_json(DATA / file_name))
        for entry in document["devices"]:
            origin = f"bundled device file {file_name}, device '{entry.get('name')}'"
            found = device_from_mapping(entry, origin)
            devices.append(found)
            for name in (found.name, *entry.get("aliases", ())):
                key = normalize_name(name)
                if key in by_name:
                    raise InvalidArgumentError(f"{origin}: the name '{name}' is already taken by '{by_name[key].name}'")
                by_name[key] = found
    return tuple(devices), by_name


def bundled_devices() -> tuple[Device, ...]:
    """Every bundled device: XLA's GPU test devices (``*-test``), XLA's GPU target specs
    and the TPUs."""
    return _bundled()[0]


def bundled_device_names() -> tuple[str, ...]:
    """The canonical names of the bundled devices, in :func:`bundled_devices` order."""
    return tuple(found.name for found in bundled_devices())


def _by_name(name: str) -> Device:
    devices, by_name = _bundled()
    found = by_name.get(normalize_name(name))
    if found is not None:
        return found
    canonical = {normalize_name(device.name): device.name for device in devices}
    close = difflib.get_close_matches(normalize_name(name), list(by_name), n=3, cutoff=0.5)
    suggestions = list(dict.fromkeys(by_name[key].name for key in close))
    hint = f"did you mean {' or '.join(repr(s) for s in suggestions)}? " if suggestions else ""
    raise InvalidArgumentError(
        f"unknown device {name!r}: {hint}known devices: {', '.join(canonical.values())}; "
        "or give the path of a JSON device description"
    )


def _looks_like_path(spec: str) -> bool:
    return spec.endswith(".json") or os.sep in spec or "/" in spec


def load_device_file(path: str | os.PathLike[str]) -> Device:
    """The device described by a JSON file (see :mod:`hlo_indexing.devices.reader` for
    the format; ``"base": NAME`` starts from a bundled device). Errors name the file and
    the field."""
    file = Path(path)
    data = _read_json(file)
    base = None
    if isinstance(data, dict) and "base" in data:
        if not isinstance(data["base"], str):
            raise InvalidArgumentError(f"{file}: field 'base': expected a device name, got {data['base']!r}")
        base = _by_name(data["base"])
    return device_from_mapping(data, str(file), base)


def device(spec: str | os.PathLike[str] | GpuDevice | TpuDevice) -> Device:
    """The device ``spec`` names: a device object (returned as is), a bundled device's
    name or alias, or the path of a JSON description (a string ending in ``.json`` or
    holding a path separator, or a ``PathLike``)."""
    if isinstance(spec, (GpuDevice, TpuDevice)):
        return spec
    if isinstance(spec, os.PathLike):
        return load_device_file(spec)
    if not isinstance(spec, str):
        raise InvalidArgumentError(f"a device is a name, a JSON file path or a device object, got {type(spec).__name__}")
    if _looks_like_path(spec):
        return load_device_file(spec)
    return _by_name(spec)
