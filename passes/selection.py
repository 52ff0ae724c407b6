"""The ``func`` option of every pass: which part of the module a pass reads or changes.

``func=NAME`` names a ``func.func`` (``@`` optional) or, when no function has that name,
the ops imported from the HLO instruction ``NAME`` as the remarks print it
(``ynn_fusion.6``: its ``mhlo.fusion``, every copy of it: the HLO importer inlines a
``while`` body where it is used and keeps it as a function too). The pass then works on
the selected ops and what is nested in them (a function's body, a fusion's region);
``func=`` empty selects everything. A name that selects nothing is an error at the
module naming the closest function or instruction. Example::

    chosen = selection(module, "ynn_fusion.6", diagnostics)
    if chosen is not None:
        ops = [op for op in hlo_ops(module) if chosen.contains(op)]
"""

from __future__ import annotations

import dataclasses
import difflib

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.locations import enclosing_function, location_name
from hlo_indexing.passes.base import Diagnostics


def func_field() -> str:
    """The ``func`` option of a pass."""
    return dataclasses.field(
        default="",
        metadata={"help": "only this function or HLO instruction (ynn_fusion.6) and what is nested in it; empty: all"},
    )


@dataclasses.dataclass(frozen=True)
class Selection:
    """The ops ``func=`` selected (``anchors``; empty: the whole module)."""

    anchors: frozenset["ir.Operation"] = frozenset()

    @property
    def everything(self) -> bool:
        """Whether nothing was named (every op is selected)."""
        return not self.anchors

    def contains(self, op: "ir.Operation") -> bool:
        """Whether ``op`` is a selected op or nested in one."""
        if not self.anchors:
            return True
        current: "ir.Operation | None" = op.operation
        while current is not None and current.name != "builtin.module":
            if current in self.anchors:
                return True
            current = current.parent
        return False


def selection(module: "ir.Operation", name: str, diagnostics: Diagnostics) -> Selection | None:
    """What ``func=name`` selects in ``module`` (see the module docstring); None, with an
    error at the module, when it names nothing."""
    wanted = name.removeprefix("@")
    if not wanted:
        return Selection()
    functions: list["ir.Operation"] = []
    named: list["ir.Operation"] = []
    function_names: set[str] = set()
    names: set[str] = set()

    def visit(op: "ir.Operation") -> "ir.WalkResult":
        operation = op.operation
        if operation.name == "func.func":
            function = enclosing_function(operation) or ""
            function_names.add(function)
            names.add(function)
            if function == wanted:
                functions.append(operation)
        elif operation.name != "builtin.module":
            instruction = location_name(operation.location)
            if instruction:
                names.add(instruction)
                if instruction == wanted:
                    named.append(operation)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    if functions or named:
        return Selection(frozenset(functions or named))
    close = difflib.get_close_matches(wanted, sorted(names), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; functions: {', '.join(sorted(function_names)) or 'none'}"
    diagnostics.error(module.location, f"option func: no function or HLO instruction '{name}' in the module{hint}")
    return None
