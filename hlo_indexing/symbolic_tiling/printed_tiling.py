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

A device ranking orders tilings by estimated time, not by footprint, so one it prints
may have a footprint too large to count (:class:`~.footprint.FootprintLimitError`); it
is printed without one (:meth:`PrintedTiling.uncounted`): its footprint figures are
null in JSON and ``footprint_error`` says why.

Example::

    printed, names = memo.per_body(fusion, key, lambda first: [PrintedTiling.of(f) for f in footprints(first)])
    lines = [p.renamed(names or {}).text for p in printed]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hlo_indexing.symbolic_tiling.exactness import TilingExactness
from hlo_indexing.symbolic_tiling.footprint import Footprint, FootprintLimitError, renamed_json

#: The footprint fields of a tiling's JSON entry (:meth:`~.footprint.Footprint.to_json`)
#: that are null when its footprint is too large to count.
COUNTED_FIELDS = ("num_tiles", "bytes_per_tile", "bytes_read_per_tile", "bytes_written_per_tile", "bytes_moved",
                  "bytes_per_output_element", "padding_waste")


@dataclass(frozen=True)
class PrintedTiling:
    """The ``tile_sizes``' ``footprint`` (its exactness included when computed; None
    when too large to count, then ``error`` says why), ``fields``: its
    :meth:`~.footprint.Footprint.to_json`, and ``text``: its ``str``."""

    tile_sizes: tuple[int, ...]
    footprint: Footprint | None
    fields: dict[str, object]
    text: str
    error: FootprintLimitError | None = None

    @classmethod
    def of(cls, footprint: Footprint) -> "PrintedTiling":
        """``footprint`` written out."""
        return cls(footprint.tile_sizes, footprint, footprint.to_json(), str(footprint))

    @classmethod
    def uncounted(
        cls, tile_sizes: Sequence[int], exactness: TilingExactness, error: FootprintLimitError
    ) -> "PrintedTiling":
        """A tiling whose footprint ``error`` refused to count, with its ``exactness``."""
        fields: dict[str, object] = {"tile_sizes": list(tile_sizes), **dict.fromkeys(COUNTED_FIELDS), "operands": [],
                                     "exactness": exactness.to_json(), "footprint_error": error.message}
        return cls(tuple(tile_sizes), None, fields, f"footprint not counted: {error.message}", error)

    def renamed(self, names: Mapping[str, str]) -> "PrintedTiling":
        """The same tiling for another fusion with the same body, each instruction name
        replaced through ``names`` (those it lacks kept; ``{}``: the same names), equal to
        :meth:`of` of :meth:`~.footprint.Footprint.renamed` without counting or writing
        the figures again. Its ``fields`` are a new copy (a caller may change them)."""
        fields = renamed_json(self.fields, names)
        if self.footprint is None:
            assert self.error is not None, "a tiling without a footprint has the reason"
            error = FootprintLimitError(names.get(self.error.subject, self.error.subject), self.error.detail)
            fields["footprint_error"] = error.message
            return PrintedTiling(self.tile_sizes, None, fields, f"footprint not counted: {error.message}", error)
        footprint = self.footprint.renamed(names)
        text = self.text if footprint.exactness is self.footprint.exactness else str(footprint)
        return PrintedTiling(self.tile_sizes, footprint, fields, text)
