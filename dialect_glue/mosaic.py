"""The grid and blocks of a Pallas TPU kernel, read from its ``tpu_custom_call``.

A ``pallas_call`` lowered for TPU (``jax.export(..., platforms=['tpu'])``) becomes a
``stablehlo.custom_call @tpu_custom_call`` whose ``backend_config`` JSON holds the Mosaic
kernel as MLIR bytecode (base64, ``custom_call_config.body``). :func:`mosaic_kernel`
parses it in a context of its own (jaxlib's TPU dialect registered; the versioned ops,
``stable_mosaic.arith.addi``, stay unregistered) and reads the kernel function's
``iteration_bounds`` (the grid), ``scalar_prefetch`` and ``window_params``: per input,
then per output, its block shape (``window_bounds``) and the block index function
(``transform_indices``: grid indices, then the scalar-prefetch refs). A block index
function is read as an affine function of the grid indices when it is one (constants,
``addi``, ``subi``, ``muli`` by a constant, integer casts); otherwise the window says
why not. A window without ``transform_indices`` (``memory_space=ANY``) is the whole
operand. Example: ``pl.BlockSpec((8, 128), lambda i, j: (i, 1 - j))`` over a grid
``(4, 2)`` reads as block indices ``(AffineIndex((1, 0), 0), AffineIndex((0, -1), 1))``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import OpLike, ir, tpu_dialect
from hlo_indexing.dialect_glue.locations import located
from hlo_indexing.dialect_glue.op_attrs import invalid
from hlo_indexing.errors import UnsupportedError

#: The custom call target of Pallas TPU kernels.
TPU_CUSTOM_CALL = "tpu_custom_call"
#: The prefix of the versioned op names of a serialized kernel.
_VERSIONED = "stable_mosaic."
#: Integer casts: the value is unchanged (grid indices and block indices fit in 32 bits).
_CASTS = frozenset({"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"})


@dataclass(frozen=True)
class AffineIndex:
    """``sum(coefficients[k] * grid index k) + constant``."""

    coefficients: tuple[int, ...]
    constant: int = 0

    def plus(self, other: "AffineIndex", sign: int = 1) -> "AffineIndex":
        """``self + sign * other``."""
        return AffineIndex(tuple(a + sign * b for a, b in zip(self.coefficients, other.coefficients)),
                           self.constant + sign * other.constant)

    def times(self, factor: int) -> "AffineIndex":
        """``self * factor``."""
        return AffineIndex(tuple(a * factor for a in self.coefficients), self.constant * factor)

    @property
    def is_constant(self) -> bool:
        """Whether no grid index takes part."""
        return not any(self.coefficients)


@dataclass(frozen=True)
class Window:
    """One operand's window: its ``block_shape`` and ``block_index`` (one
    :class:`AffineIndex` per block dimension), both None for the whole operand;
    ``block_index`` None with a ``reason`` when the index function is not affine."""

    block_shape: tuple[int, ...] | None
    block_index: tuple[AffineIndex, ...] | None
    reason: str = ""


@dataclass(frozen=True)
class MosaicKernel:
    """A Pallas TPU kernel's ``name``, ``grid``, number of scalar-prefetch operands
    (the call's first operands) and windows (per input, then per output)."""

    name: str
    grid: tuple[int, ...]
    scalar_prefetch: int
    windows: tuple[Window, ...]


def mosaic_kernel(op: OpLike) -> MosaicKernel:
    """The kernel of a ``tpu_custom_call`` (see the module docstring).
    :class:`InvalidAttributeError` when its ``backend_config`` holds no readable kernel;
    :class:`UnsupportedError` when the bindings have no TPU dialect."""
    operation = op.operation if isinstance(op, ir.OpView) else op
    attributes = operation.attributes
    config = attributes["backend_config"] if "backend_config" in attributes else None
    if not isinstance(config, ir.StringAttr):
        raise invalid(operation, "backend_config", "is not the JSON of a Pallas TPU kernel")
    try:
        body = json.loads(config.value)["custom_call_config"]["body"]
        return _read_kernel(body if isinstance(body, str) else "")
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid(operation, "backend_config", f"holds no Mosaic kernel ({type(exc).__name__}: {exc})") from None
    except UnsupportedError as exc:
        raise located(exc, operation) from None


@functools.lru_cache(maxsize=64)
def _read_kernel(body: str) -> MosaicKernel:
    """The kernel serialized as ``body`` (once per distinct kernel)."""
    tpu = tpu_dialect()
    if tpu is None:
        raise UnsupportedError("reading a Pallas TPU kernel needs jaxlib's TPU dialect (jaxlib.mlir._mlir_libs._tpu_ext)")
    try:
        bytecode = base64.b64decode(body, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"the body is not base64: {exc}") from None
    context = ir.Context()
    tpu.register_dialect(context)
    context.allow_unregistered_dialects = True
    try:
        module = ir.Module.parse(bytecode, context=context)
    except ir.MLIRError as exc:
        raise ValueError(f"the body is not a Mosaic module: {exc}") from None
    functions = {}
    kernel = None
    for op in module.body.operations:
        operation = op.operation
        attributes = operation.attributes
        if "sym_name" in attributes:
            functions[ir.StringAttr(attributes["sym_name"]).value] = operation
        if "window_params" in attributes:
            kernel = operation
    if kernel is None:
        raise ValueError("the module has no kernel function (with window_params)")
    attributes = kernel.attributes
    grid = tuple(ir.DenseI64ArrayAttr(attributes["iteration_bounds"])) if "iteration_bounds" in attributes else ()
    prefetch = ir.IntegerAttr(attributes["scalar_prefetch"]).value if "scalar_prefetch" in attributes else 0
    windows = tuple(_window(ir.DictAttr(param), functions, len(grid)) for param in ir.ArrayAttr(attributes["window_params"]))
    return MosaicKernel(ir.StringAttr(attributes["sym_name"]).value, grid, prefetch, windows)


def _window(param: "ir.DictAttr", functions: dict[str, ir.Operation], grid_rank: int) -> Window:
    if "transform_indices" not in param:
        return Window(None, None)
    shape = tuple(ir.DenseI64ArrayAttr(param["window_bounds"]))
    function = functions.get(ir.FlatSymbolRefAttr(param["transform_indices"]).value)
    if function is None:
        raise ValueError(f"the index function {param['transform_indices']} is missing")
    indices, reason = _affine_indices(function, grid_rank)
    if indices is not None and len(indices) != len(shape):
        raise ValueError(f"the index function gives {len(indices)} block indices for {len(shape)} block dimensions")
    return Window(shape, indices, reason)


def _affine_indices(function: ir.Operation, grid_rank: int) -> tuple[tuple[AffineIndex, ...] | None, str]:
    """The block indices a kernel's index function returns, as affine functions of the
    grid indices; ``(None, why not)`` when they are not."""
    block = function.regions[0].blocks[0]
    values: dict[ir.Value, AffineIndex] = {}
    for k, argument in enumerate(block.arguments):
        if k < grid_rank:
            values[argument] = AffineIndex(tuple(int(j == k) for j in range(grid_rank)))
    for view in block.operations:
        op = view.operation
        name = op.name.removeprefix(_VERSIONED)
        if name == "func.return":
            returned = [values.get(value) for value in op.operands]
            if any(index is None for index in returned):
                return None, "its block index reads a scalar-prefetch operand"
            return tuple(index for index in returned if index is not None), ""
        operands = [values.get(value) for value in op.operands]
        if any(index is None for index in operands):
            return None, "its block index reads a scalar-prefetch operand"
        found = _affine_op(name, op, [index for index in operands if index is not None], grid_rank)
        if found is None:
            return None, f"its block index uses {name}, which is not affine in the grid indices here"
        values[op.results[0]] = found
    return None, "its index function returns nothing"


def _affine_op(name: str, op: ir.Operation, operands: list[AffineIndex], grid_rank: int) -> AffineIndex | None:
    """The affine result of one op of an index function, None when it has none."""
    if name == "arith.constant":
        value = op.attributes["value"]
        return AffineIndex((0,) * grid_rank, ir.IntegerAttr(value).value) if isinstance(value, ir.IntegerAttr) else None
    if name in _CASTS:
        return operands[0]
    if name in ("arith.addi", "arith.subi"):
        return operands[0].plus(operands[1], 1 if name == "arith.addi" else -1)
    if name == "arith.muli":
        if operands[1].is_constant:
            return operands[0].times(operands[1].constant)
        if operands[0].is_constant:
            return operands[1].times(operands[0].constant)
    return None
