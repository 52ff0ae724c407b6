"""The result type of fused maps (:class:`FusionIndexing`), the element paths that address
tensors inside tuple values, and the caps of the fused walk
(:mod:`hlo_indexing.analysis.fusion`).

Example::

    >>> path_text((1, 0))
    '1.0'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.direction import Direction
from hlo_indexing.errors import InvalidArgumentError, UnsupportedError
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.indexing_map import display_text
from hlo_indexing.ops.rule import value_shape

#: Default cap on the number of distinct maps kept per value.
DEFAULT_MAX_MAPS = 16
#: Default cap on the expression size (nodes of all results) of one composed map.
DEFAULT_MAX_EXPR_NODES = 2000


#: An element of a value: ``()`` for the value itself, ``(k, ...)`` for element ``k``
#: (of element ...) of a tuple.
Path = tuple[int, ...]
#: ``FusionIndexing.elements[i]`` of a tensor (one read-only empty mapping, shared).
NO_ELEMENTS: Mapping[Path, frozenset[IndexingMap]] = MappingProxyType({})
#: Per element path of one value, its maps.
ElementMaps = dict[Path, frozenset[IndexingMap]]


@dataclass(frozen=True)
class FusionIndexing:
    """Fused maps: ``argument_maps[i]`` (output -> input) or ``result_maps[i]``
    (input -> output) is a frozenset of maps; ``over_approximated`` names the values
    whose sets were capped (see the module docstring). ``elements[i]`` maps each
    element path of a tuple-typed argument (result) that is read (written) to its set
    of maps (``{}`` for a tensor); ``maps[i]`` of such a value holds an undefined map
    pointing there."""

    maps: tuple[frozenset[IndexingMap], ...]
    over_approximated: tuple[str, ...] = ()
    direction: str = field(default=Direction.OUTPUT_TO_INPUT, compare=False)
    elements: tuple[Mapping[Path, frozenset[IndexingMap]], ...] = field(default=(), hash=False)

    @property
    def argument_maps(self) -> tuple[frozenset[IndexingMap], ...]:
        """The map sets, one per argument (output to input) or per result (input to output):
        the same as :attr:`maps`."""
        return self.maps

    @property
    def is_unknown(self) -> bool:
        """True when some map is *unknown indexing*."""
        return any(m.is_undefined for maps in self.maps for m in maps)

    def element_maps(self, index: int) -> list[tuple[Path, frozenset[IndexingMap]]]:
        """``(element path, maps)`` of argument (result) ``index``: ``[((), maps[index])]``
        for a tensor, one entry per element of a tuple that is read (written)."""
        elements = self.elements[index] if index < len(self.elements) else {}
        return sorted(elements.items()) if elements else [((), self.maps[index])]

    def __str__(self) -> str:
        label = "operand" if self.direction == Direction.OUTPUT_TO_INPUT else "result"
        lines = []
        for k in range(len(self.maps)):
            for path, maps in self.element_maps(k):
                prefix = f"{label} id = {k}" + (f" element {path_text(path)}:" if path else "")
                if not maps:
                    lines.append(f"{prefix} no dependence")
                for text in sorted(display_text(m) for m in maps):
                    lines.append(f"{prefix} {text}")
        return "\n".join(lines)


def tensor_elements(value_type: ir.Type) -> list[Path]:
    """The paths of the tensors inside a value of ``value_type``, in order: ``[()]`` for
    a tensor, ``[(0,), (1, 0), (1, 1)]`` for ``tuple<A, tuple<B, C>>``."""
    if not isinstance(value_type, ir.TupleType):
        return [()]
    return [(k,) + path for k in range(value_type.num_types) for path in tensor_elements(value_type.get_type(k))]


def path_text(path: Path) -> str:
    """``1.0`` for the path ``(1, 0)``."""
    return ".".join(map(str, path))


def element_type(value_type: ir.Type, path: Path) -> ir.Type:
    """The type of element ``path`` of a value of ``value_type``."""
    for k in path:
        if not isinstance(value_type, ir.TupleType) or not 0 <= k < value_type.num_types:
            raise InvalidArgumentError(f"{value_type} has no tuple element {k}")
        value_type = value_type.get_type(k)
    return value_type


def whole_value_map(shape: tuple[int, ...], domain: IndexingMap) -> IndexingMap:
    """``(d...)[s...] -> (s...)`` over ``domain``'s dimensions: every element of a value
    of ``shape`` (the documented over-approximation of a capped set)."""
    context = domain.context
    symbols = [ir.AffineSymbolExpr.get(i, context) for i in range(len(shape))]
    affine_map = ir.AffineMap.get(domain.num_dims, len(shape), symbols, context)
    return IndexingMap(affine_map, domain.dim_vars, [(0, n - 1) for n in shape])


def untracked_element(operation: ir.Operation, what: str, index: int, path: Path) -> IndexingMap:
    """The unknown map of element ``path`` of tuple ``what`` (``result``, ``operand``)
    ``index`` of ``operation``, which the walks cannot follow (``()``: the whole tuple)."""
    element = f"element {path_text(path)} of " if path else ""
    return IndexingMap.undefined(f"{operation.name}: cannot follow {element}the tuple {what} #{index}")


def static_shape(value: ir.Value, path: Path = ()) -> tuple[int, ...]:
    """The static shape of element ``path`` of ``value``; ``UnsupportedError`` otherwise."""
    value_type = element_type(value.type, path)
    shape = value_shape(value_type)
    if shape is None:
        raise UnsupportedError(f"fused indexing needs static tensor shapes, got {value_type}")
    return shape
