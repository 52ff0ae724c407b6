"""The grid and blocks of a Pallas TPU kernel, read from its ``tpu_custom_call``.

A ``pallas_call`` lowered for TPU (``jax.export(..., platforms=['tpu'])``) becomes a
``stablehlo.custom_call @tpu_custom_call`` whose ``backend_config`` JSON holds the Mosaic
kernel as MLIR bytecode (base64, ``custom_call_config.body``). :func:`mosaic_kernel`
parses it in a context of its own (jaxlib's TPU dialect registered; the versioned ops,
``stable_mosaic.arith.addi``, stay unregistered) and reads the kernel function's
``iteration_bounds`` (the grid), ``scalar_prefetch`` and ``window_params``: per input,
then per output, its block shape (``window_bounds``) and the block index function
(``transform_indices``: grid indices, then the scalar-prefetch refs), copied out of the
private context as plain data (:class:`IndexFunction`: its ops by name, operands by
number); what the ops compute is the business of the maps built from them
(:mod:`hlo_indexing.ops.tpu_kernels`). A window without ``transform_indices``
(``memory_space=ANY``) is the whole operand. Example: ``pl.BlockSpec((8, 128), lambda i,
j: (i, 1 - j))`` over a grid ``(4, 2)`` reads as ``Window((8, 128), IndexFunction(2,
(IndexStep("arith.constant", (), 1), IndexStep("arith.subi", (2, 1))), (0, 3)))``: value
``k`` is argument ``k`` below the arguments' count, then the result of step ``k - 2``.
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


@dataclass(frozen=True)
class IndexStep:
    """One op of a block index function: its ``name`` (``arith.addi``, without the
    versioned prefix), the values it reads (``operands``, numbered as in
    :class:`IndexFunction`) and its ``attribute``: the value of an integer
    ``arith.constant`` (an ``i1`` one as a bool), the predicate of an ``arith.cmpi``
    (MLIR's numbering: 0 ``eq``, 1 ``ne``, 2 ``slt`` ... 9 ``uge``), else None."""

    name: str
    operands: tuple[int, ...]
    attribute: int | bool | None = None


@dataclass(frozen=True)
class IndexFunction:
    """A block index function: value ``k`` is argument ``k`` for ``k < num_arguments``
    (the grid indices, then the scalar-prefetch refs), else the result of
    ``steps[k - num_arguments]``; ``results`` are the values returned, one per block
    dimension."""

    num_arguments: int
    steps: tuple[IndexStep, ...]
    results: tuple[int, ...]


@dataclass(frozen=True)
class Window:
    """One operand's window: its ``block_shape`` and block ``index`` function, both None
    for the whole operand (``memory_space=ANY``)."""

    block_shape: tuple[int, ...] | None
    index: IndexFunction | None


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
    windows = tuple(_window(ir.DictAttr(param), functions) for param in ir.ArrayAttr(attributes["window_params"]))
    return MosaicKernel(ir.StringAttr(attributes["sym_name"]).value, grid, prefetch, windows)


def _window(param: "ir.DictAttr", functions: dict[str, ir.Operation]) -> Window:
    if "transform_indices" not in param:
        return Window(None, None)
    shape = tuple(ir.DenseI64ArrayAttr(param["window_bounds"]))
    function = functions.get(ir.FlatSymbolRefAttr(param["transform_indices"]).value)
    if function is None:
        raise ValueError(f"the index function {param['transform_indices']} is missing")
    index = _index_function(function)
    if len(index.results) != len(shape):
        raise ValueError(f"the index function gives {len(index.results)} block indices for {len(shape)} block dimensions")
    return Window(shape, index)


def _index_function(function: ir.Operation) -> IndexFunction:
    """``function``'s ops as plain data (one block; every op but the return has one result)."""
    blocks = list(function.regions[0].blocks)
    if len(blocks) != 1:
        raise ValueError(f"an index function has {len(blocks)} blocks")
    block = blocks[0]
    numbers: dict[ir.Value, int] = {argument: k for k, argument in enumerate(block.arguments)}
    steps: list[IndexStep] = []
    for view in block.operations:
        op = view.operation
        name = op.name.removeprefix(_VERSIONED)
        try:
            operands = tuple(numbers[value] for value in op.operands)
        except KeyError:
            raise ValueError(f"{name} in an index function reads a value defined outside it") from None
        if name == "func.return":
            return IndexFunction(len(block.arguments), tuple(steps), operands)
        if len(op.results) != 1:
            raise ValueError(f"{name} in an index function has {len(op.results)} results")
        steps.append(IndexStep(name, operands, _attribute(name, op)))
        numbers[op.results[0]] = len(block.arguments) + len(steps) - 1
    raise ValueError("an index function returns nothing")


def _attribute(name: str, op: ir.Operation) -> int | bool | None:
    """The integer an op carries (see :class:`IndexStep`)."""
    attributes = op.attributes
    if name == "arith.constant":
        value = attributes["value"]
        if isinstance(value, ir.BoolAttr):
            return value.value
        if isinstance(value, ir.IntegerAttr):
            is_bool = isinstance(value.type, ir.IntegerType) and value.type.width == 1
            return value.value != 0 if is_bool else value.value
        return None
    if name == "arith.cmpi" and "predicate" in attributes:
        return ir.IntegerAttr(attributes["predicate"]).value
    return None
