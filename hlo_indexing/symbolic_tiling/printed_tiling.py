"""A ranked tiling as the tilings reports print it: its footprint (with its exactness),
the footprint's JSON fields and its text, built once per distinct body and renamed for
every other fusion with that body (:meth:`PrintedTiling.renamed`).

A compiled training step repeats its bodies under other instruction names (the 8-layer
step of ``benchmarks/jax_training_step.py`` at ``ISSUE_28``: 724 fusions, 89 distinct
bodies); the reports (:mod:`.tilings_report`,
:mod:`hlo_indexing.cost_model.device_report`) keep one list of printed tilings per body
in their :class:`~.shared_bodies.TilingMemo` (:meth:`~.shared_bodies.TilingMemo.per_body`)
and rename it for each fusion, instead of building, counting and writing each fusion's
footprints again.

Example::

    printed, names = memo.per_body(fusion, key, lambda first: [PrintedTiling.of(f) for f in footprints(first)])
    lines = [p.renamed(names or {}).text for p in printed]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hlo_indexing.symbolic_tiling.footprint import Footprint, renamed_json


@dataclass(frozen=True)
class PrintedTiling:
    """``footprint`` (its exactness included when computed), ``fields``: its
    :meth:`~.footprint.Footprint.to_json`, and ``text``: its ``str``."""

    footprint: Footprint
    fields: dict[str, object]
    text: str

    @classmethod
    def of(cls, footprint: Footprint) -> "PrintedTiling":
        """``footprint`` written out."""
        return cls(footprint, footprint.to_json(), str(footprint))

    def renamed(self, names: Mapping[str, str]) -> "PrintedTiling":
        """The same tiling for another fusion with the same body, each instruction name
        replaced through ``names`` (those it lacks kept; ``{}``: the same names), equal to
        :meth:`of` of :meth:`~.footprint.Footprint.renamed` without counting or writing
        the figures again. Its ``fields`` are a new copy (a caller may change them)."""
        footprint = self.footprint.renamed(names)
        text = self.text if footprint.exactness is self.footprint.exactness else str(footprint)
        return PrintedTiling(footprint, renamed_json(self.fields, names), text)
