"""Semantic comparison of indexing maps for the conformance runner
(:mod:`conformance`): two maps agree when their relations ``{(d, f(d, s))}``
are equal (symbols projected out): proven by isl when ``islpy`` is installed
(:mod:`hlo_indexing.maps.exact`, whatever the domain's size), else by enumeration, on
sampled dimension points when the domain is large; a set of maps per operand is
compared as a set of relations, order-insensitive. A mismatch raises
:class:`CaseFailure`, whose message says where. :data:`METHODS` counts how each
comparison was decided.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import numpy as np

from hlo_indexing.errors import DomainTooLargeError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.exact import prove_equal
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.minmax import ClampedMap, parse_clamped_map
from hlo_indexing.maps.interval import Interval

# Above this many points a map is compared on sampled dimension points instead.
FULL_ENUMERATION_LIMIT = 200_000
SAMPLED_POINTS = 16
POINTWISE_SAMPLES = 20_000
PER_POINT_LIMIT = 200_000


#: How many comparisons each method decided: "isl" (proven or disproven), "enumeration"
#: (every point), "sampled" (dimension points sampled: not a proof).
METHODS: Counter[str] = Counter()


class CaseFailure(Exception):
    """A semantic mismatch; the message is the table's reason."""


def parse_map(text: str) -> IndexingMap:
    """XLA's map text, including the ``KNOWN EMPTY``/``UNDEFINED`` forms; the operand-level
    ``runtime variables:`` and ``replica id:`` sections that may follow are dropped."""
    for section in ("\nruntime variables:", "\nreplica id:"):
        text = text.split(section, 1)[0]  # sources of runtime variables/replicas: not compared
    stripped = " ".join(text.split())
    if stripped in ("UNDEFINED", "unknown indexing"):
        return IndexingMap.undefined("expected by XLA")
    if "min(" in stripped or "max(" in stripped:
        return parse_clamped_map(text)  # type: ignore[return-value]  # a ClampedMap: see relation_difference
    return IndexingMap.parse(text, allow_empty_ranges=True)


def narrowed(m: IndexingMap, point: Sequence[int]) -> IndexingMap:
    dims = [Variable(Interval(v, v), var.name) for v, var in zip(point, m.dim_vars)]
    return m.replace(dims=dims)


def relation_difference(ours: IndexingMap, expected: IndexingMap, rng: random.Random) -> str:
    """'' when both maps have the same relation, else a description of a difference.

    Small domains are enumerated in full; larger ones on ``SAMPLED_POINTS`` random
    dimension points (plus the box corners), each enumerated over its symbols. A map
    with min/max (:class:`~hlo_indexing.maps.minmax.ClampedMap`) is compared through
    its pieces."""
    if isinstance(ours, ClampedMap) or isinstance(expected, ClampedMap):
        return _clamped_difference(ours, expected)
    if expected.is_undefined or ours.is_undefined:
        if expected.is_undefined and ours.is_undefined:
            return ""
        return "expected an undefined map" if expected.is_undefined else f"ours is undefined ({ours.reason})"
    if expected.is_known_empty() or ours.is_known_empty():
        empty_ours = ours.is_known_empty() or not _has_points(ours)
        empty_expected = expected.is_known_empty() or not _has_points(expected)
        return "" if empty_ours == empty_expected else f"emptiness differs (ours empty: {empty_ours})"
    if ours.num_dims != expected.num_dims or ours.num_results != expected.num_results:
        return (
            f"arity differs: ours {ours.num_dims} dims -> {ours.num_results} results, "
            f"expected {expected.num_dims} -> {expected.num_results}"
        )
    proof = prove_equal(ours, expected)
    if proof.ran:
        METHODS["isl"] += 1
        return "" if proof.holds else f"relation differs (isl: {proof})"
    if max(ours.domain_size(), expected.domain_size()) <= FULL_ENUMERATION_LIMIT:
        METHODS["enumeration"] += 1
        if _pointwise_equal(ours, expected, rng):
            return ""
        return _describe(ours.relation(FULL_ENUMERATION_LIMIT), expected.relation(FULL_ENUMERATION_LIMIT))
    METHODS["sampled"] += 1
    if _pointwise_equal(ours, expected, rng):
        return ""
    box = [
        Interval(min(a.lower, b.lower), max(a.upper, b.upper))
        for a, b in zip(ours.dim_ranges, expected.dim_ranges)
    ]
    points = {tuple(r.lower for r in box), tuple(r.upper for r in box)}
    points.update(tuple(rng.randint(r.lower, r.upper) for r in box) for _ in range(SAMPLED_POINTS))
    for point in sorted(points):
        try:
            mismatch = _describe(
                narrowed(ours, point).relation(PER_POINT_LIMIT),
                narrowed(expected, point).relation(PER_POINT_LIMIT),
            )
        except DomainTooLargeError as exc:
            return f"cannot compare: {exc.message}"
        if mismatch:
            return f"at dims {point}: {mismatch}"
    return ""


def _clamped_difference(ours: "IndexingMap | ClampedMap", expected: "IndexingMap | ClampedMap") -> str:
    """'' when the relations are equal (isl, else every point of the pieces)."""
    if (ours.num_dims, ours.num_results) != (expected.num_dims, expected.num_results):
        return f"arity differs: ours {ours.num_dims} -> {ours.num_results}, expected {expected.num_dims} -> {expected.num_results}"
    proof = prove_equal(ours, expected)
    if proof.ran:
        METHODS["isl"] += 1
        return "" if proof.holds else f"relation differs (isl: {proof})"
    METHODS["enumeration"] += 1

    def relation(m: "IndexingMap | ClampedMap") -> set:
        return m.relation(FULL_ENUMERATION_LIMIT)

    return _describe(relation(ours), relation(expected))


def _pointwise_equal(ours: IndexingMap, expected: IndexingMap, rng: random.Random) -> bool:
    """True when both maps have the same variables (ranges) and, at every point of that
    box (or at ``POINTWISE_SAMPLES`` random points of a larger box), the same feasibility
    and the same results: equality as functions, which implies equal relations."""
    ours_box = ours.dim_ranges + ours.symbol_ranges
    if ours_box != expected.dim_ranges + expected.symbol_ranges or ours.num_dims != expected.num_dims:
        return False
    if ours.domain_size() <= POINTWISE_SAMPLES:
        axes = [np.arange(r.lower, r.upper + 1, dtype=np.int64) for r in ours_box]
        columns = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")] if axes else []
    else:
        generator = np.random.default_rng(rng.randrange(2**32))
        columns = [generator.integers(r.lower, r.upper + 1, POINTWISE_SAMPLES) for r in ours_box]
    count = len(columns[0]) if columns else 1
    dims, symbols = columns[: ours.num_dims], columns[ours.num_dims :]

    def feasible_and_images(m: IndexingMap) -> tuple[np.ndarray, list[np.ndarray]]:
        keep = np.ones(count, dtype=bool)
        for expr, interval in m.constraints.items():
            values = np.broadcast_to(ax.evaluate_array(expr, dims, symbols, keep), keep.shape)
            keep &= (values >= interval.lower) & (values <= interval.upper)
        results = [np.broadcast_to(ax.evaluate_array(e, dims, symbols, keep), keep.shape) for e in m.results]
        return keep, [values[keep] for values in results]

    ours_keep, ours_images = feasible_and_images(ours)
    expected_keep, expected_images = feasible_and_images(expected)
    return bool(
        np.array_equal(ours_keep, expected_keep)
        and all(np.array_equal(a, b) for a, b in zip(ours_images, expected_images))
    )


def _has_points(m: IndexingMap) -> bool:
    try:
        return len(m.enumerate(FULL_ENUMERATION_LIMIT)[0]) > 0
    except DomainTooLargeError:
        return True


def _describe(ours: set, expected: set) -> str:
    if ours == expected:
        return ""
    missing = sorted(expected - ours)[:1]
    extra = sorted(ours - expected)[:1]
    parts = []
    if missing:
        parts.append(f"misses {missing[0]}")
    if extra:
        parts.append(f"adds {extra[0]}")
    return f"relation differs ({len(ours)} vs {len(expected)} pairs; " + ", ".join(parts) + ")"


def compare_map_sets(
    ours: Sequence[frozenset[IndexingMap] | set[IndexingMap]],
    expected: Sequence[Sequence[str]],
    rng: random.Random,
    what: str = "operand",
) -> None:
    """Raise :class:`CaseFailure` unless, for each operand, the set of our maps equals the
    expected set as a set of relations (order-insensitive; equal relations count once)."""
    # print_indexing (a FileCheck test) prints nothing for operands that are not read.
    if len(ours) > len(expected) and not any(ours[len(expected) :]):
        ours = ours[: len(expected)]
    if len(ours) != len(expected):
        raise CaseFailure(f"{len(ours)} {what}s, expected {len(expected)}")
    for index, (our_maps, texts) in enumerate(zip(ours, expected)):
        wanted = [parse_map(t) for t in texts]
        mine = list(our_maps)
        differences = {(i, j): relation_difference(m, t, rng) for i, m in enumerate(mine) for j, t in enumerate(wanted)}
        for j, target in enumerate(wanted):
            if all(differences[i, j] for i in range(len(mine))):
                details = differences[0, j] if len(mine) == 1 else _union_hint(mine, wanted)
                raise CaseFailure(
                    f"{what} {index}: no map of ours ({len(mine)}) matches expected "
                    f"{' '.join(str(target).split())!r}" + (f": {details}" if details else "")
                )
        for i, m in enumerate(mine):
            if all(differences[i, j] for j in range(len(wanted))):
                raise CaseFailure(f"{what} {index}: our map {' '.join(str(m).split())!r} is not expected")


def _union_hint(mine: list[IndexingMap], wanted: list[IndexingMap]) -> str:
    """How the union of our relations compares with the union of XLA's ('' if unknown)."""
    try:
        ours = set().union(*(m.relation(FULL_ENUMERATION_LIMIT) for m in mine if not m.is_undefined))
        theirs = set().union(*(m.relation(FULL_ENUMERATION_LIMIT) for m in wanted if not m.is_undefined))
    except DomainTooLargeError:
        return ""
    if ours == theirs:
        return "same union of relations, split differently"
    if ours < theirs:
        return f"ours is more precise: our union ({len(ours)} pairs) is inside XLA's ({len(theirs)})"
    return _describe(ours, theirs)


def node_total(m: IndexingMap) -> int:
    """Expression nodes of the results and the constraints."""
    if m.is_undefined or m.is_known_empty():
        return 0
    return sum(ax.node_count(e) for e in m.results) + sum(ax.node_count(e) for e in m.constraints)
