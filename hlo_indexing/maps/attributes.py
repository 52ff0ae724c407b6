"""The MLIR attribute form of an indexing map, made of builtin attributes only, so it
round-trips through any MLIR parser (jaxlib's, or C++ ``iree-opt``) with no dialect.

A defined map is a ``DictionaryAttr``::

    {map = affine_map<(d0, d1)[s0] -> (d0, s0)>,      // the affine map
     dims = array<i64: 0, 9, 0, 19>,                   // [lo, hi] per dimension
     ranges = array<i64: 0, 255>,                      // [lo, hi] per range variable  (if any)
     runtimes = array<i64: 0, 7>,                      // [lo, hi] per runtime variable (if any)
     runtime_origins = ["operand 1"],                  // where each runtime value comes from
     constraints = affine_map<(d0, d1)[s0] -> (d0 mod 2)>,   // constrained expressions (if any)
     constraint_bounds = array<i64: 0, 0>,             // [lo, hi] per constrained expression
     text = "(d0, d1)[s0] -> (d0, s0), domain: ..."}   // XLA's text, for humans only

``{unknown = "reason"}`` is the undefined map and ``{known_empty = affine_map<...>}``
a map whose domain is empty (the affine map gives the variable and result counts).
The ``text`` entry is ignored when reading.
"""

from __future__ import annotations

from collections.abc import Iterable

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import HloIndexingError, ParseError, UndefinedDivisionError
from hlo_indexing.limits import check_depth
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval

_MAP_KEYS = {"map", "dims", "known_empty", "unknown"}


def _bounds_array(variables: Iterable[Variable | Interval], context: "ir.Context") -> "ir.Attribute":
    flat: list[int] = []
    for v in variables:
        interval = v.bounds if isinstance(v, Variable) else v
        flat += [interval.lower, interval.upper]
    return ir.DenseI64ArrayAttr.get(flat, context)


def _map_attr(affine_map: "ir.AffineMap", context: "ir.Context") -> "ir.Attribute":
    if affine_map.context != context:
        return ir.Attribute.parse(f"affine_map<{affine_map}>", context)
    return ir.AffineMapAttr.get(affine_map)


def indexing_map_to_attribute(m: IndexingMap, context: "ir.Context | None" = None) -> "ir.Attribute":
    """The ``DictionaryAttr`` form of ``m`` (see the module docstring), in ``context``
    (default: the map's own context)."""
    if m.is_undefined:
        context = context or current_or_default_context()
        return ir.DictAttr.get({"unknown": ir.StringAttr.get(m.reason, context)}, context)
    context = context or m.context
    affine_map = m.affine_map
    assert affine_map is not None  # a defined map has one
    if m.is_known_empty():
        return ir.DictAttr.get({"known_empty": _map_attr(affine_map, context)}, context)
    entries: dict[str, ir.Attribute] = {
        "map": _map_attr(affine_map, context),
        "dims": _bounds_array(m.dim_vars, context),
        "text": ir.StringAttr.get(str(m), context),
    }
    if m.range_vars:
        entries["ranges"] = _bounds_array(m.range_vars, context)
    if m.runtime_vars:
        entries["runtimes"] = _bounds_array(m.runtime_vars, context)
        entries["runtime_origins"] = ir.ArrayAttr.get(
            [ir.StringAttr.get(v.origin, context) for v in m.runtime_vars], context=context
        )
    if m.constraints:
        exprs = list(m.constraints)
        constraint_map = ir.AffineMap.get(m.num_dims, m.num_symbols, exprs, m.context)
        entries["constraints"] = _map_attr(constraint_map, context)
        entries["constraint_bounds"] = _bounds_array([m.constraints[e] for e in exprs], context)
    return ir.DictAttr.get(entries, context)


def is_indexing_map_attribute(attribute: "ir.Attribute") -> bool:
    """Whether ``attribute`` has the shape of :func:`indexing_map_to_attribute`'s output."""
    if not isinstance(attribute, ir.DictAttr):
        return False
    return any(key in attribute for key in _MAP_KEYS) and ("map" in attribute) == ("dims" in attribute)


def _intervals(attribute: "ir.Attribute | None", what: str) -> list[Interval]:
    if attribute is None:
        return []
    if not isinstance(attribute, ir.DenseI64ArrayAttr):
        raise ParseError(f"indexing-map attribute: '{what}' must be an array<i64: ...>, got {attribute}")
    values = list(attribute)
    if len(values) % 2:
        raise ParseError(f"indexing-map attribute: '{what}' must hold [lo, hi] pairs, got {len(values)} values")
    return [Interval(values[i], values[i + 1]) for i in range(0, len(values), 2)]


def _entry(attribute: ir.DictAttr, key: str) -> ir.Attribute:
    """``attribute[key]``; a :class:`ParseError` when the bindings cannot read it (an
    ``array<ui8: ...>`` has no Python class: reading it raises ``TypeError``)."""
    try:
        return attribute[key]
    except TypeError as exc:
        raise ParseError(f"indexing-map attribute: '{key}' cannot be read: {exc}") from None


def _string(attribute: "ir.Attribute", what: str) -> str:
    if not isinstance(attribute, ir.StringAttr):
        raise ParseError(f"indexing-map attribute: '{what}' must be a string, got {attribute}")
    return ir.StringAttr(attribute).value


def _affine_map(attribute: "ir.Attribute", what: str) -> "ir.AffineMap":
    if not isinstance(attribute, ir.AffineMapAttr):
        raise ParseError(f"indexing-map attribute: '{what}' must be an affine_map<...>, got {attribute}")
    for expr in ir.AffineMapAttr(attribute).value.results:
        check_depth(ax.depth(expr), f"an expression of indexing-map attribute '{what}'")
    return attribute.value


def indexing_map_from_attribute(attribute: "ir.Attribute") -> IndexingMap:
    """The inverse of :func:`indexing_map_to_attribute`. Raises :class:`ParseError`
    describing the first malformed entry."""
    if not isinstance(attribute, ir.DictAttr):
        raise ParseError(f"indexing-map attribute must be a dictionary, got {attribute}")
    if "unknown" in attribute:
        return IndexingMap.undefined(_string(_entry(attribute, "unknown"), "unknown"))
    if "known_empty" in attribute:
        affine_map = _affine_map(_entry(attribute, "known_empty"), "known_empty")
        return IndexingMap.known_empty(
            affine_map.n_dims, affine_map.n_symbols, len(affine_map.results), attribute.context
        )
    if "map" not in attribute or "dims" not in attribute:
        raise ParseError(f"indexing-map attribute needs 'map' and 'dims' entries: {attribute}")
    affine_map = _affine_map(_entry(attribute, "map"), "map")

    def get(key: str) -> "ir.Attribute | None":
        return _entry(attribute, key) if key in attribute else None

    origins = get("runtime_origins")
    if origins is not None and not isinstance(origins, ir.ArrayAttr):
        raise ParseError(f"indexing-map attribute: 'runtime_origins' must be an array of strings, got {origins}")
    origin_texts = [_string(a, "runtime_origins") for a in ir.ArrayAttr(origins)] if origins is not None else []
    runtimes = _intervals(get("runtimes"), "runtimes")
    if len(origin_texts) != len(runtimes):
        origin_texts = (origin_texts + [""] * len(runtimes))[: len(runtimes)]
    constraints: dict[ir.AffineExpr, Interval] = {}
    if "constraints" in attribute:
        exprs = list(_affine_map(_entry(attribute, "constraints"), "constraints").results)
        bounds = _intervals(get("constraint_bounds"), "constraint_bounds")
        if len(bounds) != len(exprs):
            raise ParseError("indexing-map attribute: 'constraint_bounds' must give one [lo, hi] per constraint")
        constraints = dict(zip(exprs, bounds))
    try:
        m = IndexingMap(
            affine_map,
            _intervals(_entry(attribute, "dims"), "dims"),
            _intervals(get("ranges"), "ranges"),
            [Variable(b, origin=o) for b, o in zip(runtimes, origin_texts)],
            constraints,
        )
        if not m.is_known_empty():
            for expr in list(m.results) + list(m.constraints):
                if ax.zero_divisors(expr, m.dim_ranges, m.symbol_ranges):
                    raise UndefinedDivisionError(f"indexing-map attribute: {expr} divides by zero over the domain")
        return m
    except HloIndexingError:
        raise
    except ValueError as exc:
        raise ParseError(f"indexing-map attribute: {exc}") from None


def indexing_maps_to_attribute(maps: Iterable[IndexingMap], context: "ir.Context | None" = None) -> "ir.Attribute":
    """An ``ArrayAttr`` of map attributes, sorted by their XLA text (deterministic)."""
    ordered = sorted(maps, key=str)
    context = context or (ordered[0].context if ordered and not ordered[0].is_undefined else current_or_default_context())
    return ir.ArrayAttr.get([indexing_map_to_attribute(m, context) for m in ordered], context=context)
