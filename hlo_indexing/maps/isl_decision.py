"""The isl side of proof by isl (:mod:`hlo_indexing.maps.exact`): equality, inclusion
and emptiness of relations given as isl text, answered where
:mod:`~hlo_indexing.maps.exact` runs it (the isolation server, under
``limits.PROOF_SECONDS``). It needs ``islpy`` (the optional ``exact`` extra): only the
isolation server imports it, by name, when islpy is installed.

Each relation arrives *lifted*: ``[d0, .., s0, ..] -> [o0, ..]``, the symbols as inputs
after the ``num_dims`` dimensions; the relation of the maps is its projection onto
``[d0, ..] -> [o0, ..]``. Equal (included) lifted relations have equal (included)
projections, so the lifted question is asked first; only when it fails are the symbols
projected out (an exact answer, but one isl may take long to give). Emptiness is the
same lifted or projected.

An :data:`Answer` is ``(holds, reason, witness)``: ``holds`` None when isl gave up
within ``limits.ISL_MAX_OPERATIONS`` or failed (``reason`` says so); ``witness`` a ``(dims, results)`` pair of one
relation that the other lacks, or of a relation shown non-empty.
"""

from __future__ import annotations

import functools
from typing import Any

import islpy as isl

from hlo_indexing import limits

#: ``(holds, reason, witness)``, see the module docstring.
Answer = tuple[bool | None, str, tuple[tuple[int, ...], tuple[int, ...]] | None]

QUESTIONS = ("equal", "includes", "empty")


@functools.cache
def _context() -> Any:
    """The isl context of every proof, with isl's operation budget."""
    context = isl.Context()
    context.set_max_operations(limits.ISL_MAX_OPERATIONS)
    return context


def _witness(relation: Any, num_dims: int, skipped: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """One pair of the non-empty isl relation ``relation``: its first ``num_dims``
    inputs and its outputs (the ``skipped`` inputs after the dimensions dropped)."""
    point = relation.wrap().sample_point()
    if point.is_void():
        return None
    size = relation.wrap().dim(isl.dim_type.set)
    values = [point.get_coordinate_val(isl.dim_type.set, i).to_python() for i in range(size)]
    return tuple(values[:num_dims]), tuple(values[num_dims + skipped :])


def _projected(relation: Any, num_dims: int, num_symbols: int) -> Any:
    return relation.project_out(isl.dim_type.in_, num_dims, num_symbols)


def _decide(question: str, relations: list[Any], num_dims: int, num_symbols: int) -> Answer:
    if question == "empty":
        (relation,) = relations
        if relation.is_empty():
            return True, "", None
        return False, "not empty", _witness(relation, num_dims, num_symbols)
    first, second = relations
    if question == "equal":
        if first.is_equal(second):
            return True, "", None
        first, second = (_projected(r, num_dims, num_symbols) for r in relations)
        if first.is_equal(second):
            return True, "", None
        extra = first.subtract(second)
        if not extra.is_empty():
            return False, "the first has a pair the second lacks", _witness(extra, num_dims, 0)
        return False, "the second has a pair the first lacks", _witness(second.subtract(first), num_dims, 0)
    outer, inner = first, second
    if inner.is_subset(outer):
        return True, "", None
    outer, inner = (_projected(r, num_dims, num_symbols) for r in relations)
    if inner.is_subset(outer):
        return True, "", None
    return False, "not included", _witness(inner.subtract(outer), num_dims, 0)


def decide(question: str, texts: list[str], num_dims: int, num_symbols: int) -> Answer:
    """``question`` on the lifted relations ``texts`` (isl's syntax, ``num_dims``
    dimensions then ``num_symbols`` symbols as inputs): ``equal`` (two texts, the same
    relation), ``includes`` (the first holds the second) or ``empty`` (one text)."""
    if question not in QUESTIONS:
        raise ValueError(f"unknown question '{question}' (one of {', '.join(QUESTIONS)})")
    context = _context()
    context.reset_operations()
    try:
        relations = [isl.Map.read_from_str(context, text) for text in texts]
        return _decide(question, relations, num_dims, num_symbols)
    except isl.Error as exc:
        text = str(exc).lower()
        if "quota" in text or "operations" in text:
            return None, f"isl gave up after {limits.ISL_MAX_OPERATIONS} operations (limits.ISL_MAX_OPERATIONS)", None
        return None, f"isl failed: {exc}", None
