"""Shardy's ``sdy.manual_computation`` (what JAX's ``shard_map`` lowers to) as plain
data: the mesh axes and, for each operand and result, the mesh axes each dimension is
split over.

Example::

    manual = manual_computation(op)   # None without Shardy in the bindings
    manual.axis_sizes                 # {"x": 2, "y": 1}
    manual.operands[0]                # (("x",), ())  dimension 0 over x, 1 whole
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from hlo_indexing.dialect_glue.bindings import OpLike, ir, sdy


@dataclass(frozen=True)
class ManualComputation:
    """``axis_sizes``: the mesh's axes (in mesh order) and sizes; ``operands[j][k]`` /
    ``results[i][k]``: the axes dimension ``k`` is split over, major first."""

    axis_sizes: dict[str, int]
    operands: tuple[tuple[tuple[str, ...], ...], ...]
    results: tuple[tuple[tuple[str, ...], ...], ...]


def _mesh(shardy: ModuleType, op: OpLike, mesh_or_ref: ir.Attribute) -> dict[str, int] | None:
    try:
        symbol: str | None = ir.FlatSymbolRefAttr(mesh_or_ref).value
    except ValueError:  # an inline mesh
        symbol = None
    if symbol is not None:
        table_op = op.operation.parent
        while table_op is not None and table_op.name != "builtin.module":
            table_op = table_op.parent
        if table_op is None:
            return None
        table = ir.SymbolTable(table_op)
        if symbol not in table:
            return None
        mesh_or_ref = table[symbol].attributes["mesh"]
    mesh = shardy.MeshAttr(mesh_or_ref)
    return {shardy.MeshAxisAttr(axis).name: shardy.MeshAxisAttr(axis).size for axis in mesh.axes}


def _per_value(
    shardy: ModuleType, op: OpLike, name: str
) -> tuple[list[tuple[tuple[str, ...], ...]], dict[str, int] | None]:
    shardings = shardy.TensorShardingPerValueAttr(op.operation.attributes[name]).shardings
    values, mesh = [], None
    for attribute in shardings:
        sharding = shardy.TensorShardingAttr(attribute)
        mesh = _mesh(shardy, op, sharding.mesh_or_ref) if mesh is None else mesh
        dims = tuple(
            tuple(shardy.AxisRefAttr(axis).name for axis in shardy.DimensionShardingAttr(d).axes)
            for d in sharding.dimension_shardings
        )
        values.append(dims)
    return values, mesh


def manual_computation(op: OpLike) -> ManualComputation | None:
    """The shardings of an ``sdy.manual_computation``; None when the bindings have no
    Shardy or the mesh cannot be found."""
    if sdy is None:
        return None
    operands, mesh = _per_value(sdy, op, "in_shardings")
    results, out_mesh = _per_value(sdy, op, "out_shardings")
    mesh = mesh if mesh is not None else out_mesh
    if mesh is None:
        return None
    return ManualComputation(mesh, tuple(operands), tuple(results))
