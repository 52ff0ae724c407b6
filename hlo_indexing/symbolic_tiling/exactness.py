"""Exactness of a tiling: how much of each operand tile the fused computation reads.

Definition. Take a concrete tiling (flat tile sizes) and a fusion parameter ``p``. A
*tile* of ``p`` is what one program id loads (and, when ``p``'s tiles move with runtime
values, one program id at one combination of those values):

* the **operand tile** ``T`` is the union of the boxes ``offset + stride * iota(size)``
  of ``p``'s tiled instructions at that program, restricted to the elements inside
  ``p`` (lanes hanging over the edge are masked, never loaded: the footprint counts
  the same elements); an instruction whose offsets map leaves the program out (a
  concatenate operand at another operand's programs) has no box there;
* the **read set** ``R`` is the set of elements of ``p`` that the fused indexing maps
  of ``p``'s nodes (tiling parameters -> elements of ``p``) reach from the program's
  box of tiling parameters, within each map's domain (ranges and constraints): the box
  is ``[offset, offset + size)`` along every parameter the program iterates over (the
  output's dimensions, the contracting steps of the dots ``p`` feeds) and
  ``[0, size)`` along the others.

The exactness of one tile is ``|R| / |T|`` (1.0 for an empty tile), that of the whole
output ``sum |R| / sum |T|`` over all tiles: the fraction of the loaded elements that
the computation uses. The tiles are sound (``R`` within ``T``, tested), so it is at
most 1; 1.0 means the tiles load nothing the fused computation does not read. A tile
is a hyper-rectangle at an offset, so a map reading a diagonal reads less than its
tile, and so does a dynamic slice whose output tile hangs over the output's edge (the
operand tile keeps its size while fewer output elements read it).

Counting (:attr:`OperandExactness.method`):

* ``counted``: ``p`` is read through nodes whose maps have no constraints and no
  runtime variables, and each of whose results is ``a * v + c`` of one variable used by
  no other result. Each node's reads are then a product of arithmetic progressions, as
  is each tile box; when at every program one of them holds the others (one node and
  one tile; or an elementwise read and a reduction's row, as in a softmax), both
  counts are products, nothing is enumerated;
* ``enumerated``: otherwise, ``R`` and ``T`` are enumerated per tile (map points,
  image and tile elements), up to :data:`~hlo_indexing.limits.MAX_EXACTNESS_POINTS`
  points in all;
* ``not computed``: past that limit, when ``p``'s nodes lie in the operand regions of
  different dots (different program grids), or when its reads depend on different
  runtime values; :attr:`OperandExactness.reason` says which.

Proof (``prove=True``, with ``islpy``: :mod:`hlo_indexing.maps.exact`). Both sets become
relations from a tile (program id, runtime values) to elements of ``p``, as indexing
maps: ``T`` from each tiled instruction's offsets map plus ``stride * j`` over
``j in [0, size)``, ``R`` from each node's map with its tiling parameters existential
within the program's box. isl proves ``R`` within ``T`` at every tile (soundness) and
decides whether ``T`` is within ``R`` (exactness 1), whatever the sizes: no enumeration
and none of the counting's reasoning. :attr:`OperandExactness.proof` holds the verdict
(``holds`` True: exactness 1 at every tile; False: some tile loads an element nothing
reads); an operand not counted whose exactness isl proves 1 gets method ``proven``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import TimeLimitError
from hlo_indexing.limits import MAX_EXACTNESS_POINTS
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.exact import Proof, prove_empty, prove_includes
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.linear_form import linearize
from hlo_indexing.maps.points import distinct
from hlo_indexing.symbolic_tiling.tiled_computation import (
    TiledComputation,
    TiledInstruction,
    program_id_map,
    tiled_computation,
)
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, TiledNode
from hlo_indexing.symbolic_tiling.time_budget import check_time

COUNTED, ENUMERATED, PROVEN, NOT_COMPUTED = "counted", "enumerated", "proven", "not computed"


@dataclass(frozen=True)
class OperandExactness:
    """The exactness of fusion parameter ``index`` (see the module docstring).
    ``read_per_tile`` and ``covered_per_tile`` hold ``|R|`` and ``|T|`` of every tile
    (program id major, then runtime values); both are empty when not computed."""

    index: int
    name: str
    method: str
    read_per_tile: np.ndarray = field(compare=False, repr=False)
    covered_per_tile: np.ndarray = field(compare=False, repr=False)
    reason: str = ""
    #: isl's verdict on "every element a tile loads is read" (None: not asked).
    proof: Proof | None = field(default=None, compare=False)

    @property
    def computed(self) -> bool:
        """Whether the exactness is known (``method`` is not ``not computed``); the counts
        exist unless ``method`` is ``proven``."""
        return self.method != NOT_COMPUTED

    @property
    def read_elements(self) -> int:
        """``sum |R|`` over all tiles."""
        return int(self.read_per_tile.sum())

    @property
    def tile_elements(self) -> int:
        """``sum |T|`` over all tiles."""
        return int(self.covered_per_tile.sum())

    @property
    def exactness(self) -> float | None:
        """``sum |R| / sum |T|`` over the whole output (1.0 when nothing is loaded);
        None when not computed."""
        if not self.computed:
            return None
        covered = self.tile_elements
        return 1.0 if covered == 0 or self.method == PROVEN else self.read_elements / covered

    def per_tile(self) -> np.ndarray:
        """``|R| / |T|`` of every tile (1.0 for an empty tile)."""
        covered = self.covered_per_tile
        return np.where(covered > 0, self.read_per_tile / np.maximum(covered, 1), 1.0)

    @property
    def worst_tile(self) -> float | None:
        """The least exactness of one tile; None when not computed."""
        if not self.computed:
            return None
        return float(self.per_tile().min(initial=1.0))

    def to_json(self) -> dict[str, object]:
        """``{index, name, method, exactness, worst_tile, read_elements, tile_elements}``
        (the last four null when not computed, with ``reason`` instead; the counts null
        when ``proven``), and ``proof`` (isl's verdict as text) when asked."""
        out: dict[str, object] = {"index": self.index, "name": self.name, "method": self.method}
        counted = self.computed and self.method != PROVEN
        out.update(
            exactness=self.exactness,
            worst_tile=self.worst_tile,
            read_elements=self.read_elements if counted else None,
            tile_elements=self.tile_elements if counted else None,
        )
        if self.reason:
            out["reason"] = self.reason
        if self.proof is not None:
            out["proof"] = str(self.proof)
        return out

    def __str__(self) -> str:
        proof = "" if self.proof is None else f" ({_proof_text(self.proof)})"
        if self.method == PROVEN:
            return f"{self.name} 1{proof}"
        if not self.computed:
            return f"{self.name} not computed ({self.reason}){proof}"
        exactness, worst = self.exactness, self.worst_tile
        text = f"{self.name} {exactness:.3g}"
        return (text if worst == exactness else f"{text} (worst tile {worst:.3g})") + proof


def _proof_text(proof: Proof) -> str:
    if proof.holds is None:
        return f"isl: {proof.reason}"
    return "proven by isl" if proof.holds else "below 1, proven by isl"


@dataclass(frozen=True)
class TilingExactness:
    """The exactness of every fusion parameter read by a tiling, by parameter number."""

    tile_sizes: tuple[int, ...]
    operands: tuple[OperandExactness, ...]

    def to_json(self) -> list[dict[str, object]]:
        """One :meth:`OperandExactness.to_json` per parameter."""
        return [o.to_json() for o in self.operands]

    def renamed(self, names: Mapping[str, str]) -> "TilingExactness":
        """The same exactness with each parameter's name replaced through ``names`` (those
        it lacks kept): for another fusion with the same body. ``self`` when no name
        changes."""
        if all(names.get(o.name, o.name) == o.name for o in self.operands):
            return self
        return replace(self, operands=tuple(replace(o, name=names.get(o.name, o.name)) for o in self.operands))

    def __str__(self) -> str:
        return "exactness " + ", ".join(str(o) for o in self.operands)


def tiling_exactness(
    fusion: TiledFusion, tile_sizes: Sequence[int], *, max_points: int = MAX_EXACTNESS_POINTS, prove: bool = False
) -> TilingExactness:
    """The exactness of flat ``tile_sizes`` (see the module docstring), proven by isl too
    when ``prove``. Raises :class:`~hlo_indexing.errors.TilingError` when they are not a valid
    tiling."""
    return computation_exactness(fusion, tiled_computation(fusion, list(tile_sizes)), max_points=max_points, prove=prove)


#: What the counts of one operand depend on (see :func:`operand_key`).
OperandKey = tuple[object, ...]


def computation_exactness(
    fusion: TiledFusion,
    computation: TiledComputation,
    *,
    max_points: int = MAX_EXACTNESS_POINTS,
    counts: dict[OperandKey, OperandExactness] | None = None,
    prove: bool = False,
) -> TilingExactness:
    """The exactness of a tiled computation of ``fusion`` (made by
    :func:`~.tiled_computation.tiled_computation`, which records its sizes), proven by
    isl too when ``prove`` (see the module docstring). ``counts``: the counts of
    operands met before, by :func:`operand_key` (a compiled optimizer's fusion reads
    dozens of weights through the same maps and tiles: each is counted once), filled in."""
    nodes: dict[int, list[TiledNode]] = {}
    for node in fusion.nodes:
        number = node.parameter_number
        if number is not None:
            nodes.setdefault(number, []).append(node)
    insts = computation.by_parameter()
    operands = []
    for number in sorted(insts):
        key = operand_key(fusion, computation, nodes[number], insts[number], max_points) if counts is not None else None
        found = counts.get(key) if counts is not None and key is not None else None
        operand = None
        if found is None:
            operand = _Operand(fusion, computation, nodes[number], insts[number], max_points)
            found = operand.exactness(number)
            if counts is not None and key is not None and found.computed:  # a spent time budget is this fusion's
                counts[key] = found
        if prove:
            proof = (operand or _Operand(fusion, computation, nodes[number], insts[number], max_points)).proof()
            if not found.computed and proof.holds:
                found = replace(found, method=PROVEN)
            found = replace(found, proof=proof)
        operands.append(replace(found, index=number, name=insts[number][0].name))
    return TilingExactness(computation.tile_sizes, tuple(operands))


def operand_key(
    fusion: TiledFusion, computation: TiledComputation, nodes: list[TiledNode], insts: list[TiledInstruction], max_points: int
) -> OperandKey | None:
    """Everything the counts of one operand read (its maps from the tiling parameters,
    the programs of their dots, its tiles, its shape, the grid and its order, the
    limit), or None when it reads runtime values (their grouping is the fusion's)."""
    if any(node.indexing_map.runtime_vars for node in nodes) or any(i.tile_offsets_indexing.runtime_vars for i in insts):
        return None
    return (
        tuple((node.indexing_map, node.hidden) for node in nodes),
        tuple((i.tile_offsets_indexing, i.tile_sizes, i.tile_strides) for i in insts),
        str(insts[0].node.value.type),
        tuple((p.size, p.contracting) for p in fusion.parameters),
        tuple(computation.tile_sizes),
        computation.schedule,
        max_points,
    )


class _NotComputed(Exception):
    pass


#: Per result of a separable map: (variable column, dims then range variables, or None
#: for a constant; coefficient; constant).
_Progression = tuple[int | None, int, int]


def _progressions(m: IndexingMap) -> list[_Progression] | None:
    """The results of ``m`` as progressions when the map is separable (no constraints,
    no runtime variables, each result ``a * v + c`` of a variable no other result
    uses); None otherwise."""
    if m.constraints or m.runtime_vars:
        return None
    used: set[int] = set()
    out: list[_Progression] = []
    for expr in m.results:
        form = linearize(expr)
        if not form.terms:
            out.append((None, 0, form.constant))
            continue
        if len(form.terms) > 1:
            return None
        ((atom, coeff),) = form.terms.items()
        atom = ax.typed(atom)
        if isinstance(atom, ax.Dim):
            column = atom.position
        elif isinstance(atom, ax.Sym):
            column = m.num_dims + atom.position
        else:
            return None
        if column in used:
            return None
        used.add(column)
        out.append((column, coeff, form.constant))
    return out


def _inside(coeff: int, constant: int, extent: int) -> tuple[int, int]:
    """The interval of ``v`` with ``0 <= coeff * v + constant < extent`` (coeff != 0)."""
    if coeff > 0:
        return -(constant // coeff), (extent - 1 - constant) // coeff
    a = -coeff
    return -((extent - 1 - constant) // a), constant // a


def _strided_inside(offsets: np.ndarray, size: int, stride: int, extent: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the first and last ``j`` in ``[0, size)`` with ``offset + stride * j``
    inside ``[0, extent)`` (a stride-0 tile is one element)."""
    if stride == 0:
        inside = (offsets >= 0) & (offsets < extent) & (size > 0)
        return np.zeros_like(offsets), np.where(inside, 0, -1)
    first = np.maximum(0, -(offsets // stride))
    last = np.minimum(size - 1, (extent - 1 - offsets) // stride)
    return first, last


#: A set of elements per row (program or tile) as a product of arithmetic progressions:
#: ``start``, ``step`` and ``count`` arrays of shape (rows, rank + 1), column 0 a
#: placeholder whose count is 0 for an empty set.
_Products = tuple[np.ndarray, np.ndarray, np.ndarray]


def _stack(columns: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> _Products:
    start, step, count = (np.stack([c[k] for c in columns], axis=1) for k in range(3))
    return start, step, count


def _contains(a: _Products, b: _Products) -> np.ndarray:
    """Per row, whether set ``b`` lies in set ``a`` (both products of progressions)."""
    start_a, step_a, count_a = a
    start_b, step_b, count_b = b
    step = np.where(step_a == 0, 1, step_a)
    inside = (start_b >= start_a) & (start_b + step_b * (count_b - 1) <= start_a + step_a * (count_a - 1))
    aligned = ((start_b - start_a) % step == 0) & ((count_b == 1) | (step_b % step == 0))
    empty_b = (count_b == 0).any(axis=1)
    holds: np.ndarray = empty_b | ((count_a > 0) & inside & aligned).all(axis=1)
    return holds


def _union_count(sets: list[_Products]) -> np.ndarray | None:
    """Per row, the size of the union of ``sets`` when at every row one of them holds
    all the others (one set; an element and its row; the tiles of a softmax's
    parameter); None otherwise."""
    found = np.full(len(sets[0][0]), -1, np.int64)
    for a in sets:
        holds = found < 0
        for b in sets:
            if b is not a:
                holds &= _contains(a, b)
        found = np.where(holds, a[2].prod(axis=1), found)
    return None if (found < 0).any() else found


def _empty_domain(m: IndexingMap) -> bool:
    """Whether ``m`` is known empty or has a variable with an empty range."""
    return m.is_known_empty() or any(v.bounds.is_empty for v in (*m.dim_vars, *m.symbol_vars))


def _narrow(constraints: dict[ir.AffineExpr, Interval], expr: ir.AffineExpr, interval: Interval) -> None:
    """Constrain ``expr`` to ``interval`` too (intersected with a constraint it has)."""
    expr = ax.typed(expr)
    constraints[expr] = constraints[expr].intersect(interval) if expr in constraints else interval


class _Operand:
    """The counts of one parameter (see :func:`computation_exactness`)."""

    def __init__(
        self,
        fusion: TiledFusion,
        computation: TiledComputation,
        nodes: list[TiledNode],
        insts: list[TiledInstruction],
        max_points: int,
    ):
        self.fusion, self.nodes, self.insts = fusion, nodes, insts
        self.limit, self.spent = max_points, 0
        self.name = insts[0].name
        self.shape = tuple(ir.RankedTensorType(insts[0].node.value.type).shape)
        self.elements = math.prod(self.shape)
        self.sizes = computation.tile_sizes
        self.schedule = computation.schedule

    def proof(self) -> Proof:
        """isl's verdict on ``T`` within ``R`` at every tile (see the module docstring);
        a disproof of ``R`` within ``T`` (unsound tiles) says so instead."""
        grids = {node.hidden for node in self.nodes}
        if len(grids) != 1:
            return Proof(None, "read by the programs of different dots")
        try:
            runtime = self._runtime_ranges()
        except _NotComputed as exc:
            return Proof(None, str(exc))
        offsets_map, programs = program_id_map(self.fusion.parameters, self.sizes, self.schedule, grids.pop())
        ctx = offsets_map.context
        keys = [key for key, _ in runtime]
        tile_vars = [Variable(Interval(0, programs - 1), "pid_0")] + [Variable(bounds) for _, bounds in runtime]
        read = [
            self._read_relation(node.indexing_map, offsets_map, keys, tile_vars, ctx)
            for node in self.nodes
            if not _empty_domain(node.indexing_map)
        ]
        loaded = [
            self._tile_relation(inst, keys, tile_vars, ctx)
            for inst in self.insts
            if all(n > 0 for n in inst.tile_sizes) and not _empty_domain(inst.tile_offsets_indexing)
        ]
        if not loaded:
            return Proof(True, "no tile loads an element")
        if not read:
            return prove_empty(loaded)
        sound = prove_includes(loaded, read)
        if sound.holds is False:
            return Proof(None, f"the tiles miss an element read ({sound})")
        return prove_includes(read, loaded)

    def _inside(self, results: Sequence[ir.AffineExpr], constraints: dict[ir.AffineExpr, Interval]) -> None:
        """Constrain each of ``results`` (an element index of the operand) to its extent."""
        for e, n in zip(results, self.shape):
            _narrow(constraints, e, Interval(0, n - 1))

    def _runtime_dims(self, variables: Sequence[Variable], keys: list[object], ctx: ir.Context) -> list[ir.AffineExpr]:
        """The tile dimension (``1 + position of its value``) of each runtime variable."""
        return [ax.dim(1 + keys.index(self._value(v)), ctx) for v in variables]

    def _read_relation(
        self, m: IndexingMap, offsets_map: IndexingMap, keys: list[object], tile_vars: list[Variable], ctx: ir.Context
    ) -> IndexingMap:
        """``R`` of one node as a map from a tile (program id, runtime values) to the
        elements it reads: the node's tiling parameters and range variables are range
        variables, each parameter within the program's box."""
        params = [ax.symbol(c, ctx) for c in range(m.num_dims)]
        ranges = [ax.symbol(m.num_dims + j, ctx) for j in range(len(m.range_vars))]
        symbols = ranges + self._runtime_dims(m.runtime_vars, keys, ctx)
        results = [ax.substitute(e, params, symbols) for e in m.results]
        constraints: dict[ir.AffineExpr, Interval] = {}
        for e, interval in m.constraints.items():
            _narrow(constraints, ax.substitute(e, params, symbols), interval)
        for c, (param, size) in enumerate(zip(params, self.sizes)):
            _narrow(constraints, ax.add(param, ax.mul(offsets_map.results[c], -1)), Interval(0, size - 1))
        for dim, v in zip(self._runtime_dims(m.runtime_vars, keys, ctx), m.runtime_vars):
            _narrow(constraints, dim, v.bounds)
        self._inside(results, constraints)
        return IndexingMap.from_exprs(
            tile_vars, results, list(m.dim_vars) + list(m.range_vars), constraints=constraints, context=ctx
        )

    def _tile_relation(self, inst: TiledInstruction, keys: list[object], tile_vars: list[Variable], ctx: ir.Context) -> IndexingMap:
        """``T`` of one tiled instruction as a map from a tile to the elements its box
        holds inside the operand (``j`` per dimension a range variable)."""
        m = inst.tile_offsets_indexing
        runtime = self._runtime_dims(m.runtime_vars, keys, ctx)
        pid = [ax.dim(0, ctx)]
        offsets = [ax.substitute(e, pid, runtime) for e in m.results]
        results = [ax.add(o, ax.mul(ax.symbol(d, ctx), s)) for d, (o, s) in enumerate(zip(offsets, inst.tile_strides))]
        constraints: dict[ir.AffineExpr, Interval] = {}
        for e, interval in m.constraints.items():
            _narrow(constraints, ax.substitute(e, pid, runtime), interval)
        for dim, v in zip(pid + runtime, m.dim_vars + m.runtime_vars):
            _narrow(constraints, dim, v.bounds)
        self._inside(results, constraints)
        steps = [Variable(Interval(0, n - 1)) for n in inst.tile_sizes]
        return IndexingMap.from_exprs(tile_vars, results, steps, constraints=constraints, context=ctx)

    def exactness(self, number: int) -> OperandExactness:
        empty = np.zeros(0, np.int64)
        try:
            method, read, covered = self._counts()
        except _NotComputed as exc:
            return OperandExactness(number, self.name, NOT_COMPUTED, empty, empty, str(exc))
        return OperandExactness(number, self.name, method, read, covered)

    def _spend(self, points: int, what: str) -> None:
        try:
            check_time(f"the exactness of {what}")
        except TimeLimitError as exc:
            raise _NotComputed(exc.message) from None
        self.spent += points
        if self.spent > self.limit:
            raise _NotComputed(f"{what}: more than {self.limit} points to enumerate (limits.MAX_EXACTNESS_POINTS)")

    def _counts(self) -> tuple[str, np.ndarray, np.ndarray]:
        grids = {node.hidden for node in self.nodes}
        if len(grids) != 1:
            raise _NotComputed("read by the programs of different dots")
        offsets_map, self.programs = program_id_map(self.fusion.parameters, self.sizes, self.schedule, grids.pop())
        self.runtime = self._runtime_ranges()
        self.repeats = math.prod(r.size for _, r in self.runtime)
        self.tiles = self.programs * self.repeats
        self._spend(self.tiles, "tiles (program ids times runtime values)")
        self.offsets = offsets_map.enumerate(max_points=self.programs)[1]
        progressions = [_progressions(node.indexing_map) for node in self.nodes]
        tile_offsets = [self._tile_offsets(inst) for inst in self.insts]
        read, covered = None, _union_count([self._tile_products(inst, *o) for inst, o in zip(self.insts, tile_offsets)])
        separable = [(node, p) for node, p in zip(self.nodes, progressions) if p is not None]
        if len(separable) == len(self.nodes) and not self.runtime:
            read = _union_count([self._read_products(node.indexing_map, p) for node, p in separable])
        if read is not None and covered is not None:
            return COUNTED, read, covered
        if read is None:
            read_keys = []
            for node, progression in zip(self.nodes, progressions):
                if progression is not None and not self.runtime:
                    read_keys.append(self._separable_read_keys(node.indexing_map, progression))
                else:
                    read_keys.append(self._enumerated_read_keys(node.indexing_map))
            read = self._per_tile(read_keys)
        if covered is None:
            covered = self._per_tile([self._tile_keys(inst, *o) for inst, o in zip(self.insts, tile_offsets)])
        return ENUMERATED, read, covered

    def _value(self, variable: Variable) -> object:
        """What a runtime variable reads: the value it names in the fusion (two
        variables reading one value are one runtime value), else its origin."""
        return self.fusion.runtime_sources.get(variable.origin, variable.origin)

    def _runtime_ranges(self) -> list[tuple[object, Interval]]:
        """The runtime values the reads depend on, in order of appearance, each over
        the hull of its variables' ranges (every node must read the same ones; tiles
        may depend on fewer)."""
        ranges: dict[object, Interval] = {}
        used = []
        for node in self.nodes:
            variables = node.indexing_map.runtime_vars
            used.append({self._value(v) for v in variables})
            for v in variables:
                key = self._value(v)
                ranges[key] = ranges[key].hull(v.bounds) if key in ranges else v.bounds
        if any(u != used[0] for u in used):
            raise _NotComputed("its reads depend on different runtime values")
        for inst in self.insts:
            if any(self._value(v) not in ranges for v in inst.tile_offsets_indexing.runtime_vars):
                raise _NotComputed("its tiles depend on runtime values its reads do not")
        return list(ranges.items())

    def _tile_columns(self) -> tuple[np.ndarray, dict[object, np.ndarray]]:
        """Per tile: the program id and the value of each runtime variable."""
        index = np.arange(self.tiles, dtype=np.int64)
        pid, rest = index // self.repeats, index % self.repeats
        values = {}
        for key, bounds in reversed(self.runtime):
            values[key] = rest % bounds.size + bounds.lower
            rest = rest // bounds.size
        return pid, values

    def _tile_offsets(self, inst: TiledInstruction) -> tuple[np.ndarray, np.ndarray]:
        """Per tile, the offsets of ``inst``'s box (one row per tile) and whether the
        tile has that box: its program id and runtime values lie in the domain of the
        offsets map (a concatenate operand's programs are those of its region)."""
        m = inst.tile_offsets_indexing
        pid, values = self._tile_columns()
        symbols = [values[self._value(v)] for v in m.runtime_vars]
        present = np.ones(self.tiles, bool)
        for column, variable in zip([pid] + symbols, m.dim_vars + m.runtime_vars):
            present &= (column >= variable.bounds.lower) & (column <= variable.bounds.upper)
        for expr, interval in m.constraints.items():
            value = ax.evaluate_array(expr, [pid], symbols, present)
            present &= (value >= interval.lower) & (value <= interval.upper)
        columns = [np.broadcast_to(ax.evaluate_array(e, [pid], symbols, present), pid.shape) for e in m.results]
        offsets = np.stack(columns, axis=1) if columns else np.zeros((self.tiles, 0), np.int64)
        return offsets, present

    def _variable_bounds(self, m: IndexingMap, column: int) -> tuple[np.ndarray, np.ndarray]:
        """Per program, the interval of a map variable within the program's box."""
        if column < m.num_dims:
            bounds = m.dim_ranges[column]
            lower = np.maximum(self.offsets[:, column], bounds.lower)
            upper = np.minimum(self.offsets[:, column] + self.sizes[column] - 1, bounds.upper)
            return lower, upper
        bounds = m.symbol_ranges[column - m.num_dims]
        return np.full(self.programs, bounds.lower, np.int64), np.full(self.programs, bounds.upper, np.int64)

    def _progression_bounds(
        self, m: IndexingMap, progressions: list[_Progression]
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Whether each program's box meets the map's domain, and per result the
        interval of its variable (within the box and mapping inside the operand)."""
        nonempty = np.ones(self.programs, bool)
        for variable in range(m.num_dims + len(m.range_vars)):
            lower, upper = self._variable_bounds(m, variable)
            nonempty &= lower <= upper
        out = []
        for (column, coeff, constant), extent in zip(progressions, self.shape):
            if column is None:
                inside = 0 <= constant < extent
                out.append((np.zeros(self.programs, np.int64), np.full(self.programs, 0 if inside else -1, np.int64)))
                continue
            lower, upper = self._variable_bounds(m, column)
            low, high = _inside(coeff, constant, extent)
            out.append((np.maximum(lower, low), np.minimum(upper, high)))
        return nonempty, out

    def _read_products(self, m: IndexingMap, progressions: list[_Progression]) -> _Products:
        """Per program, the elements a separable map reads as a product of
        progressions (see :data:`_Products`)."""
        nonempty, bounds = self._progression_bounds(m, progressions)
        columns = [(np.zeros(self.programs, np.int64), np.zeros(self.programs, np.int64), nonempty.astype(np.int64))]
        for (lower, upper), (column, coeff, constant) in zip(bounds, progressions):
            count = np.maximum(0, upper - lower + 1)
            start = coeff * np.where(coeff > 0, lower, upper) + constant
            columns.append((start, np.full(self.programs, abs(coeff), np.int64), count))
        return _stack(columns)

    def _tile_products(self, inst: TiledInstruction, offsets: np.ndarray, present: np.ndarray) -> _Products:
        """Per tile, the elements of ``inst``'s box inside the operand as a product of
        progressions (see :data:`_Products`)."""
        columns = [(np.zeros(self.tiles, np.int64), np.zeros(self.tiles, np.int64), present.astype(np.int64))]
        for d, (n, s, extent) in enumerate(zip(inst.tile_sizes, inst.tile_strides, self.shape)):
            first, last = _strided_inside(offsets[:, d], n, s, extent)
            columns.append((offsets[:, d] + s * first, np.full(self.tiles, s, np.int64), np.maximum(0, last - first + 1)))
        return _stack(columns)

    def _linear(self, index: Sequence[np.ndarray]) -> np.ndarray:
        """Row-major linear index of element indices (arrays broadcast together)."""
        linear: np.ndarray = np.zeros((), np.int64)
        for i, extent in zip(index, self.shape):
            linear = linear * extent + i
        return linear

    def _separable_read_keys(self, m: IndexingMap, progressions: list[_Progression]) -> np.ndarray:
        """``tile * elements + linear index`` of every element read (no runtime
        variables: a tile is a program), enumerated as products of progressions."""
        nonempty, bounds = self._progression_bounds(m, progressions)
        lengths = [max(0, int((upper - lower + 1).max(initial=0))) for lower, upper in bounds]
        self._spend(self.programs * math.prod(lengths), "elements read")
        rank = len(bounds)
        index, mask = [], nonempty.reshape((-1,) + (1,) * rank)
        for r, ((lower, upper), (column, coeff, constant), n) in enumerate(zip(bounds, progressions, lengths)):
            shape = [1] * (rank + 1)
            shape[0], shape[r + 1] = self.programs, n
            j = np.arange(n, dtype=np.int64)
            values = lower[:, None] + j[None, :]
            mask = mask & (values <= upper[:, None]).reshape(shape)
            index.append((values * coeff + constant if column is not None else np.full_like(values, constant)).reshape(shape))
        keys = np.arange(self.programs, dtype=np.int64).reshape((-1,) + (1,) * rank) * self.elements + self._linear(index)
        found: np.ndarray = np.broadcast_to(keys, mask.shape)[mask]
        return found

    def _enumerated_read_keys(self, m: IndexingMap) -> np.ndarray:
        """``tile * elements + linear index`` of every element read, from the map's
        points, each assigned to the program whose box holds it."""
        size = m.domain_size()
        self._spend(size, "points of a map")
        points, images = m.enumerate(max_points=max(size, 1))
        sizes = np.array(self.sizes, np.int64)
        grid = [-(-p.size // s) for p, s in zip(self.fusion.parameters, self.sizes)]
        self._spend(math.prod(grid), "tile grid")
        lookup = np.full(math.prod(grid), -1, np.int64)
        lookup[self._grid_index(self.offsets, sizes, grid)] = np.arange(self.programs)
        pid = lookup[self._grid_index(points[:, : m.num_dims], sizes, grid)]
        keep = (pid >= 0) & ((images >= 0) & (images < np.array(self.shape, np.int64))).all(axis=1)
        tile = pid
        first = m.num_dims + len(m.range_vars)
        columns: dict[object, list[int]] = {}
        for j, v in enumerate(m.runtime_vars):
            columns.setdefault(self._value(v), []).append(first + j)
        for key, bounds in self.runtime:
            value = points[:, columns[key][0]]
            for other in columns[key][1:]:  # variables reading one value agree
                keep &= points[:, other] == value
            tile = tile * bounds.size + (value - bounds.lower)
        found: np.ndarray = (tile * self.elements + self._linear(list(images.T)))[keep]
        return found

    @staticmethod
    def _grid_index(index: np.ndarray, sizes: np.ndarray, grid: list[int]) -> np.ndarray:
        """The row-major number, in ``grid``, of the box holding each row of ``index``
        (boxes of ``sizes``); all 0 for a scalar output (no tiling parameter)."""
        if not grid:
            return np.zeros(len(index), np.int64)
        found: np.ndarray = np.ravel_multi_index(tuple((index // sizes).T), grid)
        return found

    def _tile_keys(self, inst: TiledInstruction, offsets: np.ndarray, present: np.ndarray) -> np.ndarray:
        """``tile * elements + linear index`` of every element of ``inst``'s boxes
        inside the operand."""
        self._spend(self.tiles * math.prod(inst.tile_sizes), "tile elements")
        rank = len(self.shape)
        index, mask = [], present.reshape((-1,) + (1,) * rank)
        for d, (n, s, extent) in enumerate(zip(inst.tile_sizes, inst.tile_strides, self.shape)):
            shape = [1] * (rank + 1)
            shape[0], shape[d + 1] = self.tiles, n
            values = offsets[:, d : d + 1] + s * np.arange(n, dtype=np.int64)[None, :]
            mask = mask & ((values >= 0) & (values < extent)).reshape(shape)
            index.append(values.reshape(shape))
        keys = np.arange(self.tiles, dtype=np.int64).reshape((-1,) + (1,) * rank) * self.elements + self._linear(index)
        found: np.ndarray = np.broadcast_to(keys, mask.shape)[mask]
        return found

    def _per_tile(self, keys: list[np.ndarray]) -> np.ndarray:
        """Distinct elements per tile."""
        unique = distinct(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
        return np.bincount(unique // max(self.elements, 1), minlength=self.tiles).astype(np.int64)
