"""The ``pallas_call`` s of a traced function, read into plain data.

:func:`trace_calls` traces a function with jax (``jax.make_jaxpr``), walks its jaxpr and
every jaxpr nested in an equation's parameters (``jit``, ``custom_jvp_call``,
``custom_vjp_call``, ``cond`` branches, ``scan``/``while`` bodies, ...) and reads each
``pallas_call`` it meets: the grid, the dimension semantics (TPU compiler parameters),
the scalar-prefetch operands, and per input and output its array (shape, dtype), block
(one :class:`BlockDim` per dimension), index-map jaxpr, memory space, buffer count,
revisit mode and aliasing. A kernel's name and source line come from its jaxpr's debug
information; operands are named after the kernel's parameters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.pallas.jax_support import Jax, load_jax

if TYPE_CHECKING:  # jax is optional: imported at run time by jax_support only
    from jax._src.pallas.core import BlockMapping
    from jax.extend.core import ClosedJaxpr, Jaxpr, JaxprEqn

#: Block dimension kinds: ``blocked`` (index counts blocks), ``squeezed`` (size 1,
#: dropped from the kernel's view, index counts elements), ``element`` (index is an
#: element offset); anything else is ``unsupported`` (its ``note`` says what).
BLOCKED, SQUEEZED, ELEMENT, UNSUPPORTED = "blocked", "squeezed", "element", "unsupported"


@dataclass(frozen=True)
class BlockDim:
    """One dimension of a block: its kind (see above), size and, for ``unsupported`` or
    a padded ``element`` dimension, a note."""

    kind: str
    size: int
    note: str = ""


@dataclass(frozen=True)
class Operand:
    """One input or output of a ``pallas_call`` and its block.

    ``memory_space`` is ``vmem`` (the default: blocks are copied in and out by the
    pipeline), ``smem``, ``any``/``hbm`` (the kernel gets the whole array and moves data
    itself) or ``semaphore``; ``buffers`` the pipeline's buffer count (2, or
    ``pl.Buffered(n)``); ``revisit_any`` marks an output declared with
    ``RevisitMode.ANY``; ``aliased`` an input/output pair of ``input_output_aliases``."""

    role: str
    number: int
    name: str
    array_shape: tuple[int, ...]
    dtype: str
    bits: int | None
    block: tuple[BlockDim, ...]
    index_map: ClosedJaxpr
    memory_space: str
    buffers: int
    revisit_any: bool
    aliased: bool

    @property
    def label(self) -> str:
        """``input 0 (x_ref)``."""
        return f"{self.role} {self.number} ({self.name})"

    @property
    def block_sizes(self) -> tuple[int, ...]:
        """The size of each block dimension (1 for a squeezed one)."""
        return tuple(dim.size for dim in self.block)

    @property
    def pipelined(self) -> bool:
        """Whether the pipeline copies blocks of this operand (VMEM or SMEM blocks)."""
        return self.memory_space in ("vmem", "smem")


@dataclass(frozen=True)
class Scratch:
    """A scratch buffer of the kernel (``scratch_shapes``)."""

    shape: tuple[int, ...]
    dtype: str
    bits: int | None
    memory_space: str


@dataclass(frozen=True)
class PallasCall:
    """One ``pallas_call``: ``name`` (the kernel and its source line), ``grid`` (None when
    a grid size is only known at run time), ``semantics`` (per grid axis ``parallel`` or
    ``arbitrary``, the axes ``jax.vmap`` added, ``vmapped_axes``, being ``parallel`` as
    Mosaic makes them; None when the call gives none), ``backend`` (``tpu``, ``gpu`` or
    ``unknown``, from its compiler parameters), the scalar-prefetch operands' shapes, the
    operands, the scratch buffers and the call's ``vmem_limit_bytes``."""

    name: str
    grid: tuple[int, ...] | None
    semantics: tuple[str, ...] | None
    vmapped_axes: tuple[int, ...]
    backend: str
    prefetch_shapes: tuple[tuple[int, ...], ...]
    operands: tuple[Operand, ...]
    scratch: tuple[Scratch, ...]
    vmem_limit_bytes: int | None

    @property
    def inputs(self) -> tuple[Operand, ...]:
        """The inputs, in order."""
        return tuple(o for o in self.operands if o.role == "input")

    @property
    def outputs(self) -> tuple[Operand, ...]:
        """The outputs, in order."""
        return tuple(o for o in self.operands if o.role == "output")


def trace_calls(fn: Callable[..., object], args: Sequence[object]) -> list[PallasCall]:
    """Every ``pallas_call`` in the trace of ``fn(*args)``, in the order met (outer
    equations first). Raises :class:`InvalidArgumentError` when tracing fails (the
    message carries jax's)."""
    jax = load_jax()
    if not callable(fn):
        raise InvalidArgumentError(f"check_pallas expects a function, got {type(fn).__name__}")
    try:
        closed = jax.jax.make_jaxpr(fn)(*args)
    except Exception as error:  # the user's function or jax failed: say so, with jax's message
        name = getattr(fn, "__name__", type(fn).__name__)
        raise InvalidArgumentError(f"tracing {name} failed: {type(error).__name__}: {error}") from error
    return [read_call(eqn, jax) for eqn in _pallas_equations(closed.jaxpr, jax)]


def _pallas_equations(jaxpr: Jaxpr, jax: Jax) -> Iterator[JaxprEqn]:
    """The ``pallas_call`` equations of ``jaxpr`` and of the jaxprs nested in its
    equations' parameters (not inside a kernel), depth first, on an explicit stack."""
    stack = [iter(jaxpr.eqns)]
    while stack:
        eqn = next(stack[-1], None)
        if eqn is None:
            stack.pop()
            continue
        if eqn.primitive.name == "pallas_call":
            yield eqn
            continue
        nested = list(_nested_jaxprs(eqn.params, jax))
        for inner in reversed(nested):
            stack.append(iter(inner.eqns))


def _nested_jaxprs(params: dict[str, object], jax: Jax) -> Iterator[Jaxpr]:
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, jax.core.ClosedJaxpr):
                yield item.jaxpr
            elif isinstance(item, jax.core.Jaxpr):
                yield item


def read_call(eqn: JaxprEqn, jax: Jax) -> PallasCall:
    """The :class:`PallasCall` of one ``pallas_call`` equation."""
    params = eqn.params
    mapping = params["grid_mapping"]
    kernel = params["jaxpr"]
    debug = getattr(kernel, "debug_info", None)
    name = _kernel_name(debug)
    arg_names = list(getattr(debug, "arg_names", None) or ())
    grid = tuple(mapping.grid)
    static_grid = tuple(int(n) for n in grid) if all(isinstance(n, (int, np.integer)) for n in grid) else None
    compiler = params.get("compiler_params")
    compiler_params = _compiler_params(compiler)
    semantics_value = getattr(compiler_params, "dimension_semantics", None)
    vmapped = tuple(int(a) for a in getattr(mapping, "vmapped_dims", ()))
    semantics = None
    if semantics_value is not None:
        given = iter(_semantics_name(s) for s in semantics_value)
        semantics = tuple("parallel" if k in vmapped else next(given, "arbitrary") for k in range(len(grid)))
    backend = _backend(compiler_params)
    aliases = dict(params.get("input_output_aliases") or ())
    num_prefetch = mapping.num_index_operands
    prefetch_avals = list(mapping.index_map_avals[len(grid) :])
    prefetch_shapes = tuple(tuple(getattr(aval, "shape", ())) for aval in prefetch_avals)
    names = arg_names[num_prefetch : num_prefetch + mapping.num_inputs + mapping.num_outputs]
    aliased_inputs = {i - num_prefetch for i in aliases}
    aliased_outputs = set(aliases.values())
    operands = []
    for position, bm in enumerate(mapping.block_mappings):
        is_input = position < mapping.num_inputs
        number = position if is_input else position - mapping.num_inputs
        role = "input" if is_input else "output"
        operands.append(
            _operand(
                bm,
                role,
                number,
                names[position] if position < len(names) and names[position] else bm.origin,
                (number in aliased_inputs) if is_input else (number in aliased_outputs),
            )
        )
    scratch = tuple(_scratch(aval) for aval in mapping.scratch_avals)
    limit = getattr(compiler_params, "vmem_limit_bytes", None)
    return PallasCall(name, static_grid, semantics, vmapped, backend, prefetch_shapes, tuple(operands), scratch, limit)


def _kernel_name(debug: object) -> str:
    """``kernel at path:line`` (jax's words), the path relative to the working directory
    when it lies below it."""
    text = str(getattr(debug, "func_src_info", None) or "kernel")
    name, at, where = text.partition(" at ")
    if at:
        path, colon, line = where.rpartition(":")
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive (Windows)
            relative = path
        if colon and not relative.startswith(".."):
            return f"{name} at {relative}:{line}"
    return text


def _compiler_params(compiler: object) -> object:
    """The backend's parameters: older jax versions hold them in a dict by backend."""
    if isinstance(compiler, dict):
        for key in ("mosaic_tpu", "mosaic", "triton", "mosaic_gpu"):
            if key in compiler:
                return compiler[key]
        return None
    return compiler


def _backend(compiler_params: object) -> str:
    if compiler_params is None:
        return "unknown"
    module = type(compiler_params).__module__
    if "mosaic_gpu" in module or "triton" in module:
        return "gpu"
    if "mosaic" in module:
        return "tpu"
    return "unknown"


def _semantics_name(value: object) -> str:
    text = str(getattr(value, "value", value)).lower()
    return "arbitrary" if text in ("arbitrary", "none") else text


def _memory_space(value: object) -> str:
    if value is None:
        return "vmem"
    text = str(getattr(value, "name", value)).lower()
    text = text.rsplit(".", 1)[-1]
    if text in ("default", "vmem", "any", "smem", "hbm"):
        return "vmem" if text == "default" else text
    return "semaphore" if "sem" in text else text


def _dtype(aval: object) -> tuple[str, int | None]:
    dtype = getattr(aval, "dtype", None)
    try:
        numpy_dtype = np.dtype(dtype)
    except TypeError:  # an extended dtype (a PRNG key): no plain element size
        return str(dtype), None
    bits = 8 * numpy_dtype.itemsize if numpy_dtype.kind not in ("b",) else 8
    if re.fullmatch(r"u?int4|float4.*", numpy_dtype.name):
        bits = 4
    return numpy_dtype.name, bits


#: numpy dtype names -> XLA element type names (what the device rules take).
_XLA_NAMES = {
    "bool": "pred", "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz", "float8_e5m2fnuz": "f8e5m2fnuz",
}


def xla_element_type(dtype: str) -> str | None:
    """The XLA name of a numpy dtype name (``float32`` -> ``f32``, ``int8`` -> ``s8``,
    ``uint4`` -> ``u4``); None for a dtype without one (a PRNG key)."""
    if dtype in _XLA_NAMES:
        return _XLA_NAMES[dtype]
    match = re.fullmatch(r"(u?)int(\d+)", dtype)
    if match:
        return f"{'u' if match.group(1) else 's'}{match.group(2)}"
    return None


def _block_dim(dim: object) -> BlockDim:
    kind = type(dim).__name__
    if kind == "Blocked":
        return BlockDim(BLOCKED, int(getattr(dim, "block_size")))
    if kind == "Squeezed":
        return BlockDim(SQUEEZED, 1)
    if kind == "Element":
        padding = tuple(getattr(dim, "padding", (0, 0)))
        note = f"padding {padding}" if padding != (0, 0) else ""
        return BlockDim(ELEMENT if not note else UNSUPPORTED, int(getattr(dim, "block_size")), note)
    size = int(getattr(dim, "block_size", 1))
    return BlockDim(UNSUPPORTED, size, kind)


def _operand(bm: BlockMapping, role: str, number: int, name: str, aliased: bool) -> Operand:
    array = bm.array_aval
    dtype, bits = _dtype(array)
    pipeline = getattr(bm, "pipeline_mode", None)
    buffers = int(getattr(pipeline, "buffer_count", 2) or 2)
    revisit = getattr(pipeline, "revisit", None)
    revisit_any = str(getattr(revisit, "value", revisit)).lower() == "any"
    memory_space = _memory_space(getattr(bm.transformed_block_aval, "memory_space", None))
    return Operand(
        role=role,
        number=number,
        name=str(name),
        array_shape=tuple(int(n) for n in array.shape),
        dtype=dtype,
        bits=bits,
        block=tuple(_block_dim(d) for d in bm.block_shape),
        index_map=bm.index_map_jaxpr,
        memory_space=memory_space,
        buffers=buffers,
        revisit_any=revisit_any,
        aliased=aliased,
    )


def _scratch(aval: object) -> Scratch:
    inner = getattr(aval, "inner_aval", aval)
    dtype, bits = _dtype(inner)
    return Scratch(tuple(int(n) for n in getattr(inner, "shape", ())), dtype, bits, _memory_space(getattr(aval, "memory_space", None)))


def evaluate_index_map(call: PallasCall, operand: Operand, point: Sequence[int]) -> tuple[int, ...]:
    """The block indices ``operand``'s index map gives at a grid point, evaluated by jax
    (prefetched arrays read as zeros: only points whose indices do not depend on them
    are evaluated)."""
    jax = load_jax()
    closed = operand.index_map
    arguments: list[object] = [np.int32(v) for v in point]
    if call.prefetch_shapes:
        arguments += [np.zeros(shape, np.int32) for shape in call.prefetch_shapes]
        values = jax.core.jaxpr_as_fun(jax.discharge_state(closed))(*arguments)
        values = values[: len(operand.block)]
    else:
        values = jax.core.jaxpr_as_fun(closed)(*arguments)
    return tuple(int(v) for v in values)
