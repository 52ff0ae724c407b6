"""The pass ``hlo-simplify-indexing-maps``: simplify every indexing-map attribute.

It visits every operation of the module (the module itself included) and rewrites, in
place, each discardable attribute whose name starts with ``hlo_indexing.`` and whose
value is an indexing-map attribute (see :mod:`hlo_indexing.maps.attributes`) or an
``ArrayAttr`` (nested at any depth) of them; attributes of function arguments and
results (``arg_attrs``/``res_attrs`` of ``func.func``) are included. Each map is
replaced by ``IndexingMap.simplify()`` of it; an unchanged map keeps its attribute as
written. Other attributes are never touched.

Option ``report`` (default false) emits a remark per simplified map, at the op, with the
attribute name and the new XLA text. A malformed map attribute is an error at the op.

Example::

    %0 = stablehlo.add %a, %b {hlo_indexing.maps = [{map = affine_map<(d0) -> (d0 mod 16)>,
                                                     dims = array<i64: 0, 9>}]} : ...
    // becomes {map = affine_map<(d0) -> (d0)>, dims = array<i64: 0, 9>, text = "..."}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.op_attrs import attribute_dictionary, named_attributes
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.attributes import (
    indexing_map_from_attribute,
    indexing_map_to_attribute,
    is_indexing_map_attribute,
)
from hlo_indexing.passes.base import Diagnostics, ModulePass
from hlo_indexing.passes.selection import func_field, selection

ATTRIBUTE_PREFIX = "hlo_indexing."
_ARGUMENT_ATTRIBUTES = ("arg_attrs", "res_attrs")

# Rewrites one map attribute, or returns None when it stays as it is.
_Rewrite = Callable[["ir.Attribute", str], "ir.Attribute | None"]


@dataclass(frozen=True)
class SimplifyIndexingMaps(ModulePass):
    """See the module docstring."""

    name: ClassVar[str] = "hlo-simplify-indexing-maps"
    description: ClassVar[str] = "Simplify every indexing-map attribute (hlo_indexing.*) in the module"

    report: bool = field(default=False, metadata={"help": "emit a remark for each map that was simplified"})
    func: str = func_field()

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Simplify every indexing-map attribute in place (a remark per simplified map when
        ``report`` is set); a malformed attribute gets an error diagnostic; ``func``: only
        on the ops it selects."""
        chosen = selection(module, self.func, diagnostics)
        if chosen is None:
            return
        operations: list[ir.Operation] = []

        def collect(op: ir.Operation) -> ir.WalkResult:
            operations.append(op.operation)
            return ir.WalkResult.ADVANCE

        module.walk(collect)
        for op in operations:
            if chosen.contains(op):
                self._simplify_operation(op, diagnostics)

    def _simplify_operation(self, op: "ir.Operation", diagnostics: Diagnostics) -> None:
        def rewrite(attribute: "ir.Attribute", where: str) -> "ir.Attribute | None":
            try:
                original = indexing_map_from_attribute(attribute)
            except HloIndexingError as exc:
                diagnostics.error(op.location, f"attribute '{where}': {exc.message}")
                return None
            simplified = original.simplify()
            if simplified == original:
                return None
            if self.report:
                diagnostics.remark(op.location, f"simplified '{where}' to {simplified}")
            return indexing_map_to_attribute(simplified, attribute.context)

        attributes = op.attributes
        for name, value in named_attributes(attributes):
            if isinstance(value, str):  # unreadable through the bindings (complex elements): not ours
                continue
            if name.startswith(ATTRIBUTE_PREFIX):
                new_value = _rewrite_maps(value, name, rewrite)
            elif name in _ARGUMENT_ATTRIBUTES and isinstance(value, ir.ArrayAttr):
                new_value = _rewrite_argument_attributes(value, name, rewrite)
            else:
                continue
            if new_value is not None:
                op.attributes[name] = new_value


def _rewrite_maps(value: "ir.Attribute", where: str, rewrite: _Rewrite) -> "ir.Attribute | None":
    """``value`` with every map inside rewritten, or None when nothing changed."""
    if is_indexing_map_attribute(value):
        return rewrite(value, where)
    if isinstance(value, ir.ArrayAttr):
        items = list(value)
        changed = [_rewrite_maps(item, f"{where}[{i}]", rewrite) for i, item in enumerate(items)]
        if all(c is None for c in changed):
            return None
        return ir.ArrayAttr.get([c if c is not None else item for c, item in zip(changed, items)], context=value.context)
    return None


def _rewrite_argument_attributes(value: "ir.ArrayAttr", where: str, rewrite: _Rewrite) -> "ir.Attribute | None":
    """``arg_attrs``/``res_attrs`` (an array of dictionaries) with maps rewritten."""
    dictionaries = list(value)
    new_dictionaries = []
    changed_any = False
    for index, dictionary in enumerate(dictionaries):
        if not isinstance(dictionary, ir.DictAttr):
            new_dictionaries.append(dictionary)
            continue
        entries = attribute_dictionary(dictionary)
        changed = False
        for key, attribute in entries.items():
            if key.startswith(ATTRIBUTE_PREFIX):
                new_attribute = _rewrite_maps(attribute, f"{where}[{index}].{key}", rewrite)
                if new_attribute is not None:
                    entries[key] = new_attribute
                    changed = True
        new_dictionaries.append(ir.DictAttr.get(entries, context=value.context) if changed else dictionary)
        changed_any |= changed
    return ir.ArrayAttr.get(new_dictionaries, context=value.context) if changed_any else None
