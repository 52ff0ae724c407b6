"""The result of the per-op analysis: one set of maps per operand (output -> input) or
per result (input -> output), with the runtime variables' sources."""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_indexing.direction import Direction
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.indexing_map import display_text


@dataclass(frozen=True)
class RuntimeSource:
    """Where a runtime variable ``rtN`` of a map ``m`` is read at run time.

    ``operand`` is the index of the op's operand holding the value and ``source`` names
    its producer as XLA prints it (``parameter(1)``, ``constant(3)``, ``constant`` or an
    op name). ``index_map`` is defined over ``m``'s variables other than its runtime
    variables: its dimensions are ``m``'s dimensions, and its symbols are either none
    (the element read does not depend on ``m``'s range variables) or exactly ``m``'s
    range variables, in order (symbol ``i`` is range variable ``i``). Its domain
    contains every ``(d, s)`` of ``m``'s domain (its ranges may be wider than ``m``'s,
    which simplification may tighten), and it has no runtime variables. Contract: at
    every point ``(d, s, rt)`` of ``m``'s domain, ``rtN`` is derived from the element
    ``index_map(d, s)`` of the operand: it equals that value wherever the value lies in
    ``rtN``'s range (outside, the op clamps it or skips the update).

    Examples: ``dynamic_slice`` output -> operand ``(d0){rt0} -> (d0 + rt0)`` reads its
    start from a scalar, ``(d0) -> ()``; scatter output -> update
    ``(d0, d1)[s0, s1]{rt0} -> (s0, s1)`` (``(s0, s1)`` is an update position that the
    constraints tie to the output index through ``rt0``) reads ``rt0`` from the indices
    row of that update, ``(d0, d1)[s0, s1] -> (s0, 0)``."""

    operand: int
    index_map: IndexingMap
    source: str = ""


@dataclass(frozen=True)
class InstructionIndexing:
    """Per-op indexing maps.

    ``maps[k]`` is the set of maps of operand ``k`` (output -> input) or of result ``k``
    (input -> output); an empty set means "no dependence". ``runtime[k]`` describes the
    runtime variables of the maps in ``maps[k]`` in order (``()`` when they have none).
    ``replica_maps[k]`` (collectives only) maps the index space to the replica that
    holds the element. ``notes`` say why some maps over-approximate (a loop whose trip
    count depends on data), printed last as ``note: ...``.

    ``str()`` prints XLA's operand-level form, e.g.::

        operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]
        operand id = 1 unknown indexing
    """

    maps: tuple[frozenset[IndexingMap], ...]
    runtime: tuple[tuple[RuntimeSource, ...], ...] = ()
    replica_maps: tuple[IndexingMap | None, ...] = ()
    direction: str = field(default=Direction.OUTPUT_TO_INPUT, compare=False)
    notes: tuple[str, ...] = ()

    @property
    def is_unknown(self) -> bool:
        """True when some entry holds an undefined map."""
        return any(m.is_undefined for maps in self.maps for m in maps)

    @property
    def reason(self) -> str:
        """Why some map is undefined ('' when every map is known)."""
        reasons = sorted({m.reason for maps in self.maps for m in maps if m.is_undefined})
        return "; ".join(reasons)

    def __len__(self) -> int:
        return len(self.maps)

    def __getitem__(self, index: int) -> frozenset[IndexingMap]:
        return self.maps[index]

    def __str__(self) -> str:
        lines = []
        for k, maps in enumerate(self.maps):
            if not maps:
                lines.append(f"operand id = {k} no dependence")
            for text in sorted(_map_text(m) for m in maps):
                lines.append(f"operand id = {k} {text}")
            runtime = self.runtime[k] if k < len(self.runtime) else ()
            if runtime:
                lines.append("runtime variables:")
                for i, source in enumerate(runtime):
                    lines.append(f"rt{i}: {source.source or f'operand {source.operand}'}; {source.index_map}")
            replica = self.replica_maps[k] if k < len(self.replica_maps) else None
            if replica is not None:
                lines.append("replica id:")
                lines.append(str(replica))
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def _map_text(m: IndexingMap) -> str:
    return display_text(m)
