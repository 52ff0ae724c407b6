"""One call from a program (JAX, MLIR, HLO) to its indexing maps: :func:`analyze`.

``analyze(obj)`` accepts:

* a ``jax.jit(f).lower(*args)`` object (``jax.stages.Lowered``, recognised by its
  ``compiler_ir`` method: ``jax`` itself is never imported here);
* an ``ir.Module`` / ``ir.Operation`` of the bindings hlo-indexing uses (jaxlib's), in
  any context, e.g. JAX's own ``lowered.compiler_ir('stablehlo')``; StableHLO, MHLO or
  CHLO;
* a module or operation of another MLIR Python binding (the upstream ``mlir`` wheels,
  ``iree.compiler.ir``): objects never cross bindings, so it is printed (locations
  kept) and re-parsed into hlo-indexing's default context;
* MLIR or XLA HLO text (``str``/``bytes``) or a path (``os.PathLike``).

It returns a :class:`ModuleIndexing`: the fused maps of every ``func.func`` with a body
and every ``mhlo.fusion`` (:class:`ComputationMaps`, one :class:`~hlo_indexing.analysis.fusion.FusionIndexing`
per result, or per argument for ``direction="input-to-output"``), and the per-op maps of
every HLO op (:class:`OpMaps`), with a readable ``str()``.

The caller's module is never modified: the analysis only reads it, and with
``annotate=True`` (attach the maps as ``hlo_indexing.*`` attributes, as the passes
``hlo-attach-indexing-maps`` and ``hlo-fuse-indexing-maps`` do) it works on a clone
unless ``clone=False`` (then the caller's own module, e.g. JAX's live one, is
annotated). ``result.module`` is the module that was analysed (and annotated).

Example::

    >>> import jax, jax.numpy as jnp
    >>> lowered = jax.jit(lambda x: jnp.exp(x).T).lower(jnp.zeros((2, 3)))
    >>> print(analyze(lowered, per_op=False))
    @main result 0 -> arg 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.parsing import location_of, parse_module
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS, FusionIndexing, fusion_indexing, fusion_input_to_output_indexing
from hlo_indexing.ops.analysis import DIRECTIONS
from hlo_indexing.ops.result import InstructionIndexing



@dataclass(frozen=True)
class ComputationMaps:
    """Fused maps of one computation (``@name`` of a ``func.func``, or ``mhlo.fusion``).

    ``maps[i]`` is the :class:`FusionIndexing` of result ``i`` (output-to-input: one map
    set per argument) or of argument ``i`` (input-to-output: one map set per result).
    ``error`` says why the maps could not be computed (``maps`` is then empty)."""

    name: str
    location: str
    maps: tuple[FusionIndexing, ...]
    direction: str
    error: str | None = None

    def lines(self) -> list[str]:
        if self.error is not None:
            return [f"{self.name}: error: {self.error}"]
        source, target = ("result", "arg") if self.direction == "output-to-input" else ("arg", "result")
        lines = []
        for i, fused in enumerate(self.maps):
            for k, maps in enumerate(fused.maps):
                texts = sorted("unknown indexing" if m.is_undefined else str(m) for m in maps) or ["no dependence"]
                lines += [f"{self.name} {source} {i} -> {target} {k}: {text}" for text in texts]
            if fused.over_approximated:
                lines.append(f"{self.name} {source} {i}: over-approximated ({', '.join(fused.over_approximated)})")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class OpMaps:
    """Per-op maps of one HLO op: ``indexing[i]`` for its result ``i`` (output-to-input)
    or operand ``i`` (input-to-output)."""

    op: str
    location: str
    indexing: tuple[InstructionIndexing, ...]
    direction: str

    def lines(self) -> list[str]:
        what = "result" if self.direction == "output-to-input" else "operand"
        lines = []
        for i, indexing in enumerate(self.indexing):
            lines.append(f"{self.op} at {self.location}, {what} {i}:")
            lines += [f"  {line}" for line in str(indexing).splitlines()] or ["  (no operands)"]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class ModuleIndexing:
    """The result of :func:`analyze`; ``module`` is the ``builtin.module`` analysed (kept
    alive with the result)."""

    computations: tuple[ComputationMaps, ...]
    ops: tuple[OpMaps, ...]
    direction: str
    module: Any

    def computation(self, name: str) -> ComputationMaps:
        """The computation called ``name`` (``"@main"`` or ``"main"``)."""
        wanted = name if name.startswith("@") or "." in name else f"@{name}"
        for computation in self.computations:
            if computation.name == wanted:
                return computation
        raise KeyError(f"no computation {wanted!r}; have {[c.name for c in self.computations]}")

    def __str__(self) -> str:
        lines = [line for computation in self.computations for line in computation.lines()]
        if self.ops:
            lines.append(f"per-op maps ({self.direction}):")
            lines += [f"  {line}" for op in self.ops for line in op.lines()]
        return "\n".join(lines)


def analyze(
    obj: Any,
    *,
    direction: str = "output-to-input",
    fused: bool = True,
    per_op: bool = True,
    annotate: bool = False,
    clone: bool = True,
    max_maps: int = DEFAULT_MAX_MAPS,
) -> ModuleIndexing:
    """Indexing maps of ``obj`` (see the module docstring for what it accepts).

    ``direction``: ``"output-to-input"`` (default) or ``"input-to-output"``; ``fused`` /
    ``per_op`` choose the parts computed; ``annotate`` attaches them as attributes to
    ``result.module``, a clone of a caller's module unless ``clone=False``;
    ``max_maps`` caps each fused map set. Raises ``ValueError`` for bad arguments,
    :class:`~hlo_indexing.errors.ParseError` for text that does not parse."""
    if direction not in DIRECTIONS:
        raise ValueError(f"analyze: direction must be one of {DIRECTIONS}, not {direction!r}")
    module, owned, buffer = _module_of(obj)
    if annotate and clone and not owned:
        module = module.operation.clone()
    module = module.operation
    computations = tuple(_computation_maps(module, direction, max_maps, buffer)) if fused else ()
    ops = tuple(_op_maps(module, direction, buffer)) if per_op else ()
    if annotate:
        from hlo_indexing.passes.pass_manager import run_pipeline

        run_pipeline(
            module,
            f"builtin.module(hlo-attach-indexing-maps{{direction={direction}}}, hlo-fuse-indexing-maps{{max-maps={max_maps}}})",
        )
    return ModuleIndexing(computations, ops, direction, module)


def _module_of(obj: Any) -> tuple[Any, bool, str | None]:
    """(module in our bindings, whether it is ours alone (not the caller's), the name of
    the text buffer it was parsed from, which MLIR calls ``-``)."""
    if isinstance(obj, (ir.Module, ir.Operation, ir.OpView)):
        return obj, False, None
    if callable(getattr(obj, "compiler_ir", None)):  # jax.stages.Lowered
        return obj.compiler_ir("stablehlo"), False, None
    if isinstance(obj, (str, bytes)):
        return parse_module(obj), True, "<string>"
    if isinstance(obj, os.PathLike):
        return parse_module(obj), True, os.fspath(obj)
    operation = getattr(obj, "operation", None)
    if operation is not None and callable(getattr(operation, "get_asm", None)):  # another binding
        text = operation.get_asm(enable_debug_info=True)
        return parse_module(text, filename=f"<{type(obj).__module__}>"), True, None
    raise ValueError(
        f"analyze: cannot analyse a {type(obj).__name__}: expected a jax Lowered object, an MLIR module or "
        "operation, MLIR or HLO text, or a path"
    )


def _short_location(op: Any, buffer: str | None) -> str:
    where = location_of(op.location, buffer)
    return str(where) if where is not None else str(op.location)


def _computations(module: Any) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def visit(op: Any) -> Any:
        operation = op.operation
        if operation.name == "func.func" and len(operation.regions[0].blocks):
            found.append((f"@{ir.StringAttr(operation.attributes['sym_name']).value}", operation))
        elif operation.name == "mhlo.fusion":
            found.append((operation.name, operation))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def _computation_maps(module: Any, direction: str, max_maps: int, buffer: str | None):
    for name, op in _computations(module):
        block = op.regions[0].blocks[0]
        try:
            if direction == "output-to-input":
                count = len(list(block.operations)[-1].operands)
                maps = tuple(fusion_indexing(op, r, max_maps=max_maps) for r in range(count))
            else:
                count = len(block.arguments)
                maps = tuple(fusion_input_to_output_indexing(op, a, max_maps=max_maps) for a in range(count))
        except (HloIndexingError, ValueError, NotImplementedError) as exc:
            yield ComputationMaps(name, _short_location(op, buffer), (), direction, str(exc))
            continue
        yield ComputationMaps(name, _short_location(op, buffer), maps, direction)


def _op_maps(module: Any, direction: str, buffer: str | None):
    from hlo_indexing.passes.attach_indexing_maps import hlo_ops, indexings

    for op in hlo_ops(module):
        yield OpMaps(op.name, _short_location(op, buffer), tuple(indexings(op, direction, simplify=True)), direction)
