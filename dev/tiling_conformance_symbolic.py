"""Checkers of the symbolic-tiling records (``symbolic_tile``, ``tiling_analysis``) of
XLA's tiling corpus; see ``conformance/xla_tiling/README-symbolic.md`` for the format.

``CHECKERS`` maps a record kind to ``record -> (status, detail)`` (status ``pass``,
``fail`` or ``skip``), the interface of ``tiling_conformance.py``. Comparisons are
numeric: our tiles are evaluated at each record's ``evaluations`` vectors.
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.symbolic_tiling import hlo_source
from hlo_indexing.symbolic_tiling.symbolic_tile import NotATile, SymbolicTile, symbolic_tile

from tiling_conformance_analysis import check_tiling_analysis

Result = tuple[str, str]


def _tiled_map(record: dict) -> IndexingMap:
    """The map the record tiles: parsed, or the ROOT's output-to-input map of an operand."""
    source = record["map_from"]
    if "map" in source:
        return IndexingMap.parse(source["map"])
    from hlo_indexing.analysis.fusion import fusion_indexing
    from hlo_indexing.analysis.per_op import output_to_input_indexing

    operand = source["op_output_to_input"]["operand"]
    module = hlo_source.import_hlo(record["hlo"], f"{record['id']}.hlo")
    op = hlo_source.root_op(hlo_source.entry(module))
    indexing = fusion_indexing(op.regions[0], 0) if op.name == "mhlo.fusion" else output_to_input_indexing(op)
    if not 0 <= operand < len(indexing.maps):
        raise ValueError(f"the ROOT ({op.name}) has {len(indexing.maps)} operands, the record asks for operand {operand}")
    maps = list(indexing.maps[operand])
    if not maps:
        raise ValueError(f"no map for operand {operand}")
    _keep_alive.append(module)
    return maps[0]


_keep_alive: list[object] = []


def check_symbolic_tile(record: dict) -> Result:
    """Compare our symbolic tile with XLA's at every ``evaluations`` vector."""
    tiled_map = _tiled_map(record)
    tile = symbolic_tile(tiled_map)
    expected = record.get("expected")
    if expected is None:
        if isinstance(tile, NotATile):
            return "pass", f"no tile, as XLA ({tile.reason})"
        return "fail", "XLA derives no tile, we derive one:\n" + str(tile)
    if isinstance(tile, NotATile):
        return "fail", f"XLA derives a tile, we do not: {tile.reason}"
    if "rt_vars" in expected:
        ours = [(v.bounds.lower, v.bounds.upper) for v in tile.runtime_vars]
        xla = [(v["lo"], v["hi"]) for v in expected["rt_vars"]]
        if ours != xla:
            return "fail", f"runtime variable bounds {ours}, XLA {xla}"
    return _compare_evaluations(tile, record.get("evaluations", []), tiled_map)


def _xla_tile_misses(m: IndexingMap, entry: dict) -> str:
    """An element the map reads from the tile at offset 0 of ``entry``'s sizes that XLA's
    tile (``entry``'s offsets, sizes and strides) lacks, as text; '' when it has all."""
    sizes = entry["tile_sizes"]
    dims = [Variable(Interval(r.lower, min(r.upper, r.lower + t - 1)), v.name, v.origin)
            for r, t, v in zip(m.dim_ranges, sizes, m.dim_vars)]
    rt = entry.get("rt_var_values", [])
    runtime = [Variable(Interval(value, value), v.name, v.origin) for value, v in zip(rt, m.runtime_vars)] or None
    _, images = m.replace(dims=dims, runtimes=runtime).enumerate()
    axes = [{o + k * s for k in range(n)} for o, n, s in zip(entry["offsets"], entry["sizes"], entry["strides"])]
    for element in images.tolist():
        if any(value not in axis for value, axis in zip(element, axes)):
            return f"at tile sizes {sizes} the map reads {tuple(element)}, outside XLA's tile"
    return ""


def _compare_evaluations(tile: SymbolicTile, evaluations: list[dict], m: IndexingMap) -> Result:
    """Equal constraints and, where they hold, equal tiles. Where XLA's constraints hold
    and ours do not, XLA's tile must miss an element the map reads (XLA drops the
    constraints of a term under a constant factor, e.g. the mod of a split reshape after
    a reverse): a documented difference, checked at every such vector."""
    misses = []
    for entry in evaluations:
        sizes = entry["tile_sizes"]
        holds = tile.satisfies_constraints(sizes)
        if holds != entry["constraints_hold"]:
            missed = "" if holds else _xla_tile_misses(m, entry)
            if not missed:
                return "fail", f"at tile sizes {sizes}: constraints hold = {holds}, XLA: {entry['constraints_hold']} (ours: {tile.constraints})"
            misses.append(missed)
            continue
        if not holds:
            continue
        offsets, got_sizes, strides = tile.evaluate(sizes, entry.get("rt_var_values", ()))
        got = {"offsets": list(offsets), "sizes": list(got_sizes)}
        for key, value in got.items():
            if value != entry[key]:
                return "fail", f"at tile sizes {sizes}: {key} {value}, XLA {entry[key]}"
        # A stride matters only where the tile has more than one element: the tiles
        # offset + stride * iota(1) are the same set for every stride.
        if any(a != b and n > 1 for a, b, n in zip(strides, entry["strides"], got_sizes)):
            return "fail", f"at tile sizes {sizes}: strides {list(strides)}, XLA {entry['strides']}"
    if misses:
        return "skip", (f"documented difference, checked: XLA's tile has no constraint where ours has ({tile.constraints}); "
                        f"there it is wrong: {misses[0]} ({len(misses)} such tile sizes); elsewhere the tiles agree")
    return "pass", f"{len(evaluations)} evaluations agree"


CHECKERS: dict[str, Callable[[dict], Result]] = {
    "symbolic_tile": check_symbolic_tile,
    "tiling_analysis": check_tiling_analysis,
}
