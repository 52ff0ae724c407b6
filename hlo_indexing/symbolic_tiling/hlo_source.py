"""Where the tiling analysis finds its fusions in imported HLO text.

XLA's HLO text goes through XLA's parser and translator
(:func:`hlo_indexing.dialect_glue.hlo_import.import_hlo_text`): every non-entry
computation becomes a private ``func.func`` named after it, the ENTRY computation a
public one, and each op is located at its instruction (``loc("name"(...))``).
"""

from __future__ import annotations

import json

from hlo_indexing.dialect_glue.bindings import OpLike, SsaArgument, ir
from hlo_indexing.dialect_glue.context import default_context
from hlo_indexing.dialect_glue.hlo_import import BACKEND_CONFIG_ATTR, import_hlo_text
from hlo_indexing.dialect_glue.locations import location_name
from hlo_indexing.errors import HloIndexingError


def instruction_name(op: "OpLike | SsaArgument") -> str:
    """The HLO instruction name an op (or a computation parameter) was imported from:
    the name of its location ``loc("name"(...))`` ('' for any other location, e.g. a
    bare file location ``loc("file":line:col)``)."""
    return location_name(op.location) or ""


#: The fusion kinds of XLA's Triton gemm fusions (``backend_config``'s
#: ``fusion_backend_config.kind``): the only fusions whose pads XLA's tiling tiles.
GEMM_FUSION_KINDS = frozenset({"__triton_gemm", "__triton_nested_gemm_fusion"})


def is_gemm_fusion(op: ir.Operation) -> bool:
    """Whether ``op`` is an imported fusion whose ``backend_config`` names a Triton gemm
    fusion kind (:data:`GEMM_FUSION_KINDS`); False for anything else, a missing or
    malformed config included."""
    if op.name != "mhlo.fusion" or BACKEND_CONFIG_ATTR not in op.attributes:
        return False
    text = ir.StringAttr(op.attributes[BACKEND_CONFIG_ATTR]).value
    if "gemm" not in text:  # most fusions: no JSON to parse
        return False
    try:
        kind = json.loads(text)["fusion_backend_config"]["kind"]
    except (ValueError, TypeError, KeyError):
        return False
    return kind in GEMM_FUSION_KINDS


def import_hlo(text: str, filename: str = "<hlo>") -> ir.Module:
    """The module of HLO text (``HloModule`` header optional, as for XLA's parser)."""
    return import_hlo_text(text, filename, default_context())


def computation(module: ir.Module, name: str) -> ir.Operation:
    """The ``func.func`` of computation ``name``; :class:`HloIndexingError` if absent."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
            return op.operation
    raise HloIndexingError(f"no computation named '{name}' in the module")


def entry(module: ir.Module) -> ir.Operation:
    """The ENTRY computation's ``func.func`` (the public one)."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and "sym_visibility" not in op.operation.attributes:
            return op.operation
    raise HloIndexingError("the module has no ENTRY computation")


def root_op(func: ir.Operation) -> ir.Operation:
    """The op defining the first returned value of a computation (its ROOT)."""
    block = func.regions[0].blocks[0]
    terminator = block.operations[-1]
    owner = terminator.operands[0].owner
    if isinstance(owner, ir.Block):
        raise HloIndexingError("the computation's ROOT is a parameter")
    op: ir.Operation = owner.operation
    return op
