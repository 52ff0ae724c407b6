"""Shared helpers of the tiling tests (``test_tiling_*``, ``test_symbolic_tiling*``):
functions parsed from StableHLO text or imported from HLO text, their tiled fusions,
tile boxes, and an independent brute-force evaluator of what a fusion reads.

:class:`Fusion` builds a StableHLO function op by op and evaluates, with numpy and the
ops' semantics only, which parameter elements each element of a value depends on: a
boolean array of the value's shape plus one axis over every parameter element (one-hot
for a parameter; OR for elementwise ops; the same numpy transformation as the op for
broadcast, transpose, reshape, bitcast (through its layouts), slice, concatenate, pad, reverse, dynamic slice,
dynamic update slice; ``any``
over the reduced axes). It shares no code with the analysis, so tests compare the
analysis' tiles, footprints and exactness with it.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.maps.exact import isl_available
from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.exactness import TilingExactness
from hlo_indexing.symbolic_tiling.tiled_computation import TiledComputation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, TiledFusion, analyze_fusion

ELEMENT_BYTES = {"f32": 4, "bf16": 2, "i8": 1, "i32": 4}


def softmax_text(argument_attributes: str = "") -> str:
    """``@softmax``: ``exp(x - max(x, axis 1))`` on ``tensor<4x6xf32>`` (the argument
    with ``argument_attributes``, e.g. ``{hlo_indexing.layout = "..."}``)."""
    return f"""
func.func @softmax(%arg0: tensor<4x6xf32>{' ' + argument_attributes if argument_attributes else ''}) -> tensor<4x6xf32> {{
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>
  %2 = stablehlo.subtract %arg0, %1 : tensor<4x6xf32>
  %3 = stablehlo.exponential %2 : tensor<4x6xf32>
  return %3 : tensor<4x6xf32>
}}
"""


class Functions(dict):
    """``{name: func.func op}`` of a parsed module (kept alive in :attr:`module`)."""

    module: ir.Module


@contextlib.contextmanager
def functions_of(text: str) -> Iterator[Functions]:
    """The functions of StableHLO ``text``, parsed in the default context (active
    while the ``with`` block runs)."""
    with default_context():
        found = Functions()
        found.module = ir.Module.parse(text)
        for op in found.module.body.operations:
            found[ir.StringAttr(op.attributes["sym_name"]).value] = op
        yield found


def analysis_of(function: ir.Operation, *, allow_pad: bool = False) -> TiledFusion:
    """The tiled fusion of a function that can be tiled (asserted)."""
    result = analyze_fusion(function, allow_pad=allow_pad)
    assert isinstance(result, TiledFusion), result
    return result


def hlo_analysis(text: str, name: str, *, allow_pad: bool = False) -> tuple[ir.Module, TiledFusion | AnalysisFailure]:
    """The analysis of computation ``name`` of HLO ``text`` and its module (keep it
    alive while the analysis is used)."""
    module = hlo_source.import_hlo(text)
    return module, analyze_fusion(hlo_source.computation(module, name), allow_pad=allow_pad)


#: Modules of :func:`hlo_fusion`'s analyses, alive for the whole test session.
_MODULES: list[ir.Module] = []


def hlo_fusion(text: str, name: str, *, allow_pad: bool = False) -> TiledFusion:
    """The tiled fusion of computation ``name`` of HLO ``text`` (asserted to tile); its
    module is kept alive."""
    module, analysis = hlo_analysis(text, name, allow_pad=allow_pad)
    _MODULES.append(module)
    assert isinstance(analysis, TiledFusion), analysis.reason
    return analysis


def box(
    offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int], shape: Sequence[int] | None = None
) -> set[tuple[int, ...]]:
    """The elements ``offset + stride * iota(size)`` of a tile, those inside ``shape``
    only when given."""
    axes = [[o + k * s for k in range(n)] for o, n, s in zip(offsets, sizes, strides)]
    if shape is not None:
        axes = [[i for i in axis if 0 <= i < extent] for axis, extent in zip(axes, shape)]
    return set(itertools.product(*axes))


def layout_tile_ids(
    elements: set[tuple[int, ...]], minor_to_major: Sequence[int], tile: Sequence[int]
) -> set[tuple[int, ...]]:
    """The first-level layout tiles (XLA ``{minor_to_major:T(tile)}``, ``len(tile)`` at
    most the rank) holding ``elements``: the index in major-to-minor order with its
    ``len(tile)`` minor-most entries divided by the tile."""
    major_to_minor = list(reversed(minor_to_major))
    k = len(tile)
    out = set()
    for element in elements:
        index = [element[d] for d in major_to_minor]
        out.add(tuple(index[: len(index) - k]) + tuple(i // t for i, t in zip(index[len(index) - k :], tile)))
    return out


@dataclass(frozen=True)
class Value:
    """A value of a :class:`Fusion`: its SSA name (without ``%``), shape, element type."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "f32"

    @property
    def type(self) -> str:
        """The MLIR tensor type."""
        return f"tensor<{''.join(f'{n}x' for n in self.shape)}{self.dtype}>"


_Evaluator = Callable[[Callable[[Value], np.ndarray], Mapping[str, int]], np.ndarray]


class Fusion:
    """A StableHLO function built op by op, with its brute-force evaluator (see the
    module docstring). Ops return :class:`Value` s; :meth:`text` is the function."""

    def __init__(self) -> None:
        self.arguments: list[Value] = []
        self.lines: list[str] = []
        self._evaluators: dict[str, _Evaluator] = {}
        #: Per dynamic-slice start: its name and the values it takes once clamped.
        self.starts: list[tuple[str, range]] = []
        self._index_constants: dict[str, int] = {}
        #: The dynamic update slices, in order.
        self.updates: list[Value] = []

    @property
    def num_elements(self) -> int:
        """Elements of all parameters (the last axis of a dependency array)."""
        return sum(math.prod(a.shape) for a in self.arguments)

    def parameter_slice(self, number: int) -> slice:
        """Where parameter ``number``'s elements lie along the last axis."""
        start = sum(math.prod(a.shape) for a in self.arguments[:number])
        return slice(start, start + math.prod(self.arguments[number].shape))

    def parameter(self, shape: Sequence[int], dtype: str = "f32") -> Value:
        number = len(self.arguments)
        value = Value(f"arg{number}", tuple(shape), dtype)
        self.arguments.append(value)

        def evaluate(get: Callable[[Value], np.ndarray], runtime: Mapping[str, int]) -> np.ndarray:
            n = self.num_elements
            deps = np.zeros((math.prod(value.shape), n), bool)
            deps[np.arange(len(deps)), np.arange(n)[self.parameter_slice(number)]] = True
            return deps.reshape(value.shape + (n,))

        self._evaluators[value.name] = evaluate
        return value

    def _op(self, shape: Sequence[int], dtype: str, text: str, evaluate: _Evaluator) -> Value:
        value = Value(f"v{len(self.lines)}", tuple(shape), dtype)
        self.lines.append(f"%{value.name} = {text}")
        self._evaluators[value.name] = evaluate
        return value

    def _constant(self) -> str:
        name = f"c{len(self.lines)}"
        self.lines.append(f"%{name} = stablehlo.constant dense<0.000000e+00> : tensor<f32>")
        return name

    def unary(self, op: str, x: Value) -> Value:
        return self._op(x.shape, x.dtype, f"stablehlo.{op} %{x.name} : {x.type}", lambda get, rt: get(x))

    def binary(self, op: str, x: Value, y: Value) -> Value:
        return self._op(
            x.shape, x.dtype, f"stablehlo.{op} %{x.name}, %{y.name} : {x.type}", lambda get, rt: get(x) | get(y)
        )

    def convert(self, x: Value, dtype: str) -> Value:
        out = Value("", x.shape, dtype)
        return self._op(x.shape, dtype, f"stablehlo.convert %{x.name} : ({x.type}) -> {out.type}", lambda get, rt: get(x))

    def broadcast(self, x: Value, shape: Sequence[int], dims: Sequence[int]) -> Value:
        """``broadcast_in_dim`` with increasing ``dims``."""
        assert list(dims) == sorted(dims)
        out = Value("", tuple(shape), x.dtype)

        def evaluate(get: Callable[[Value], np.ndarray], runtime: Mapping[str, int]) -> np.ndarray:
            a = get(x)
            expanded = [x.shape[list(dims).index(i)] if i in dims else 1 for i in range(len(shape))]
            return np.broadcast_to(a.reshape(tuple(expanded) + a.shape[-1:]), out.shape + a.shape[-1:])

        text = f"stablehlo.broadcast_in_dim %{x.name}, dims = {list(dims)} : ({x.type}) -> {out.type}"
        return self._op(shape, x.dtype, text, evaluate)

    def transpose(self, x: Value, permutation: Sequence[int]) -> Value:
        out = Value("", tuple(x.shape[p] for p in permutation), x.dtype)
        text = f"stablehlo.transpose %{x.name}, dims = {list(permutation)} : ({x.type}) -> {out.type}"
        return self._op(out.shape, x.dtype, text, lambda get, rt: np.transpose(get(x), list(permutation) + [len(x.shape)]))

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        out = Value("", tuple(shape), x.dtype)
        text = f"stablehlo.reshape %{x.name} : ({x.type}) -> {out.type}"
        return self._op(shape, x.dtype, text, lambda get, rt: get(x).reshape(out.shape + (self.num_elements,)))

    def bitcast(self, x: Value, shape: Sequence[int], source_layout: Sequence[int], result_layout: Sequence[int]) -> Value:
        """XLA's ``bitcast`` (``mhlo.bitcast``) between layouts given minor to major: the
        buffer of ``x`` laid out in ``source_layout`` read as ``shape`` in ``result_layout``."""
        out = Value("", tuple(shape), x.dtype)

        def dense(layout: Sequence[int]) -> str:
            return f"dense<{list(layout)}> : tensor<{len(layout)}xindex>"

        text = (
            f'"mhlo.bitcast"(%{x.name}) {{source_layout = {dense(source_layout)}, result_layout = {dense(result_layout)}}} '
            f": ({x.type}) -> {out.type}"
        )

        def evaluate(get: Callable[[Value], np.ndarray], runtime: Mapping[str, int]) -> np.ndarray:
            a = get(x)
            n = a.shape[-1]
            source_major_to_minor = list(reversed(source_layout))
            buffer = np.transpose(a, source_major_to_minor + [len(x.shape)]).reshape(-1, n)
            result_major_to_minor = list(reversed(result_layout))
            physical = buffer.reshape(tuple(shape[d] for d in result_major_to_minor) + (n,))
            logical = [result_major_to_minor.index(d) for d in range(len(shape))]
            return np.transpose(physical, logical + [len(shape)])

        return self._op(shape, x.dtype, text, evaluate)

    def slice(self, x: Value, start: Sequence[int], limit: Sequence[int], strides: Sequence[int]) -> Value:
        shape = tuple(len(range(a, b, s)) for a, b, s in zip(start, limit, strides))
        out = Value("", shape, x.dtype)
        ranges = ", ".join(f"{a}:{b}:{s}" for a, b, s in zip(start, limit, strides))
        text = f"stablehlo.slice %{x.name} [{ranges}] : ({x.type}) -> {out.type}"
        slices = tuple(slice(a, b, s) for a, b, s in zip(start, limit, strides))
        return self._op(shape, x.dtype, text, lambda get, rt: get(x)[slices])

    def reduce(self, x: Value, dims: Sequence[int]) -> Value:
        """A sum over ``dims`` (f32)."""
        init = self._constant()
        out = Value("", tuple(n for i, n in enumerate(x.shape) if i not in dims), "f32")
        text = (
            f"stablehlo.reduce(%{x.name} init: %{init}) applies stablehlo.add across dimensions = {list(dims)} "
            f": ({x.type}, tensor<f32>) -> {out.type}"
        )
        return self._op(out.shape, "f32", text, lambda get, rt: get(x).any(axis=tuple(dims)))

    def concatenate(self, xs: Sequence[Value], dim: int) -> Value:
        shape = list(xs[0].shape)
        shape[dim] = sum(x.shape[dim] for x in xs)
        out = Value("", tuple(shape), xs[0].dtype)
        names = ", ".join(f"%{x.name}" for x in xs)
        types = ", ".join(x.type for x in xs)
        text = f"stablehlo.concatenate {names}, dim = {dim} : ({types}) -> {out.type}"
        return self._op(shape, xs[0].dtype, text, lambda get, rt: np.concatenate([get(x) for x in xs], axis=dim))

    def pad(self, x: Value, low: Sequence[int], high: Sequence[int]) -> Value:
        """Edge padding (non-negative, no interior padding) with the constant 0."""
        value = self._constant()
        shape = tuple(n + a + b for n, a, b in zip(x.shape, low, high))
        out = Value("", shape, x.dtype)
        zeros = [0] * len(shape)
        text = (
            f"stablehlo.pad %{x.name}, %{value}, low = {list(low)}, high = {list(high)}, interior = {zeros} "
            f": ({x.type}, tensor<f32>) -> {out.type}"
        )
        widths = [(a, b) for a, b in zip(low, high)] + [(0, 0)]
        return self._op(shape, x.dtype, text, lambda get, rt: np.pad(get(x), widths, constant_values=False))

    def reverse(self, x: Value, dims: Sequence[int]) -> Value:
        text = f"stablehlo.reverse %{x.name}, dims = {list(dims)} : {x.type}"
        return self._op(x.shape, x.dtype, text, lambda get, rt: np.flip(get(x), axis=tuple(dims)))

    def _start_values(self, starts: Sequence[Value], runtime: Mapping[str, int]) -> list[int]:
        """Each start index: an :meth:`index_constant`'s value, else the runtime value
        given to :meth:`dependencies` by its name."""
        return [self._index_constants[s.name] if s.name in self._index_constants else runtime[s.name] for s in starts]

    def dynamic_slice(self, x: Value, starts: Sequence[Value], sizes: Sequence[int]) -> Value:
        """Start indices from scalar ``i32`` values: runtime values given to
        :meth:`dependencies` by their names, or :meth:`index_constant` s (clamped into
        range, as StableHLO does)."""
        out = Value("", tuple(sizes), x.dtype)
        self.starts += [(s.name, range(n - k + 1)) for s, n, k in zip(starts, x.shape, sizes)
                        if s.name not in self._index_constants]
        names = ", ".join(f"%{s.name}" for s in starts)
        types = ", ".join(s.type for s in starts)
        text = f"stablehlo.dynamic_slice %{x.name}, {names}, sizes = {list(sizes)} : ({x.type}, {types}) -> {out.type}"

        def evaluate(get: Callable[[Value], np.ndarray], runtime: Mapping[str, int]) -> np.ndarray:
            first = [min(max(v, 0), n - k) for v, n, k in zip(self._start_values(starts, runtime), x.shape, sizes)]
            window = get(x)[tuple(slice(f, f + k) for f, k in zip(first, sizes))]
            for s in starts:
                window = window | get(s)  # every element reads every start index
            return window

        return self._op(sizes, x.dtype, text, evaluate)

    def index_constant(self, value: int) -> Value:
        """A constant ``i32`` scalar (a start index that is not a runtime value)."""
        out = Value(f"v{len(self.lines)}", (), "i32")
        self.lines.append(f"%{out.name} = stablehlo.constant dense<{value}> : tensor<i32>")
        self._index_constants[out.name] = value
        self._evaluators[out.name] = lambda get, rt: np.zeros((self.num_elements,), bool)
        return out

    def dynamic_update_slice(self, x: Value, update: Value, starts: Sequence[Value]) -> Value:
        """``update`` written into ``x`` at start indices from scalar ``i32`` values:
        runtime values given to :meth:`dependencies` by their names, or
        :meth:`index_constant` s (clamped into range, as StableHLO does)."""
        self.starts += [(s.name, range(n - k + 1)) for s, n, k in zip(starts, x.shape, update.shape)
                        if s.name not in self._index_constants]
        names = ", ".join(f"%{s.name}" for s in starts)
        types = ", ".join(s.type for s in starts)
        text = f"stablehlo.dynamic_update_slice %{x.name}, %{update.name}, {names} : ({x.type}, {update.type}, {types}) -> {x.type}"

        def evaluate(get: Callable[[Value], np.ndarray], runtime: Mapping[str, int]) -> np.ndarray:
            first = [min(max(v, 0), n - k) for v, n, k in zip(self._start_values(starts, runtime), x.shape, update.shape)]
            out = get(x).copy()
            out[tuple(slice(f, f + k) for f, k in zip(first, update.shape))] = get(update)
            for s in starts:
                out = out | get(s)  # every element reads every start index
            return out

        out = self._op(x.shape, x.dtype, text, evaluate)
        self.updates.append(out)
        return out

    def text(self, name: str, result: Value) -> str:
        """The ``func.func @name`` returning ``result``."""
        arguments = ", ".join(f"%{a.name}: {a.type}" for a in self.arguments)
        body = "".join(f"  {line}\n" for line in self.lines)
        return f"func.func @{name}({arguments}) -> {result.type} {{\n{body}  return %{result.name} : {result.type}\n}}\n"

    def dependencies(self, value: Value, runtime: Mapping[str, int] | None = None) -> np.ndarray:
        """Which parameter elements each element of ``value`` depends on (shape
        ``value.shape + (num_elements,)``), dynamic-slice starts at ``runtime``."""
        memo: dict[str, np.ndarray] = {}

        def get(v: Value) -> np.ndarray:
            if v.name not in memo:
                memo[v.name] = self._evaluators[v.name](get, runtime or {})
            return memo[v.name]

        return get(value)

    def reads(self, deps: np.ndarray, outputs: set[tuple[int, ...]], number: int) -> set[tuple[int, ...]]:
        """The elements of parameter ``number`` that the ``outputs`` elements of a value
        (its dependency array ``deps``) read."""
        if not outputs:
            return set()
        rows = np.array(sorted(outputs), np.int64).reshape(len(outputs), -1)
        selected = deps[tuple(rows.T)] if rows.shape[1] else deps[None]
        read = selected.any(axis=0)[self.parameter_slice(number)]
        shape = self.arguments[number].shape
        return {tuple(int(i) for i in np.unravel_index(k, shape)) for k in np.flatnonzero(read)}


def parameter_tile(computation: TiledComputation, number: int, pid: int, runtime: Sequence[int] = ()) -> set[tuple[int, ...]]:
    """The union of the boxes of parameter ``number``'s tiled instructions at program
    ``pid`` (runtime variables at ``runtime``), inside the parameter; an instruction
    whose offsets map excludes the program has no box there."""
    out: set[tuple[int, ...]] = set()
    for inst in computation.by_parameter().get(number, []):
        offsets_map = inst.tile_offsets_indexing
        values = list(runtime)[: len(offsets_map.runtime_vars)]
        if offsets_map.contains_point([pid], values):
            shape = ir.RankedTensorType(inst.node.value.type).shape
            out |= box(offsets_map.evaluate([pid], values), inst.tile_sizes, inst.tile_strides, shape)
    return out


def output_tile(computation: TiledComputation, pid: int, shape: Sequence[int]) -> set[tuple[int, ...]]:
    """The elements of the first output in the root's tile at program ``pid``."""
    root = computation.roots[0]
    return box(root.tile_offsets_indexing.evaluate([pid]), root.tile_sizes, root.tile_strides, shape)


def check_reads_inside_tiles(
    fusion: Fusion, result: Value, computation: TiledComputation, runtime: tuple[str, Sequence[int]]
) -> int:
    """For every parameter, program and value of the one runtime start ``runtime =
    (name, values)``: the elements the evaluator says the output tile reads lie in the
    parameter's tile (soundness only: where the maps over-approximate, as for the
    operand a dynamic update slice overwrites, the counts differ from the exactness').
    Returns the number of (parameter, program, value) tiles checked."""
    name, values = runtime
    checked = 0
    for value in values:
        dependencies = fusion.dependencies(result, {name: value})
        for pid in range(computation.num_programs):
            outputs = output_tile(computation, pid, result.shape)
            for number in range(len(fusion.arguments)):
                reads = fusion.reads(dependencies, outputs, number)
                tile = parameter_tile(computation, number, pid, [value])
                assert reads <= tile, f"parameter {number} at pid {pid}, {name} = {value}: reads {sorted(reads - tile)[:4]} outside its tile"
                checked += 1
    return checked


def check_reads_and_exactness(
    fusion: Fusion,
    result: Value,
    computation: TiledComputation,
    exactness: TilingExactness,
    runtime: tuple[str, Sequence[int]] | None = None,
) -> int:
    """For every tile of every parameter (a fusion without dots: one tile per program,
    times the values of the one dynamic-slice start ``runtime = (name, values)`` for a
    parameter whose tiles move with it): the
    elements the evaluator says the output tile reads lie in the parameter's tile
    (soundness), and their count and the tile's are the exactness' counts; isl's proof,
    when the exactness has one, holds exactly when every tile is exact. Returns the
    number of tiles checked."""
    name, values = runtime if runtime is not None else ("", [0])
    dependencies = {value: fusion.dependencies(result, {name: value}) for value in values}
    checked = 0
    for operand in exactness.operands:
        assert operand.computed, operand
        k = 0
        # One tile per program and start value when the maps it is read through read the
        # start (its tiles may not move with it: two operands of a concatenate at offset 0)
        moves = any(inst.node.indexing_map.runtime_vars or inst.tile_offsets_indexing.runtime_vars
                    for inst in computation.by_parameter()[operand.index])
        for pid in range(computation.num_programs):
            outputs = output_tile(computation, pid, result.shape)
            for value in values if moves else values[:1]:
                reads = fusion.reads(dependencies[value], outputs, operand.index)
                tile = parameter_tile(computation, operand.index, pid, [value] if runtime else [])
                assert reads <= tile, f"{operand.name} at pid {pid}: reads {sorted(reads - tile)[:4]} outside its tile"
                assert (operand.read_per_tile[k], operand.covered_per_tile[k]) == (len(reads), len(tile)), (pid, value)
                k += 1
                checked += 1
        assert k == len(operand.read_per_tile)
        if operand.proof is not None:  # isl agrees with the checked counts at every tile
            exact_everywhere = bool((operand.read_per_tile == operand.covered_per_tile).all())
            assert operand.proof.holds is (exact_everywhere if isl_available() else None), (operand.name, operand.proof)
    return checked
