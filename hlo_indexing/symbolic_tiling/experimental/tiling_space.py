"""The tiling space of a fused computation (XLA's experimental ``TilingSpace``).

Dimensions: the output dimensions of the roots (``parallel``), then, walking the
computation from the roots, the contracting dimensions of dots and the reduced
dimensions of reductions, the kernel spatial and input-feature dimensions of
convolutions (``sequential``; ragged dots add their group / ragged dimensions). Runtime variables: one per index operand of each dynamic slice (bounds
``[0, operand_dim - slice_size]``) and the group size (and group start) of ragged dots.
Tile ids ``tid_i`` range over ``[0, ceil(size_i / ts_i) - 1]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_indexing.errors import UnsupportedError
from hlo_indexing.symbolic_tiling.experimental.convolution import conv_labels
from hlo_indexing.errors import TilingError
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import Computation, HloGraph, Instruction, first_array
from hlo_indexing.symbolic_tiling.experimental.simplify import simplify
from hlo_indexing.symbolic_tiling.experimental.tile import DimTile, Tile, tid, ts
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr


@dataclass
class DimensionInfo:
    """One dimension: ``dim_position`` is the output dimension of ``hlo`` for parallel
    dimensions, ``output_rank + k`` for the k-th sequential dimension of ``hlo``."""

    index: int
    type: str
    size: int
    hlo: Instruction
    dim_position: int
    tile_size: int | None = None


@dataclass
class RTVarInfo:
    """A runtime variable: ``operand_id`` of ``owner`` (``-1``: derived, e.g. the group
    start of a ragged dot) gives its value, within ``bounds``."""

    index: int
    bounds: tuple[int, int]
    owner: Instruction
    operand_id: int
    hlo: Instruction | None


@dataclass
class TilingSpace:
    """Dimensions, runtime variables and root tiles of a computation."""

    dimensions: list[DimensionInfo] = field(default_factory=list)
    rt_vars: list[RTVarInfo] = field(default_factory=list)
    roots: list[Instruction] = field(default_factory=list)
    root_dims: list[list[int]] = field(default_factory=list)

    @property
    def num_dimensions(self) -> int:
        """Number of dimensions."""
        return len(self.dimensions)

    def dimension(self, hlo: Instruction, position: int) -> DimensionInfo:
        """The dimension created for ``hlo`` at ``position`` (KeyError if none)."""
        for d in self.dimensions:
            if d.hlo is hlo and d.dim_position == position:
                return d
        raise KeyError(f"no tiling dimension {position} of {hlo.name}")

    def rt_var(self, owner: Instruction, operand_id: int) -> RTVarInfo:
        """The runtime variable of ``owner``'s operand ``operand_id``."""
        for v in self.rt_vars:
            if v.owner is owner and v.operand_id == operand_id:
                return v
        raise KeyError(f"no runtime variable for operand {operand_id} of {owner.name}")

    def empty_tile(self, dims: list[DimTile] | tuple[DimTile, ...] = ()) -> Tile:
        """A tile in this space."""
        return Tile(self.num_dimensions, len(self.rt_vars), tuple(dims))

    def dim_tile(self, info: DimensionInfo) -> DimTile:
        """The default tile of a dimension: ``tid * ts`` (``0`` when a concrete tile
        size covers the dimension), size ``ts``, stride 1, bound = dimension size."""
        if info.tile_size is None:
            return DimTile.of(tid(info.index) * ts(info.index), ts(info.index), 1, info.size)
        offset: Expr | int = 0 if info.tile_size >= info.size else tid(info.index) * info.tile_size
        return DimTile.of(offset, info.tile_size, 1, info.size)

    def root_tiles(self) -> list[Tile]:
        """One tile per root, over its parallel dimensions."""
        return [self.empty_tile([self.dim_tile(self.dimensions[i]) for i in dims]) for dims in self.root_dims]

    def assign_tile_sizes(self, sizes: list[int]) -> None:
        """Fix the tile sizes (one per dimension)."""
        if len(sizes) != self.num_dimensions:
            raise UnsupportedError(f"{len(sizes)} tile sizes for {self.num_dimensions} dimensions")
        for d, size in zip(self.dimensions, sizes):
            d.tile_size = size

    def tile_id_bounds(self) -> dict[str, tuple[int, int]]:
        """``tid_i`` ranges for concrete tile sizes."""
        return {f"tid_{d.index}": (0, -(-d.size // d.tile_size) - 1)
                for d in self.dimensions if d.tile_size}

    def variable_bounds(self) -> dict[str, tuple[int, int]]:
        """Bounds of tile ids (concrete tile sizes only) and runtime variables."""
        out = self.tile_id_bounds()
        out.update({f"rt_{v.index}": v.bounds for v in self.rt_vars})
        return out

    def simplify_expression(self, expr: Expr) -> Expr:
        """``expr`` simplified under :meth:`variable_bounds` (see :mod:`simplify`)."""
        return simplify(expr, self.variable_bounds())

    def simplify_tile(self, tile: Tile) -> Tile:
        """Every expression of ``tile`` simplified under :meth:`variable_bounds`."""
        bounds = self.variable_bounds()

        def dims(ds: tuple[DimTile, ...]) -> tuple[DimTile, ...]:
            return tuple(DimTile(*(simplify(e, bounds) for e in d.exprs())) for d in ds)

        return Tile(tile.num_dims, tile.num_rt, dims(tile.dims), None if tile.replica is None else dims(tile.replica))

    def concretize(self, tile: Tile) -> Tile:
        """``tile`` with the assigned tile sizes substituted and ``tid_i`` set to 0 where
        the tile covers the dimension."""
        values: dict[str, Expr | int] = {}
        for d in self.dimensions:
            if d.tile_size is not None:
                values[f"ts_{d.index}"] = d.tile_size
                if d.tile_size >= d.size:
                    values[f"tid_{d.index}"] = 0
        return tile.substitute(values)

    def to_string(self) -> str:
        """XLA's ``TilingSpace::ToString``: dimensions (with tile sizes once assigned),
        runtime variables (when any), root tiles (concrete tile sizes substituted)."""
        lines = ["Dimensions:"]
        for d in self.dimensions:
            size = "" if d.tile_size is None else f" tile size: {d.tile_size}"
            lines.append(f"{d.index} type: {d.type} size: {d.size}{size} dim ID:{d.dim_position} hlo: {d.hlo.text}")
        if self.rt_vars:
            lines.append("Runtime variables:")
            for v in self.rt_vars:
                source = v.hlo.text if v.hlo is not None else "(derived)"
                lines.append(f"{v.index} bounds: [{v.bounds[0]}, {v.bounds[1]}] hlo: {source}")
        lines.append("Root tiles:")
        for i, tile in enumerate(self.root_tiles()):
            lines.append(f"{i} root tile:  {self.simplify_tile(self.concretize(tile)).to_string(False)}")
        return "\n".join(lines)


def _roots(graph: HloGraph, computation: Computation) -> tuple[Computation, list[Instruction]]:
    root = computation.root
    if root.opcode == "fusion":
        computation = graph.called(root)
        root = computation.root
    if root.opcode == "tuple":
        return computation, list(root.operands)
    return computation, [root]


def create_tiling_space(graph: HloGraph, *, instruction: Instruction | None = None,
                        triton_multi_output: bool = False, same_shape_multi_output: bool = False) -> TilingSpace:
    """The tiling space of the entry computation's root (of its fused computation when the
    root is a fusion), or of ``instruction`` alone (XLA's ``ForInstruction``).

    Raises TilingError (``UNIMPLEMENTED``) for several roots without a multi-output flag,
    as XLA does."""
    space = TilingSpace()
    if instruction is not None:
        members = {id(instruction)}
        roots = [instruction]
    else:
        computation, roots = _roots(graph, graph.entry_computation)
        members = {id(i) for i in computation.instructions}
    if len(roots) > 1 and not (triton_multi_output or same_shape_multi_output):
        raise TilingError("UNIMPLEMENTED", "TilingSpace does not support fusions with multiple roots.")
    shared = same_shape_multi_output and len({first_array(r.shape).dims for r in roots}) == 1
    for k, root in enumerate(roots):
        producer = root
        while (producer.opcode == "get-tuple-element" and producer.operands
               and id(producer.operands[0]) in members):
            producer = producer.operands[0]
        if shared and k > 0:
            space.root_dims.append(list(space.root_dims[0]))
            space.roots.append(root)
            continue
        dims = []
        scan_dims = set(producer.int_list("dimensions")) if producer.opcode == "scan" else set()
        for pos, size in enumerate(root.array.dims):
            if pos in scan_dims:  # the scanned dimension of a root scan is walked sequentially
                space.dimensions.append(DimensionInfo(len(space.dimensions), "sequential", size, producer, pos))
            else:
                space.dimensions.append(DimensionInfo(len(space.dimensions), "parallel", size, root, pos))
            dims.append(len(space.dimensions) - 1)
        space.root_dims.append(dims)
        space.roots.append(root)
        if isinstance(root.shape, tuple):  # a variadic op: one root tile per output
            for _ in root.shape[1:]:
                space.root_dims.append(list(dims))
                space.roots.append(root)
    seen: set[int] = set()
    order: list[Instruction] = []
    stack = list(reversed(roots))
    while stack:  # depth-first, operands in order, each instruction once
        inst = stack.pop()
        if id(inst) in seen or id(inst) not in members:
            continue
        seen.add(id(inst))
        order.append(inst)
        stack.extend(reversed([o for o in inst.operands if id(o) in members]))
    for inst in order:
        _add_instruction(space, inst)
    return space


def _add_instruction(space: TilingSpace, inst: Instruction) -> None:
    rank = len(inst.array.dims)

    def sequential(position: int, size: int) -> None:
        space.dimensions.append(DimensionInfo(len(space.dimensions), "sequential", size, inst, position))

    def rt_var(bounds: tuple[int, int], operand_id: int) -> None:
        hlo = inst.operands[operand_id] if operand_id >= 0 else None
        space.rt_vars.append(RTVarInfo(len(space.rt_vars), bounds, inst, operand_id, hlo))

    if inst.opcode in ("dot", "scaled-dot"):
        lhs = inst.operands[0].array.dims
        for k, d in enumerate(inst.int_list("lhs_contracting_dims")):
            sequential(rank + k, lhs[d])
    elif inst.opcode == "reduce":
        operand = inst.operands[0].array.dims
        for k, d in enumerate(inst.int_list("dimensions")):
            sequential(rank + k, operand[d])
    elif inst.opcode == "ragged-dot":
        lhs, rhs = inst.operands[0].array.dims, inst.operands[1].array.dims
        ragged = inst.int_list("lhs_ragged_dims")[0]
        contracting = inst.int_list("lhs_contracting_dims")
        if ragged in contracting:
            sequential(rank, lhs[ragged])
            rt_var((0, lhs[ragged]), 2)
            rt_var((0, lhs[ragged]), -1)
        elif ragged not in inst.int_list("lhs_batch_dims"):
            sequential(rank, rhs[inst.int_list("rhs_group_dims")[0]])
            for k, d in enumerate(contracting):
                sequential(rank + 1 + k, lhs[d])
            rt_var((0, lhs[ragged]), 2)
        else:
            for k, d in enumerate(contracting):
                sequential(rank + k, lhs[d])
    elif inst.opcode == "convolution":
        labels = conv_labels(inst)
        kernel = inst.operands[1].array.dims
        for k, d in enumerate(labels.kernel_spatial):
            sequential(rank + k, kernel[d])
        sequential(rank + len(labels.kernel_spatial), kernel[labels.kernel_input_feature])
    elif inst.opcode == "dynamic-slice":
        operand = inst.operands[0].array.dims
        sizes = inst.int_list("dynamic_slice_sizes")
        for d, (size, slice_size) in enumerate(zip(operand, sizes)):
            rt_var((0, size - slice_size), d + 1)
