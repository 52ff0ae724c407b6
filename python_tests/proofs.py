"""Proof by isl in the property tests: the simplifier's and the algebra's outputs are
proven to have the relation of their inputs when ``islpy`` is installed
(:mod:`hlo_indexing.maps.exact`); without it the tests keep their enumeration only and
:data:`RUN` stays 0."""

from __future__ import annotations

from collections import Counter

from hlo_indexing import IndexingMap
from hlo_indexing.maps.exact import isl_available, prove_equal

#: Proofs decided by isl ("isl") and not run ("not run": islpy missing or a semi-affine map).
RUN: Counter[str] = Counter()


def assert_proven_equal(before: IndexingMap, after: IndexingMap, what: str = "") -> None:
    """Fail when isl disproves that ``after`` has the relation of ``before``, or, with
    islpy installed, does not decide for maps it can hold (within its bounds)."""
    proof = prove_equal(before, after)
    RUN["isl" if proof.ran else "not run"] += 1
    assert proof.holds is not False, f"{what}\n{before}\n-> {after}\nisl: {proof}"
    if isl_available() and "isl cannot hold" not in proof.reason:
        assert proof.ran, f"{what}\n{before}\n-> {after}\nisl: {proof}"
