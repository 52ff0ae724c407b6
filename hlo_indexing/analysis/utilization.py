"""Operand utilisation of a computation: for each argument of a ``func.func`` (or
``mhlo.fusion``, or any single-block region), the fraction of its elements that are
read when every result is computed, from the fused output -> input maps
(:func:`hlo_indexing.analysis.fusion.fusion_indexing`).

The read set of an argument is the union, over all results and over all of that
argument's maps, of the image of each map over its feasible domain. The fraction is
``read / elements``, computed in one of these ways (``Utilization.method``):

* ``"interval"`` (exact): one map's image is exactly a box (its results are distinct
  variables plus constants, no constraints, no runtime variables) that contains the
  interval hull of every other map's image; the read set is that box;
* ``"enumeration"`` (exact): the domains hold at most ``max_points`` points in total;
  the maps are enumerated and the images linearised and counted with numpy;
* ``"hull"`` (an upper bound): otherwise. Each map contributes at most
  ``min(prod over results of min(hull size, values of its variables), values of all
  its variables)`` elements, where the hull of a result is its interval bound over
  the variable ranges clipped to the dimension; the union is bounded by the smaller
  of the sum of these and the volume of the boxes' union (the largest box when it
  contains all the others, else the sum of the boxes);
* ``"unknown"``: some map is undefined (e.g. a custom call); the fraction is 1.0.

``exact`` is False for ``"hull"`` and ``"unknown"``, and also when a result's map set
was over-approximated (``FusionIndexing.over_approximated``) or a map has runtime
variables (the union is taken over every runtime value): the fraction is then an upper
bound. An argument no result reads has fraction 0.0; a scalar counts one element; an
argument with no elements has fraction 1.0 (nothing of it is wasted).

Example::

    >>> [u.fraction for u in operand_utilization(func_op)]   # y = x[::2] + 1
    [0.5]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS, FusionIndexing, fusion_indexing
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.points import distinct
from hlo_indexing.ops.rule import is_token, value_shape

#: Default limit on the total number of domain points enumerated for one argument.
DEFAULT_MAX_POINTS = 1 << 20


@dataclass(frozen=True)
class Utilization:
    """``fraction`` of an argument's ``elements`` read (``read`` of them, or at most
    ``read`` when not ``exact``); ``method`` says how it was computed (module docstring)."""

    fraction: float
    read: int
    elements: int
    exact: bool
    method: str

    def __str__(self) -> str:
        """``= 0.5 (exact, enumeration)`` or ``<= 0.5 (bound, hull)``."""
        if self.exact:
            return f"= {self.fraction:.6g} (exact, {self.method})"
        return f"<= {self.fraction:.6g} (bound, {self.method})"


def fused_per_result(region_or_func: ir.Region | OpLike, max_maps: int = DEFAULT_MAX_MAPS) -> list[FusionIndexing]:
    """``fusion_indexing`` of every result of the computation, in result order."""
    terminator = block_of(region_or_func).operations[-1]
    return [fusion_indexing(region_or_func, r, max_maps=max_maps) for r in range(len(terminator.operands))]


def operand_utilization(
    region_or_func: ir.Region | OpLike,
    *,
    max_points: int = DEFAULT_MAX_POINTS,
    max_maps: int = DEFAULT_MAX_MAPS,
    fused: Sequence[FusionIndexing] | None = None,
) -> tuple[Utilization, ...]:
    """One :class:`Utilization` per block argument of the computation. ``fused`` (the
    result of :func:`fused_per_result`) avoids recomputing the fused maps."""
    results = list(fused) if fused is not None else fused_per_result(region_or_func, max_maps)
    arguments = block_of(region_or_func).arguments
    out = []
    for a, argument in enumerate(arguments):
        if is_token(argument.type):  # nothing to read: as an array of no element
            out.append(Utilization(1.0, 0, 0, True, "token"))
            continue
        shape = value_shape(argument.type)
        if shape is None:
            raise UnsupportedError(f"operand utilisation needs static shapes, argument {a} has type {argument.type}")
        maps = [m for r in results for m in r.maps[a]]
        capped = any(r.over_approximated for r in results if r.maps[a])
        out.append(maps_utilization(maps, shape, max_points=max_points, over_approximated=capped))
    return tuple(out)


def maps_utilization(
    maps: Iterable[IndexingMap],
    shape: Sequence[int],
    *,
    max_points: int = DEFAULT_MAX_POINTS,
    over_approximated: bool = False,
) -> Utilization:
    """The utilisation of an array of ``shape`` read through ``maps`` (see the module
    docstring); ``over_approximated`` marks the result as a bound."""
    shape = tuple(shape)
    elements = int(np.prod(shape, dtype=object))
    maps = [m for m in maps if not m.is_known_empty()]
    if any(m.is_undefined for m in maps):
        return Utilization(1.0, elements, elements, False, "unknown")
    exact_maps = not over_approximated and not any(m.runtime_vars for m in maps)
    if elements == 0:
        return Utilization(1.0, 0, 0, exact_maps, "interval")
    if not maps:
        return Utilization(0.0, 0, elements, exact_maps, "interval")
    boxes = [_hull(m, shape) for m in maps]
    covering = _covering_exact_box(maps, boxes)
    if covering is not None:
        read, method, exact = _volume(covering), "interval", exact_maps
    elif sum(m.domain_size() for m in maps) <= max_points:
        read, method, exact = _enumerated_count(maps, shape), "enumeration", exact_maps
    else:
        read, method, exact = min(_bound(maps, boxes), elements), "hull", False
    return Utilization(read / elements, read, elements, exact, method)


def _hull(m: IndexingMap, shape: tuple[int, ...]) -> tuple[Interval, ...]:
    """Per-dimension interval hull of the image, clipped to the array."""
    return tuple(
        Interval(max(b.lower, 0), min(b.upper, n - 1))
        for b, n in ((m.expr_bounds(e), n) for e, n in zip(m.results, shape))
    )


def _volume(box: Sequence[Interval]) -> int:
    volume = 1
    for interval in box:
        volume *= max(interval.size, 0)
    return volume


def _contains(outer: Sequence[Interval], inner: Sequence[Interval]) -> bool:
    return all(i.is_empty or (o.lower <= i.lower and i.upper <= o.upper) for o, i in zip(outer, inner))


def _image_is_box(m: IndexingMap) -> bool:
    """Whether the image is exactly the hull: each result is a constant or a distinct
    variable plus a constant, over unconstrained ranges without runtime variables."""
    if m.constraints or m.runtime_vars:
        return False
    seen: set[tuple[str, int]] = set()
    for expr in m.results:
        expr = ax.typed(expr)
        if isinstance(expr, ax.Add) and isinstance(ax.typed(expr.rhs), ax.Const):
            expr = ax.typed(expr.lhs)
        if isinstance(expr, ax.Const):
            continue
        if isinstance(expr, ax.Dim):
            key = ("d", expr.position)
        elif isinstance(expr, ax.Sym):
            key = ("s", expr.position)
        else:
            return False
        if key in seen:
            return False
        seen.add(key)
    return True


def _covering_exact_box(maps: list[IndexingMap], boxes: list[tuple[Interval, ...]]) -> tuple[Interval, ...] | None:
    for m, box in zip(maps, boxes):
        if _image_is_box(m) and all(_contains(box, other) for other in boxes):
            return box
    return None


#: Operands of at most this many elements count the indices read in a table of one
#: byte per element (linear in the points enumerated); larger ones sort the indices.
COUNT_TABLE_ELEMENTS = 1 << 26


def inside_array(m: IndexingMap, images: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """Which rows of ``images`` (``m``'s results, enumerated) lie inside an array of
    ``shape``, or None when all do: only the results whose bounds over the ranges may
    leave their dimension are compared (most maps stay inside by construction)."""
    inside = None
    for k, (expr, extent) in enumerate(zip(m.results, shape)):
        if Interval(0, extent - 1).contains(m.expr_bounds(expr)):
            continue
        column = images[:, k]
        within = (column >= 0) & (column < extent)
        inside = within if inside is None else inside & within
    return inside


def _enumerated_count(maps: list[IndexingMap], shape: tuple[int, ...]) -> int:
    linear = []
    for m in maps:
        _, images = m.enumerate(max_points=m.domain_size())
        if not len(images):
            continue
        inside = inside_array(m, images, shape)
        if inside is not None:
            images = images[inside]
        if not shape:
            linear.append(np.zeros(len(images), dtype=np.int64))
        else:
            linear.append(np.ravel_multi_index(tuple(images.T), shape))
    if not linear:
        return 0
    size = int(np.prod(shape, dtype=np.int64))
    if size > COUNT_TABLE_ELEMENTS:
        return int(distinct(np.concatenate(linear)).size)
    read = np.zeros(size, dtype=bool)
    for indices in linear:
        read[indices] = True
    return int(np.count_nonzero(read))


def _variable_counts(m: IndexingMap) -> list[int]:
    return [v.bounds.size for v in m.dim_vars + m.symbol_vars]


def _map_bound(m: IndexingMap, box: tuple[Interval, ...]) -> int:
    """At most this many distinct images (see the module docstring)."""
    counts = _variable_counts(m)
    n_dims = m.num_dims
    per_result = 1
    used_all: set[int] = set()
    for expr, hull in zip(m.results, box):
        dims: set[int] = set()
        symbols: set[int] = set()
        ax.used_variables(expr, dims, symbols)
        used = dims | {n_dims + s for s in symbols}
        used_all |= used
        values = 1
        for v in used:
            values *= counts[v]
        per_result *= min(max(hull.size, 0), values)
    jointly = 1
    for v in used_all:
        jointly *= counts[v]
    return min(per_result, jointly)


def _bound(maps: list[IndexingMap], boxes: list[tuple[Interval, ...]]) -> int:
    by_counts = sum(_map_bound(m, box) for m, box in zip(maps, boxes))
    largest = max(boxes, key=_volume)
    by_boxes = _volume(largest) if all(_contains(largest, b) for b in boxes) else sum(_volume(b) for b in boxes)
    return min(by_counts, by_boxes)
