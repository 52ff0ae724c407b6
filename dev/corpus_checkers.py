"""Checkers for the two corpora that predate the tiling runner, in its interface
(``CHECKERS``: record kind -> ``(status, detail)``), so that ``dev/run.py conformance``
runs every file under ``../shared/conformance``:

* XLA's indexing corpus (``xla_indexing/*.jsonl``): each record goes through the indexing
  runner (:func:`conformance.run_record`). Its documented differences (our map
  verified exact where XLA's over-approximates or leaves its operand) are reported as
  ``skip`` with the checked relation as the reason: they match XLA's map semantically
  only in the documented sense.
* The tiled-layout vectors (``tiled_layout/vectors.jsonl``, records without a ``kind``;
  :func:`record_kind` names them ``layout_vector``): the shape's padded size, tiled shape,
  and every sample's offset both ways (``linear_index``/``logical_index``) and through the
  lowered affine maps.

The dispatcher (``tiling_conformance.record_kind``) names those vectors ``layout_vector``.
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.errors import HloIndexingError
from hlo_indexing.layout.lowering import linear_offset_map, logical_index_map
from hlo_indexing.layout.tiling import linear_index, logical_index, padded_size, physical_shape
from hlo_indexing.layout.types import Shape

import conformance

#: The record kinds of XLA's indexing corpus.
INDEXING_KINDS = ("output_to_input", "input_to_output", "fusion_output_to_input", "simplify", "compose",
                  "parse_print", "other")
_STATUS = {conformance.PASS: "pass", conformance.FAIL: "fail", conformance.SKIP: "skip"}


def check_indexing(record: dict) -> tuple[str, str]:
    """One record of XLA's indexing corpus, through the indexing runner."""
    outcome = conformance.run_record(record)
    if outcome.status == conformance.DIFF:
        return "skip", f"documented difference, relation checked: {outcome.reason}"
    return _STATUS[outcome.status], outcome.reason or f"{outcome.kind} {outcome.op}: maps agree"


def check_layout_vector(record: dict) -> tuple[str, str]:
    """One tiled-layout vector: sizes, and every sample's offset both ways and through the
    lowered maps."""
    layout = "" if record["layout"] == "{}" else record["layout"]
    text = f"{record['dtype']}[{','.join(map(str, record['shape']))}]{layout}"
    try:
        shape = Shape.parse(text)
        problems = []
        if physical_shape(shape) != tuple(record["tiled_shape"]):
            problems.append(f"tiled shape {physical_shape(shape)} != {tuple(record['tiled_shape'])}")
        if padded_size(shape) != record["padded_elements"]:
            problems.append(f"padded size {padded_size(shape)} != {record['padded_elements']}")
        samples = [tuple(s) for s in record["samples"]]
        forward = linear_offset_map(shape) if samples else None
        inverse = logical_index_map(shape) if samples else None
        for *index, offset in samples:
            found = (linear_index(shape, index), logical_index(shape, offset))
            lowered = (forward.evaluate(index), inverse.evaluate([offset])) if forward and inverse else None
            if found != (offset, tuple(index)) or lowered != ((offset,), tuple(index)):
                problems.append(f"sample {tuple(index)} -> {offset}: got {found}, maps {lowered}")
                break
    except HloIndexingError as exc:
        return "fail", f"{text}: {type(exc).__name__}: {exc}"
    if problems:
        return "fail", f"{text}: " + "; ".join(problems)
    return "pass", f"{text}: {len(samples)} samples agree"


CHECKERS: dict[str, Callable[[dict], tuple[str, str]]] = {kind: check_indexing for kind in INDEXING_KINDS}
CHECKERS["layout_vector"] = check_layout_vector
