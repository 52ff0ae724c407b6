"""Proof by isl (:mod:`hlo_indexing.maps.exact`): its verdicts agree with enumeration on
small maps, it decides maps far too large to enumerate, and without ``islpy`` every
proof says it was not run."""

from __future__ import annotations

import pytest

from hlo_indexing import IndexingMap, limits
from hlo_indexing.maps import exact
from hlo_indexing.maps.exact import isl_available, prove_empty, prove_equal, prove_includes

needs_isl = pytest.mark.skipif(not isl_available(), reason="islpy is not installed (the 'exact' extra)")

SMALL = [
    "(d0, d1) -> ((d0 * 20 + d1) floordiv 10, (d0 * 20 + d1) mod 10), domain: d0 in [0, 9], d1 in [0, 19]",
    "(d0)[s0] -> (d0 + s0 * 2), domain: d0 in [0, 9], s0 in [0, 3], d0 + s0 in [0, 5]",
    "(d0) -> (d0 ceildiv 4, 7 - d0), domain: d0 in [0, 9]",
    "(d0) -> ((d0 + 3) floordiv 4, -d0 + 7), domain: d0 in [0, 9]",
    "(d0) -> (d0 floordiv -3, d0 mod 4), domain: d0 in [-6, 9]",
    "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 30], s0 - d0 * 3 in [0, 2]",
    "(d0) -> (d0), domain: d0 in [0, 9], d0 mod 16 in [12, 13]",
    # semi-affine: split into one Presburger piece per value of a factor or divisor
    "(d0)[s0] -> (d0 * s0), domain: d0 in [0, 9], s0 in [1, 2]",
    "(d0)[s0, s1] -> (d0 + s0 * s1), domain: d0 in [0, 3], s0 in [0, 2], s1 in [0, 3], s0 * s1 in [0, 4]",
    "(d0)[s0] -> (d0 floordiv s0, d0 mod s0), domain: d0 in [0, 9], s0 in [1, 3]",
]


@needs_isl
@pytest.mark.parametrize("first", SMALL)
@pytest.mark.parametrize("second", SMALL)
def test_verdicts_agree_with_enumeration(first: str, second: str) -> None:
    a, b = IndexingMap.parse(first), IndexingMap.parse(second)
    if (a.num_dims, a.num_results) != (b.num_dims, b.num_results):
        assert prove_equal(a, b).holds is False
        return
    ra, rb = a.relation(), b.relation()
    equal, included, empty = prove_equal(a, b), prove_includes(a, b), prove_empty(a)
    assert (equal.holds, included.holds, empty.holds) == (ra == rb, rb <= ra, not ra)
    if included.holds is False:  # the witness is a pair of b that a lacks
        assert included.witness in rb - ra
    if empty.holds is False:
        assert empty.witness in ra


@needs_isl
def test_maps_too_large_to_enumerate_are_decided() -> None:
    """10^12 points: a reshape's split form equals its linear form; off by one is not."""
    text = "(d0, d1) -> ((d0 * 1000000 + d1) floordiv 1000, (d0 * 1000000 + d1) mod 1000), domain: d0 in [0, 999999], d1 in [0, 999999]"
    m = IndexingMap.parse(text)
    assert prove_equal(m, m.simplify()).holds
    shifted = IndexingMap.parse(text.replace("mod 1000)", "mod 1000 + 1)"))
    proof = prove_equal(m, shifted)
    assert proof.holds is False and proof.witness is not None


@needs_isl
def test_unions_and_known_empty_maps() -> None:
    low = IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 4]")
    high = IndexingMap.parse("(d0) -> (d0), domain: d0 in [5, 9]")
    whole = IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 9]")
    assert prove_equal([low, high], whole).holds
    assert prove_includes(whole, low).holds and prove_includes(low, whole).holds is False
    assert prove_empty(IndexingMap.known_empty(1, 0, 1)).holds


@needs_isl
def test_symbols_are_projected_only_when_the_lifted_relations_differ() -> None:
    """A 4 * 10^8-point map of XLA's corpus whose proof, symbols projected first, ran for
    minutes: the lifted relations are equal. With its symbols renumbered the lifted
    relations differ and the projection decides; a shifted result is disproven."""
    text = (
        "()[s0, s1, s2, s3] -> ((s0 * 458752 + s1 + s2 * 4 + s3 * 512) mod 20000), "
        "domain: s0 in [0, 871], s1 in [0, 3], s2 in [0, 127], s3 in [0, 895]"
    )
    m = IndexingMap.parse(text)
    assert prove_equal(m, m.simplify()).holds
    renumbered = IndexingMap.parse(
        "()[s0, s1, s2, s3] -> (s1 + ((s3 * 114688 + s2 + s0 * 128) mod 5000) * 4), "
        "domain: s0 in [0, 895], s1 in [0, 3], s2 in [0, 127], s3 in [0, 871]"
    )
    assert prove_equal(m, renumbered).holds and prove_includes(renumbered, m).holds
    shifted = IndexingMap.parse(text.replace("mod 20000)", "mod 20000 + 1)"))
    proof = prove_equal(m, shifted)
    assert proof.holds is False and proof.witness is not None
    (value,) = proof.witness[1]
    assert value in (0, 20000)  # only the ends of the ranges differ


@needs_isl
def test_a_proof_past_its_time_limit_says_it_was_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    m = IndexingMap.parse("(d0) -> (d0 mod 4), domain: d0 in [0, 3]")
    with monkeypatch.context() as patch:
        patch.setattr(limits, "PROOF_SECONDS", 1e-6)
        proof = prove_equal(m, m.simplify())
    assert proof.holds is None and "limits.PROOF_SECONDS" in proof.reason
    assert prove_equal(m, m.simplify()).holds  # the next proof starts isl again


def test_maps_outside_presburger_arithmetic_are_not_proven() -> None:
    semi = IndexingMap.parse("(d0)[s0] -> (d0 * s0), domain: d0 in [0, 999], s0 in [1, 1000]")
    proof = prove_equal(semi, semi)
    assert proof.holds is None and not proof.ran
    assert "limits.ISL_MAX_CASES" in proof.reason or "not installed" in proof.reason
    zero = IndexingMap.parse("(d0)[s0] -> (d0 floordiv s0), domain: d0 in [0, 9], s0 in [0, 2]")
    proof = prove_equal(zero, zero)  # undefined where s0 = 0
    assert proof.holds is None and ("by 0 (at s0 = 0)" in proof.reason or "not installed" in proof.reason)
    assert prove_empty(IndexingMap.undefined("no rule")).holds is None


def test_without_islpy_every_proof_says_it_was_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exact, "_installed", lambda: False)
    m = IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 9]")
    for proof in (prove_equal(m, m), prove_includes(m, m), prove_empty(m)):
        assert proof.holds is None and "not installed" in proof.reason and "not run" in str(proof)
