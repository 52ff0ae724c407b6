"""Pallas kernels described as data, checked statically and run in TPU interpret mode.

A :class:`GridCase` is a grid, its dimension semantics and operands (array shape, block
shape, index map as Python source). :func:`build` makes the ``pallas_call`` of a case;
:func:`static_verdict` checks it with :func:`hlo_indexing.check_pallas`;
:func:`observe` runs cases in TPU interpret mode in a child process (this file run as a
script: the worker) and returns what the runs show, the labels the static verdict is
compared with:

* **run 1 (reads and writes, one core, every axis arbitrary: interpret mode visits the
  points of parallel axes out of order)**: every operand's spec is read as an input (the
  outputs' specs too, as probe inputs of zeros), every output is written (ones), and a
  probe output records per grid point whether a read block held NaN (padding: the data
  is zeros). It shows out-of-range blocks (interpret mode raises on the first, naming the
  input), revisits (it raises), partial blocks (probe) and uncovered outputs (NaN left
  in a NaN-initialised output);
* **run 1b (reads only)**: when run 1 raised on a revisit, the reads alone, for the
  partial blocks;
* **run 2 (races)**: when an axis is parallel, the outputs written with one simulated core
  per point of the parallel subgrid, race detection on; also shows uncovered outputs
  when run 1 could not. (Aliasing the outputs to inputs, which would turn the revisit
  check off, makes jax 0.10.2's interpreter fail on partial blocks: a result of the
  padded shape.) A run that raises observes nothing more: its fields stay None.

Interpret mode keeps global state: after a raise the worker calls
``reset_tpu_interpret_mode_state`` (without it, the next run raises the stale error), and
races are read from ``races.races_found`` of the last run. The worker is one child
process per :func:`observe` call, so the test process never runs interpret mode.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path



@dataclass(frozen=True)
class Spec:
    """One operand: ``array_shape``, ``block_shape`` (None entries: squeezed; ``"e3"``:
    ``pl.Element(3)``, whose index is an element offset) and its index map as the source
    of a lambda over the grid indices."""

    array_shape: tuple[int, ...]
    block_shape: tuple[int | str | None, ...]
    index_map: str
    dtype: str = "float32"


@dataclass(frozen=True)
class GridCase:
    """A kernel as data (see the module docstring)."""

    grid: tuple[int, ...]
    semantics: tuple[str, ...] | None
    inputs: tuple[Spec, ...]
    outputs: tuple[Spec, ...]
    name: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(data: dict) -> "GridCase":
        def spec(d: dict) -> Spec:
            return Spec(tuple(d["array_shape"]), tuple(d["block_shape"]), d["index_map"], d.get("dtype", "float32"))

        semantics = tuple(data["semantics"]) if data["semantics"] is not None else None
        return GridCase(tuple(data["grid"]), semantics, tuple(spec(s) for s in data["inputs"]), tuple(spec(s) for s in data["outputs"]), data.get("name", ""))


@dataclass
class Observation:
    """What interpret mode showed for one case (labels, see the module docstring).
    ``out_of_range``: the spec labels interpret mode raised on (``input 0``,
    ``output 1``); the others as their names say, None when no run could observe them;
    ``ran`` lists the runs made; ``error`` any other exception."""

    out_of_range: list[str] = field(default_factory=list)
    revisit: list[str] = field(default_factory=list)
    partial: list[str] | None = None
    uncovered: list[str] | None = None
    race: bool | None = None
    ran: list[str] = field(default_factory=list)
    error: str = ""


def spec_labels(case: GridCase) -> list[str]:
    return [f"input {k}" for k in range(len(case.inputs))] + [f"output {k}" for k in range(len(case.outputs))]


# ------------------------------------------------------------------ building calls


def abstract_tpu():
    """A context under which ``jax.export(..., platforms=['tpu'])`` lowers Pallas for a
    TPU v5e on a CPU-only machine (the rank-1 block rule and index maps with ``//`` or
    ``%`` need a TPU chip kind)."""
    import jax
    from jax._src import mesh as mesh_lib

    kind = mesh_lib.AbstractDevice(device_kind="TPU v5 lite", num_cores=1, platform="tpu")
    return jax.sharding.use_abstract_mesh(mesh_lib.AbstractMesh((1,), ("x",), abstract_device=kind))



def _block_spec(pl, spec: Spec, **extra):
    import jax.numpy as jnp
    from jax import lax

    index_map = eval(spec.index_map, {"jnp": jnp, "lax": lax})  # noqa: S307 - test data
    block = tuple(pl.Element(int(b[1:])) if isinstance(b, str) else b for b in spec.block_shape)
    return pl.BlockSpec(block, index_map, **extra)


def _compiler_params(pltpu, case: GridCase):
    if case.semantics is None:
        return None
    return pltpu.CompilerParams(dimension_semantics=tuple(case.semantics))


def build(case: GridCase, interpret=None):
    """``(function, argument structs)`` of the case as written: inputs read, outputs
    written with ones (the static checker's view)."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    n_in = len(case.inputs)

    def kernel(*refs):
        for ref in refs[n_in:]:
            ref[...] = jnp.ones(ref.shape, ref.dtype)

    call = pl.pallas_call(
        kernel,
        grid=tuple(case.grid),
        in_specs=[_block_spec(pl, s) for s in case.inputs],
        out_specs=[_block_spec(pl, s) for s in case.outputs],
        out_shape=[jax.ShapeDtypeStruct(tuple(s.array_shape), jnp.dtype(s.dtype)) for s in case.outputs],
        compiler_params=_compiler_params(pltpu, case),
        interpret=interpret if interpret is not None else False,
    )
    args = [jax.ShapeDtypeStruct(tuple(s.array_shape), jnp.dtype(s.dtype)) for s in case.inputs]
    return call, args


def static_verdict(case: GridCase, device=None):
    """``check_pallas`` on the case."""
    import hlo_indexing

    function, args = build(case)
    return hlo_indexing.check_pallas(function, *args, device=device)


def verdict_labels(report) -> dict[str, set[str]]:
    """The static findings as labels comparable with :class:`Observation`: kind -> the
    spec labels (``input 0``, ``output 1``) it names."""
    labels: dict[str, set[str]] = {}
    for finding in report.findings:
        label = re.match(r"(input|output) \d+", finding.operand or "")
        labels.setdefault(finding.kind, set()).add(label.group(0) if label else "")
    return labels


# ------------------------------------------------------------------ the worker


def _linear_index(grid: tuple[int, ...]) -> str:
    names = [f"g{k}" for k in range(len(grid))]
    terms = [f"{n} * {math.prod(grid[k + 1:])}" for k, n in enumerate(names)]
    return f"lambda {', '.join(names) or '*_'}: ({' + '.join(terms) or '0'}, 0)"


def _run_reads_and_writes(case: GridCase, write: bool, observation: Observation) -> str:
    """Run 1 (``write``) or 1b: returns 'raised' when interpret mode raised."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    reads = list(case.inputs) + list(case.outputs)
    labels = spec_labels(case)
    names = [f"read{k}" for k in range(len(reads))]
    writes = list(case.outputs) if write else []
    size = math.prod(case.grid)
    probe_spec = pl.BlockSpec((None, len(reads)), eval(_linear_index(case.grid)))  # noqa: S307

    def kernel(*refs):
        read_refs = refs[: len(reads)]
        write_refs = refs[len(reads) : len(reads) + len(writes)]
        probe = refs[-1]
        for ref in write_refs:
            ref[...] = jnp.ones(ref.shape, ref.dtype)
        flags = [jnp.any(jnp.isnan(r[...])).astype(jnp.float32) for r in read_refs]
        probe[...] = jnp.stack(flags)

    # Name the kernel's parameters so interpret mode's messages say which spec.
    source = f"def named({', '.join(names + [f'write{k}' for k in range(len(writes))] + ['probe'])}):\n    return body({', '.join(names + [f'write{k}' for k in range(len(writes))] + ['probe'])})\n"
    scope = {"body": kernel}
    exec(source, scope)  # noqa: S102 - test code building a kernel with named parameters
    params = pltpu.InterpretParams(out_of_bounds_reads="raise", detect_races=False, num_cores_or_threads=1)
    call = pl.pallas_call(
        scope["named"],
        grid=tuple(case.grid),
        in_specs=[_block_spec(pl, s) for s in reads],
        out_specs=[_block_spec(pl, s) for s in writes] + [probe_spec],
        out_shape=[jax.ShapeDtypeStruct(tuple(s.array_shape), jnp.dtype(s.dtype)) for s in writes]
        + [jax.ShapeDtypeStruct((size, len(reads)), jnp.float32)],
        # In grid order on one core: interpret mode visits parallel axes out of order.
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",) * len(case.grid)),
        interpret=params,
    )
    try:
        results = call(*[jnp.zeros(tuple(s.array_shape), jnp.dtype(s.dtype)) for s in reads])
        results = [np.asarray(r) for r in results]
    except Exception as error:  # interpret mode reports through exceptions
        text = str(error)
        _reset()
        found = re.search(r'Out-of-bounds block index .* for (?:input|output) "(\w+)"', text)
        revisit = re.search(r"Revisited block .* of output (\d+)", text)
        if found and found.group(1).startswith("read"):
            observation.out_of_range.append(labels[int(found.group(1)[4:])])
        elif revisit:
            observation.revisit.append(f"output {revisit.group(1)}")
        else:
            observation.error = text.splitlines()[-1][:300] if text else type(error).__name__
        return "raised"
    probe = results[-1]
    observation.partial = [label for k, label in enumerate(labels) if probe[:, k].any()]
    if write:
        observation.uncovered = [f"output {k}" for k, result in enumerate(results[: len(writes)]) if np.isnan(result).any()]
    return "ran"


def _run_races(case: GridCase, observation: Observation) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as state
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    semantics = case.semantics or ("parallel",) * len(case.grid)
    cores = math.prod(n for n, s in zip(case.grid, semantics) if s != "arbitrary") or 1

    def kernel(*refs):
        for ref in refs:
            ref[...] = jnp.ones(ref.shape, ref.dtype)

    params = pltpu.InterpretParams(detect_races=True, out_of_bounds_reads="raise", num_cores_or_threads=cores)
    call = pl.pallas_call(
        kernel,
        grid=tuple(case.grid),
        out_specs=[_block_spec(pl, s) for s in case.outputs],
        out_shape=[jax.ShapeDtypeStruct(tuple(s.array_shape), jnp.dtype(s.dtype)) for s in case.outputs],
        compiler_params=pltpu.CompilerParams(dimension_semantics=tuple(semantics)),
        interpret=params,
    )
    try:
        results = [np.asarray(r) for r in call()]
    except Exception as error:  # interpret mode reports through exceptions
        _reset()
        if "Revisited block" not in str(error):
            observation.error = str(error).splitlines()[-1][:300]
        return "raised"
    observation.race = bool(state.races is not None and state.races.races_found)
    if observation.uncovered is None:
        observation.uncovered = [f"output {k}" for k, r in enumerate(results) if np.isnan(r).any()]
    return "ran"


def _reset() -> None:
    from jax.experimental.pallas import tpu as pltpu

    pltpu.reset_tpu_interpret_mode_state() if hasattr(pltpu, "reset_tpu_interpret_mode_state") else _private_reset()


def _private_reset() -> None:
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call

    interpret_pallas_call.reset_tpu_interpret_mode_state()


def observe_one(case: GridCase) -> Observation:
    """The runs of the module docstring, in this process (the worker's job)."""
    observation = Observation()
    first = _run_reads_and_writes(case, True, observation)
    observation.ran.append(f"reads+writes: {first}")
    if observation.out_of_range or observation.error:
        return observation
    if observation.revisit:
        observation.ran.append("reads: " + _run_reads_and_writes(case, False, observation))
        if observation.out_of_range or observation.error:
            return observation
    semantics = case.semantics or ("parallel",) * len(case.grid)
    parallel = any(n > 1 and s != "arbitrary" for n, s in zip(case.grid, semantics))
    if parallel:
        observation.ran.append("races: " + _run_races(case, observation))
    return observation


@dataclass
class KernelRun:
    """What running a kernel of :mod:`pallas_kernels` showed: the error kinds interpret
    mode saw (``out_of_range``, ``revisit`` from one in-order core; ``race`` from one core
    per parallel grid point; ``uncovered`` from NaN left in a NaN-initialised output) and,
    for a kernel with a reference, the largest difference from it."""

    kinds: list[str] = field(default_factory=list)
    max_error: float | None = None
    ran: list[str] = field(default_factory=list)
    error: str = ""


def run_kernel(name: str) -> KernelRun:
    """The runs of one kernel of :mod:`pallas_kernels`, in this process."""
    import jax.numpy as jnp
    import numpy as np
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as state
    from jax.experimental.pallas import tpu as pltpu

    import pallas_kernels  # next to this file, which the worker runs as a script

    kernel = pallas_kernels.KERNELS[name]
    result = KernelRun()
    arrays = pallas_kernels.arguments(kernel, concrete=True)
    in_order = ("arbitrary",) * len(kernel.grid)
    params = pltpu.InterpretParams(out_of_bounds_reads="raise", num_cores_or_threads=1)
    try:
        outputs = kernel.build(params, in_order)(*arrays)
        outputs = [np.asarray(o) for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]
        result.ran.append("in order: ran")
        if any(np.isnan(o).any() for o in outputs):
            result.kinds.append("uncovered-output")
        if kernel.reference is not None:
            expected = kernel.reference(*[np.asarray(a) for a in arrays])
            result.max_error = float(np.max(np.abs(outputs[0] - expected)))
    except Exception as error:  # interpret mode reports through exceptions
        text = str(error)
        _reset()
        result.ran.append("in order: raised")
        if "Out-of-bounds block index" in text:
            result.kinds.append("block-index-out-of-range")
        elif "Revisited block" in text:
            result.kinds.append("non-consecutive-revisit")
        else:
            result.error = text.splitlines()[-1][:300]
        if "block-index-out-of-range" in result.kinds:
            return result
    semantics = kernel.semantics or ()
    cores = math.prod(n for n, s in zip(kernel.grid, semantics) if s != "arbitrary")
    if cores > 1:
        params = pltpu.InterpretParams(out_of_bounds_reads="raise", detect_races=True, num_cores_or_threads=cores)
        try:
            outputs = kernel.build(params, None)(*arrays)
            np.asarray(outputs[0] if isinstance(outputs, (list, tuple)) else outputs)
            result.ran.append(f"{cores} cores: ran")
            if state.races is not None and state.races.races_found:
                result.kinds.append("race")
        except Exception as error:  # interpret mode reports through exceptions
            _reset()
            result.ran.append(f"{cores} cores: raised")
            result.error = str(error).splitlines()[-1][:300]
    return result


def observe(cases: list[GridCase], timeout: float = 1800) -> list[Observation]:
    """Run every case in TPU interpret mode in one child process."""
    return [Observation(**o) for o in _worker([{"case": c.to_json()} for c in cases], timeout)]


def run_kernels(names: list[str], timeout: float = 1800) -> list[KernelRun]:
    """Run kernels of :mod:`pallas_kernels` in TPU interpret mode in one child process."""
    return [KernelRun(**o) for o in _worker([{"kernel": n} for n in names], timeout)]


def _worker(requests: list[dict], timeout: float) -> list[dict]:
    payload = json.dumps(requests)
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve())], input=payload, capture_output=True, text=True, timeout=timeout, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"interpret worker failed ({done.returncode}): {done.stderr[-3000:]}")
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last)


def _serve() -> None:
    results = []
    for request in json.loads(sys.stdin.read()):
        if "case" in request:
            results.append(asdict(observe_one(GridCase.from_json(request["case"]))))
        else:
            results.append(asdict(run_kernel(request["kernel"])))
    print(json.dumps(results))


if __name__ == "__main__":
    _serve()
