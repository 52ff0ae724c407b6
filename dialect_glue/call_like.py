"""The single blocks that computations run: a ``func.func`` body, an ``mhlo.fusion``
region, and the nested computation an op runs (the callee of ``func.call``, the
decomposition of ``stablehlo.composite``, the region of a nested ``mhlo.fusion``).

Example::

    block = block_of(func_op)          # its only block
    callee_block(call_op)              # the body of the called function, or None
"""

from __future__ import annotations

from typing import Any

from hlo_indexing.dialect_glue.bindings import ir


def block_of(region_or_func: Any) -> Any:
    """The only block of an op's single region, or of a region; ``ValueError`` otherwise."""
    operation = getattr(region_or_func, "operation", None)
    if operation is not None:
        if len(operation.regions) != 1:
            raise ValueError(f"{operation.name} does not have exactly one region")
        region = operation.regions[0]
    else:
        region = region_or_func
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise ValueError(f"expected a single-block region, found {len(blocks)} blocks")
    return blocks[0]


def callee_block(op: Any) -> Any | None:
    """The block an op runs as a nested computation: the body of the ``func.func`` a
    ``func.call`` / ``stablehlo.composite`` names (when in the module), or the region of
    a nested ``mhlo.fusion``."""
    name = op.operation.name
    if name == "mhlo.fusion":
        return block_of(op.operation.regions[0])
    if name == "func.call":
        symbol = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    elif name == "stablehlo.composite":
        symbol = ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value
    else:
        return None
    table_op = op.operation.parent
    while table_op is not None and table_op.name != "builtin.module":
        table_op = table_op.parent
    if table_op is None:
        return None
    table = ir.SymbolTable(table_op)
    return block_of(table[symbol]) if symbol in table else None
