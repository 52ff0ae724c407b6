"""``python -m hlo_indexing.pallas FILE.py:FUNC --arg TYPE ...``: check the Pallas
kernels a function of a Python file calls, from the command line.

``FILE.py`` is executed as a module (its ``if __name__ == "__main__":`` block does not
run; the modules it imports are found as ``python -m`` finds them: in the current
directory and on ``PYTHONPATH``, so run from its folder when it imports modules beside
it), ``FUNC`` names a function in it (``a.b`` for an attribute of an attribute). Each
``--arg`` gives one positional argument as a type, ``f32[128,256]`` (element type: numpy
names ``float32``, ``bfloat16``, ``int32``, ... or XLA's ``f32``, ``bf16``, ``s32``,
``u8``, ``pred``; ``f32[]`` is a scalar). ``--device tpu-v5e`` adds the device's block
rules, ``--format json`` prints :meth:`~.report.PallasReport.to_dict`, ``--max-points``
bounds the grid points a check enumerates.

Exit code: 0 when no finding is an error, 1 when one is, 2 when the kernel could not be
checked (the file, the function, an argument, jax missing): ``error: ...`` on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hlo_indexing.errors import HloIndexingError, InputNotFoundError, InvalidArgumentError
from hlo_indexing.limits import MAX_PALLAS_GRID_POINTS
from hlo_indexing.pallas.check import check_pallas
from hlo_indexing.pallas.jax_support import load_jax

if TYPE_CHECKING:  # jax is optional: imported at run time by jax_support only
    import jax

#: XLA element type names accepted in ``--arg`` besides numpy's.
_XLA_TO_NUMPY = {
    "pred": "bool", "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64", "i8": "int8", "i16": "int16",
    "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
}
_ARGUMENT = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*\[\s*([0-9,\s]*)\]\s*$")


def parse_argument(text: str) -> jax.ShapeDtypeStruct:
    """A ``jax.ShapeDtypeStruct`` from ``f32[128,256]``; :class:`InvalidArgumentError`
    naming the text otherwise."""
    match = _ARGUMENT.match(text)
    if match is None:
        raise InvalidArgumentError(f"--arg {text!r}: expected TYPE[D0,D1,...], e.g. f32[128,256] or bf16[8]")
    name, dims = match.groups()
    jax = load_jax().jax
    try:
        dtype = jax.numpy.dtype(_XLA_TO_NUMPY.get(name, name))
    except TypeError:
        raise InvalidArgumentError(f"--arg {text!r}: unknown element type {name!r}") from None
    shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
    return jax.ShapeDtypeStruct(shape, dtype)


def load_function(target: str) -> Callable[..., object]:
    """The function ``FILE.py:NAME`` names (the file executed as a module)."""
    path_text, sep, name = target.rpartition(":")
    if not sep or not path_text or not name:
        raise InvalidArgumentError(f"{target!r}: expected FILE.py:FUNCTION")
    path = Path(path_text)
    if not path.is_file():
        raise InputNotFoundError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"_hlo_indexing_pallas_target_{abs(hash(str(path.resolve())))}", path)
    if spec is None or spec.loader is None:
        raise InvalidArgumentError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file failed: report it as bad input
        hint = ""
        if isinstance(error, ModuleNotFoundError):
            hint = f" (modules are found in the current directory and on PYTHONPATH: run from {path.resolve().parent} for the modules beside the file)"
        raise InvalidArgumentError(f"{path}: running the file failed: {type(error).__name__}: {error}{hint}") from error
    value: object = module
    for part in name.split("."):
        if not hasattr(value, part):
            raise InvalidArgumentError(f"{path}: no attribute {name!r}")
        value = getattr(value, part)
    if not callable(value):
        raise InvalidArgumentError(f"{path}: {name!r} is not a function")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m hlo_indexing.pallas",
        description="Check the Pallas kernels a function calls: races, uncovered outputs, out-of-range, partial and "
        "revisited blocks, and (with --device) blocks the TPU backend rejects or that overflow VMEM.",
    )
    parser.add_argument("target", help="FILE.py:FUNCTION")
    parser.add_argument("--arg", action="append", default=[], metavar="TYPE", help="an argument's type, e.g. f32[128,256] (repeat, in order)")
    parser.add_argument("--device", default=None, help="a device name (tpu-v5e, tpu-v6e, ...) or a JSON description file")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--max-points", type=int, default=MAX_PALLAS_GRID_POINTS, help="grid points a check may enumerate")
    options = parser.parse_args(argv)
    # jaxlib's C++ logs informational lines on stderr when its CPU client starts (which
    # evaluating an index map does): the command prints findings only.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    try:
        function = load_function(options.target)
        arguments = [parse_argument(text) for text in options.arg]
        report = check_pallas(function, *arguments, device=options.device, max_points=options.max_points)
    except HloIndexingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if options.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report)
    return 1 if report.errors else 0
