"""The hook through which per-op rules of ops with a body (``mhlo.scan``, and any op
whose maps are those of a region) get the fused maps of that body.

The per-op layer (:mod:`hlo_indexing.ops`) sits below the fused analysis
(:mod:`hlo_indexing.analysis.fusion`), which composes per-op maps; a body's maps are
fused maps, so the rule of an op with a body needs the layer above. It receives it as a
:class:`RegionIndexing` object: :func:`hlo_indexing.ops.dispatch.result_indexing`
takes one as ``regions=``, and :mod:`hlo_indexing.analysis.per_op` (the public per-op
API) passes the fused analysis. Without one, such rules answer without reading the body
(soundly, as documented by each rule).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps.indexing_map import IndexingMap

_T = TypeVar("_T")

#: One set of maps per argument (output->input) or per result (input->output).
MapSets = tuple[frozenset[IndexingMap], ...]

#: Cap on the notes of one region (:meth:`RegionIndexing.notes`).
MAX_NOTES = 8


class ArgumentReached(Exception):
    """A walk asked to stop at a block argument found a map to it that is not known
    empty (:meth:`RegionIndexing.iteration_output_to_input`)."""


class RegionIndexing(Protocol):
    """Fused maps of a region's single block, as the fused analysis computes them."""

    def output_to_input(self, region: ir.Region, result_index: int) -> MapSets:
        """For the block's result ``result_index`` (the terminator's operand), one map
        set per block argument."""
        ...

    def input_to_output(self, region: ir.Region, argument_index: int) -> MapSets:
        """For block argument ``argument_index``, one map set per block result."""
        ...

    def iteration_output_to_input(
        self,
        region: ir.Region,
        result_index: int,
        inductions: tuple[tuple[int, int, int], ...],
        count: int,
        stop: frozenset[int] = frozenset(),
    ) -> MapSets:
        """For a counted loop's body (block argument ``k`` is ``start + step * t`` at
        iteration ``t`` in ``[0, count - 1]`` for each ``(k, start, step)`` of
        ``inductions``): the maps of result ``result_index``, one set per block
        argument, over the result's index space plus a trailing dimension ``t``. With
        ``stop``, raises :class:`ArgumentReached` as soon as a map not known empty is
        found for one of those block arguments (the maps are then not made)."""
        ...

    def values_output_to_input(self, region: ir.Region, result_index: int, values: list) -> MapSets:
        """For the block's result ``result_index``, one map set per value of
        ``values`` (values defined outside the region that it reads)."""
        ...

    def notes(self, region: ir.Region) -> tuple[str, ...]:
        """Why maps through the region may over-approximate: the notes of its ops' maps
        (of ops in the computations they call and the bodies of loops and branches
        too), each naming its op, de-duplicated and at most :data:`MAX_NOTES` (the
        last then says how many were left out)."""
        ...

    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, computed once per analysis for ``key`` (a rule's own results
        that several of its calls share, keyed by the op); every call when the hook
        keeps nothing."""
        ...
