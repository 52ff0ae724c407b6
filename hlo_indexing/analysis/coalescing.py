"""Coalescing hint per argument of a computation: do consecutive values of the innermost
output dimension read consecutive memory of the argument, in the argument's layout?

XLA's GPU backend (``coalescing_analysis.cc``) decides it on a thread-id -> input map
linearised in the operand's physical layout: it samples the 32 threads of a warp,
keeps the innermost loop symbol (outer loop symbols fixed at their first value), and
calls the read coalesced when the linear offsets the warp touches form few enough
contiguous intervals (stride +1 or -1 in the thread id, a broadcast's stride 0, or
each thread sweeping a run at least as long as the stride between threads). Undefined
maps are uncoalesced; scalars and unused operands are coalesced; an operand read
through several maps is coalesced only if every read is.

We have no thread mapping, so the innermost output dimension plays the thread id.
For one fused map ``m`` with linear offset ``L(d, s) = offset(m(d, s))`` in the
argument's layout (:func:`hlo_indexing.layout.tiling.linear_index`), ``m`` is
**coalesced** when either rule holds:

* **stride rule**: for every feasible point ``(d, s)`` whose neighbour
  ``(d + e_inner, s)`` is feasible too, ``L(d + e_inner, s) - L(d, s)`` is -1, 0 or 1
  (reversal, broadcast, consecutive);
* **footprint rule**: for every *warp*, i.e. every group of feasible points sharing the
  outer dimensions, the runtime variables and the window ``(d_inner - lo) // warp``
  (``warp`` = 32 consecutive innermost indices), the offsets read over all of the
  group's loop symbols form one contiguous range (e.g. a row reduction, each thread
  reading a whole row of a row-major operand).

It is decided **exactly** in two ways (``Coalescing.method``):

* ``"symbolic"``: ``L`` (built by substitution and simplified) is a linear form in
  which neither the innermost dimension nor a loop symbol occurs under ``floordiv`` /
  ``mod`` / a product of variables. If the innermost dimension's coefficient ``c`` is
  -1, 0 or 1 (or it has a single value) the stride rule holds. Otherwise, when the map
  has no constraints, the stride rule fails and the footprint rule is checked on the
  values ``G`` of the loop-symbol part (enumerated, at most ``max(max_points, 1)``): every warp
  reads ``base + c*j + G`` for ``j`` over its window, checked for the full and the last
  window lengths. This path is tried first.
* ``"enumeration"``: the domain holds at most ``max_points`` points; both rules are
  checked point by point.

Otherwise the map is **undecided** and reported as uncoalesced with ``exact=False``
(``method="undecided"``). Undefined maps (``"unknown"``) and maps of an
over-approximated set (``"over-approximated"``) are uncoalesced with ``exact=False``.
A scalar argument, an unused argument, a map with an empty domain and a rank-0 result
are coalesced. The innermost output dimension is the most minor dimension of the
result's layout (the last one, row-major, by default).

Differences from XLA, by design: XLA samples one warp and accepts intervals covering at
least 90 % of the ideal transaction count; we check every warp and require exact
contiguity; XLA's footprint keeps only the innermost loop symbol, ours unions over all.

Example::

    >>> [c.coalesced for c in coalescing(func_op)]   # y = transpose(x) + x
    [False]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hlo_indexing.analysis.fusion import DEFAULT_MAX_MAPS, FusionIndexing
from hlo_indexing.analysis.utilization import DEFAULT_MAX_POINTS, fused_per_result, inside_array
from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.call_like import block_of
from hlo_indexing.errors import UnsupportedError
from hlo_indexing.layout.attributes import LayoutLike, as_layout, declared_layouts
from hlo_indexing.layout.lowering import linear_offset_map
from hlo_indexing.layout.tiling import IntArith, linear_from_coordinates, plan, tiled_coordinates
from hlo_indexing.layout.types import Layout
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.points import distinct, distinct_rows, numbered_rows
from hlo_indexing.maps.linear_form import linearize
from hlo_indexing.ops.rule import is_token, value_shape

#: Consecutive innermost indices that read together (a GPU warp).
WARP_SIZE = 32
@dataclass(frozen=True)
class Coalescing:
    """Whether an argument's reads are ``coalesced``; ``exact`` is False when the answer
    is a conservative "no"; ``method`` names how it was decided (module docstring)."""

    coalesced: bool
    exact: bool
    method: str

    def __str__(self) -> str:
        return f"{'true' if self.coalesced else 'false'} ({self.method})"





# ------------------------------------------------------------------ one map


def map_coalescing(
    m: IndexingMap,
    shape: Sequence[int],
    layout: LayoutLike = None,
    *,
    innermost_dim: int | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
    warp: int = WARP_SIZE,
) -> Coalescing:
    """The coalescing of one output -> argument map for an argument of ``shape`` stored
    in ``layout``; ``innermost_dim`` defaults to the map's last dimension."""
    shape = tuple(shape)
    if m.is_undefined:
        return Coalescing(False, False, "unknown")
    if not shape or m.num_dims == 0 or m.is_known_empty():
        return Coalescing(True, True, "trivial")
    layout = as_layout(layout, len(shape))
    inner = m.num_dims - 1 if innermost_dim is None else innermost_dim
    linear = _linearised(m, shape, layout)
    decided = _symbolic(linear, inner, max_points, warp)
    if decided is not None:
        return Coalescing(decided, True, "symbolic")
    if m.domain_size() <= max_points:
        return Coalescing(_enumerated(m, shape, layout, inner, warp), True, "enumeration")
    return Coalescing(False, False, "undecided")


def _linearised(m: IndexingMap, shape: tuple[int, ...], layout: Layout) -> IndexingMap:
    """``m`` with its results replaced by the one linear offset in ``layout``."""
    offset = linear_offset_map(shape, layout, m.context).results[0]
    expr = ax.substitute(offset, list(m.results), [])
    affine_map = ir.AffineMap.get(m.num_dims, m.num_symbols, [expr], m.context)
    return m.replace(affine_map=affine_map).simplify()


def _symbolic(linear: IndexingMap, inner: int, max_points: int, warp: int) -> bool | None:
    """The decision on the linear form, or None when it does not apply."""
    if linear.is_known_empty():
        return True
    n_range = len(linear.range_vars)
    form = linearize(linear.results[0])
    inner_coeff = 0
    symbol_coeffs = [0] * n_range
    for atom, coeff in form.terms.items():
        if isinstance(atom, ax.Dim):
            if atom.position == inner:
                inner_coeff = coeff
            continue
        if isinstance(atom, ax.Sym):
            if atom.position < n_range:
                symbol_coeffs[atom.position] = coeff
            continue
        dims: set[int] = set()
        symbols: set[int] = set()
        ax.used_variables(atom, dims, symbols)
        if inner in dims or any(s < n_range for s in symbols):
            return None
    inner_size = linear.dim_ranges[inner].size
    if inner_coeff in (-1, 0, 1) or inner_size <= 1:
        return True
    if linear.constraints:
        return None
    box = 1
    for v in linear.range_vars:
        box *= v.bounds.size
    if box > max(max_points, 1):
        return None
    values = np.zeros(1, dtype=np.int64)
    for coeff, v in zip(symbol_coeffs, linear.range_vars):
        axis = coeff * np.arange(v.bounds.lower, v.bounds.upper + 1, dtype=np.int64)
        values = distinct((values[:, None] + axis[None, :]).reshape(-1))
    lengths = {min(warp, inner_size), inner_size % warp} - {0}
    for length in lengths:
        footprint = distinct((values[:, None] + inner_coeff * np.arange(length)[None, :]).reshape(-1))
        if footprint[-1] - footprint[0] + 1 != footprint.size:
            return False
    return True


def _offsets(images: np.ndarray, shape: tuple[int, ...], layout: Layout) -> np.ndarray:
    arith = IntArith()
    p = plan(shape, layout)
    coords = tiled_coordinates(p, [images[:, k] for k in range(len(shape))], arith)
    return np.broadcast_to(np.asarray(linear_from_coordinates(p, coords, arith), dtype=np.int64), (len(images),))


def _enumerated(m: IndexingMap, shape: tuple[int, ...], layout: Layout, inner: int, warp: int) -> bool:
    points, images = m.enumerate(max_points=m.domain_size())
    if not len(points):
        return True
    inside = inside_array(m, images, shape)
    if inside is not None and not inside.all():
        return False
    offsets = _offsets(images, shape, layout)
    variables = m.dim_vars + m.symbol_vars
    lows = np.array([v.bounds.lower for v in variables], dtype=np.int64)
    sizes = [v.bounds.size for v in variables]
    keys = np.ravel_multi_index(tuple((points - lows).T), sizes)
    if np.any(keys[1:] < keys[:-1]):  # the enumeration's order is already the keys' in most maps
        order = np.argsort(keys)
        keys, points, offsets = keys[order], points[order], offsets[order]
    step = int(np.prod(sizes[inner + 1 :], dtype=np.int64))
    neighbour = np.searchsorted(keys, keys + step)
    neighbour = np.minimum(neighbour, len(keys) - 1)
    has_neighbour = (keys[neighbour] == keys + step) & (points[:, inner] < variables[inner].bounds.upper)
    if np.all(np.abs(offsets[neighbour[has_neighbour]] - offsets[has_neighbour]) <= 1):
        return True
    group_columns = [k for k in range(m.num_dims) if k != inner]
    group_columns += list(range(m.num_dims + len(m.range_vars), points.shape[1]))
    window = (points[:, inner] - variables[inner].bounds.lower) // warp
    rows = np.concatenate([points[:, group_columns], window[:, None]], axis=1)
    groups, offsets = _distinct_pairs(*numbered_rows(rows), offsets)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    counts = np.diff(np.r_[starts, len(groups)])
    low = offsets[starts]
    high = offsets[np.r_[starts[1:], len(groups)] - 1]
    return bool(np.all(high - low + 1 == counts))


def _distinct_pairs(groups: np.ndarray, bound: int, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (group, offset) pairs, sorted by group then offset, as two columns
    (``groups`` below ``bound``): one integer per pair when they fit in int64."""
    low = int(offsets.min())
    span = int(offsets.max()) - low + 1
    if bound * span < 1 << 62:
        keys = distinct(groups * span + (offsets - low))
        return keys // span, keys % span + low
    pairs = distinct_rows(np.stack([groups, offsets], axis=1))[0]
    return pairs[:, 0], pairs[:, 1]


# ------------------------------------------------------------------ computations


def coalescing(
    region_or_func: ir.Region | OpLike,
    *,
    layouts: Sequence[LayoutLike] | None = None,
    result_layouts: Sequence[LayoutLike] | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
    max_maps: int = DEFAULT_MAX_MAPS,
    fused: Sequence[FusionIndexing] | None = None,
) -> tuple[Coalescing, ...]:
    """One :class:`Coalescing` per block argument, over the maps of every result.
    ``layouts`` (per argument) and ``result_layouts`` (per result; they choose the
    innermost output dimension) default to the ``hlo_indexing.layout`` attributes of a
    ``func.func`` or ``mhlo.fusion`` (see :func:`declared_layouts`), else row-major."""
    results = list(fused) if fused is not None else fused_per_result(region_or_func, max_maps)
    block = block_of(region_or_func)
    if layouts is None or result_layouts is None:
        declared = None if isinstance(region_or_func, ir.Region) else declared_layouts(region_or_func)
        if declared is None:
            declared = ([None] * len(block.arguments), [None] * len(results))
        layouts = declared[0] if layouts is None else layouts
        result_layouts = declared[1] if result_layouts is None else result_layouts
    terminator = block.operations[-1]
    inner_dims = []
    for r, value in enumerate(terminator.operands):
        result_shape = value_shape(value.type) or ()
        inner_dims.append(as_layout(result_layouts[r], len(result_shape)).minor_to_major[0] if result_shape else None)
    out = []
    for a, argument in enumerate(block.arguments):
        if is_token(argument.type):  # no element, no memory access
            out.append(Coalescing(True, True, "token"))
            continue
        shape = value_shape(argument.type)
        if shape is None:
            raise UnsupportedError(f"coalescing needs static shapes, argument {a} has type {argument.type}")
        decisions = []
        for r, fused_result in enumerate(results):
            for m in fused_result.maps[a]:
                if fused_result.over_approximated and not m.is_undefined:
                    decisions.append(Coalescing(False, False, "over-approximated"))
                else:
                    decisions.append(
                        map_coalescing(m, shape, layouts[a], innermost_dim=inner_dims[r], max_points=max_points)
                    )
        out.append(_combined(decisions, scalar=not shape))
    return tuple(out)


def _combined(decisions: list[Coalescing], scalar: bool) -> Coalescing:
    if scalar:
        return Coalescing(True, True, "scalar")
    if not decisions:
        return Coalescing(True, True, "unused")
    methods = "+".join(sorted({d.method for d in decisions}))
    coalesced = all(d.coalesced for d in decisions)
    # One exact "no" makes the answer exact; a "yes" needs every decision exact.
    exact = all(d.exact for d in decisions) or any(d.exact and not d.coalesced for d in decisions)
    return Coalescing(coalesced, exact, methods)
