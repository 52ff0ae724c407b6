"""The parts an indexing map is made of: :class:`Variable` (a dimension, range or runtime
variable with its inclusive range) and :class:`MapParts` (an affine map, its variables
and its constraints). The map's text format and its simplifier read and make parts;
:class:`~hlo_indexing.maps.indexing_map.IndexingMap` wraps them.

Example::

    >>> Variable(Interval(0, 9), name="i") == Variable(Interval(0, 9))  # names are cosmetic
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps.interval import Interval


@dataclass(frozen=True, slots=True)
class Variable:
    """A dimension, range or runtime variable: its inclusive range, an optional custom
    name (printed instead of ``d0``/``s0``/``rt0``) and, for runtime variables, where the
    value comes from (e.g. ``"operand 1 of stablehlo.dynamic_slice"``).

    Names are cosmetic: they take no part in equality or hashing."""

    bounds: Interval
    name: str = ""
    origin: str = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Variable) and (self.bounds, self.origin) == (other.bounds, other.origin)

    def __hash__(self) -> int:
        return hash((self.bounds, self.origin))


RangeLike = Variable | Interval | tuple[int, int]


class MapParts(NamedTuple):
    """A defined map's parts: ``affine_map`` over the dimensions and the symbols (range
    variables first, then runtime variables), each variable's range, and the constraints
    ``{expression: interval}`` over the same variables."""

    affine_map: ir.AffineMap
    dims: tuple[Variable, ...]
    ranges: tuple[Variable, ...]
    runtimes: tuple[Variable, ...]
    constraints: Mapping[ir.AffineExpr, Interval]
