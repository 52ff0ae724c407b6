"""``hlo-indexing-tile-view``: a picture of one output tile of a tiling and of what it
needs on every operand of the fused computation.

For a computation (a ``func.func`` or an ``mhlo.fusion``), flat tile sizes (one per
tiling parameter, as ``hlo-print-tilings`` lists them) and a tile id,
:func:`tile_picture` computes:

* the **output tile**: the elements of output 0 that tile ``tile_id`` writes (tiles
  are numbered major to minor, as the program ids of
  :func:`~hlo_indexing.symbolic_tiling.tiled_computation.tiled_computation`);
* per fusion **operand** (parameter): the elements the output tile *needs*, computed
  from the fused output -> parameter maps
  (:func:`~hlo_indexing.analysis.fusion.fusion_indexing`) restricted to the output
  tile's elements, and the operand's tile *boxes* (``offset + stride * iota(size)``)
  of the tiled computation for that tile: one per contracting step of a dot (the
  programs of a dot's operand region also step over its contracting tiles) and per
  value of a runtime offset.

:func:`render_tile_svg` draws them with the layout viewer's grid
(:mod:`hlo_indexing.tools.svg_grid`), one panel per tensor: needed elements inside a
box dark, box elements not needed light (what the tile loads for nothing), needed
elements outside every box red (never, for a sound tiling), each box outlined. Choices
the picture makes, each stated in a note under the panel's title when it applies:

* a tensor of rank > 2 is drawn as 2-D slices of its last two dimensions, one per index
  of the leading dimensions that the tile touches (its boxes or needed elements), at
  most ``max_slices`` of them (the first ones); rank 1 is one row, rank 0 one cell;
* a slice with more than ``max_cells`` cells (or more than ``max_columns`` columns) is
  scaled: a drawn cell stands for an ``f x f`` block of elements, dark when all its
  elements are needed, mid when some are; box outlines are drawn on the blocks they
  touch;
* elements of a box outside the array (a partial tile at the edge) are not drawn.

Every cell is an SVG ``<rect>`` with ``class`` (``needed``, ``box``, ``outside``
(needed, outside every box), ``partial`` for a scaled block with some needed elements,
or ``idle``) and ``data-index`` (the element's index, or the block's ranges when
scaled); boxes are ``class="tile-box"`` outlines.

Command line::

    hlo-indexing-tile-view FILE [--fusion NAME] --tile-sizes 8,128 [--tile-id N]
                           [--max-cells N] [--max-slices N] [-o out.svg]

``FILE`` is MLIR or HLO text (as ``hlo-indexing-opt`` reads it); ``--fusion`` names the
computation (``@softmax``, ``softmax``, or an HLO fusion's name; optional when there is
one). Exit code 1 with ``file:line:col: error: ...`` and the source line with a caret
(as ``hlo-indexing-opt`` reports errors) on bad input; ``-o`` is written only on success.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import pathlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from hlo_indexing.analysis.fusion import fusion_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import location_of, parse_module
from hlo_indexing.errors import (
    EnumerationTooLargeError,
    HloIndexingError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    SourceLocation,
    UnsupportedError,
)
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap, Variable
from hlo_indexing.maps.interval import Interval
from hlo_indexing.passes.tilings import parse_tile_sizes
from hlo_indexing.symbolic_tiling.tiled_computation import TiledInstruction, tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import AnalysisFailure, analyze_fusion
from hlo_indexing.tools import excerpt
from hlo_indexing.tools.svg_grid import Cell, Outline, SvgCanvas

#: Default cells per drawn slice before scaling, and columns per row.
MAX_CELLS = 2048
MAX_COLUMNS = 64
MAX_SLICES = 4
#: Largest number of points enumerated for the elements one operand needs, and of boxes.
MAX_POINTS = 1 << 22
MAX_BOXES = 256
#: Where errors about the command line point.
COMMAND_LINE = SourceLocation("<command line>", 1, 1)

COLOURS = {
    "output": ("#e6550d", "#fdae6b", "#fdd0a2"),  # needed (in box), partial, box only
    "operand": ("#3182bd", "#9ecae1", "#deebf7"),
}
OUTSIDE, IDLE, BOX_LINE = "#d62728", "#f7f7f7", "#222222"


@dataclass(frozen=True)
class Box:
    """One tile box: ``offset + stride * iota(size)`` per dimension (it may hang over
    the array's edge); ``label`` says which step or runtime value it is."""

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    label: str = ""

    def indices(self, dim: int) -> range:
        """The indices of the box along ``dim`` (in or out of the array; a stride of 0,
        as a one-element dimension may have, repeats its offset)."""
        offset, size, stride = self.offsets[dim], self.sizes[dim], self.strides[dim]
        if size <= 0:
            return range(offset, offset)
        return range(offset, offset + stride * (size - 1) + 1, stride) if stride > 0 else range(offset, offset + 1)

    def contains(self, index: Sequence[int]) -> bool:
        """Whether element ``index`` is one of the box's."""
        return all(i in self.indices(d) for d, i in enumerate(index))


@dataclass(frozen=True)
class TensorPanel:
    """What the picture shows of one tensor: ``kind`` (``output``/``operand``) and
    ``index`` (output or parameter number), its HLO ``name`` and ``type``, the elements
    the tile writes (output) or needs (operand), and its tile boxes."""

    kind: str
    index: int
    name: str
    type: str
    shape: tuple[int, ...]
    needed: frozenset[tuple[int, ...]]
    boxes: tuple[Box, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The panel's heading."""
        what = f"output {self.index}" if self.kind == "output" else f"parameter {self.index}"
        verb = "writes" if self.kind == "output" else "needs"
        return f"{what} ({self.name}): {self.type}: the tile {verb} {len(self.needed)} elements"


@dataclass(frozen=True)
class TilePicture:
    """One output tile of a tiling and what it needs (see the module docstring)."""

    label: str
    tile_sizes: tuple[int, ...]
    parameters: tuple[str, ...]
    tile_id: int
    num_tiles: int
    output: TensorPanel
    operands: tuple[TensorPanel, ...] = field(default=())

    @property
    def heading(self) -> str:
        """The first line of the picture."""
        return (
            f"{self.label}: tile sizes {list(self.tile_sizes)} ({', '.join(self.parameters)}), "
            f"tile {self.tile_id} of {self.num_tiles} (0-based)"
        )


def tile_picture(computation: ir.Operation, tile_sizes: Sequence[int], tile_id: int = 0, *, label: str = "") -> TilePicture:
    """The :class:`TilePicture` of tile ``tile_id`` of ``computation`` (a ``func.func``
    or ``mhlo.fusion``) tiled at flat ``tile_sizes``.

    Raises :class:`~hlo_indexing.errors.HloIndexingError` located at the computation:
    :class:`UnsupportedError` when it cannot be tiled or an operand's fused map is
    unknown, :class:`InvalidArgumentError` when the sizes are not a valid tiling,
    :class:`IndexOutOfRangeError` for a tile id outside ``[0, tiles)``,
    :class:`EnumerationTooLargeError` when the needed elements are too many to enumerate."""
    at = location_of(computation.location, "<string>")
    label = label or _label(computation)
    fusion = analyze_fusion(computation)
    if isinstance(fusion, AnalysisFailure):
        raise UnsupportedError(f"{label}: {fusion}", at)
    names = tuple(f"{'K' if p.contracting else 'dim'} {p.dim} of {p.owner}" for p in fusion.parameters)
    if len(tile_sizes) != len(fusion.parameters):
        raise InvalidArgumentError(
            f"{label}: {len(tile_sizes)} tile sizes given, the tiling has {len(fusion.parameters)} parameters: {', '.join(names)}",
            at,
        )
    try:
        tiled = tiled_computation(fusion, list(tile_sizes))
    except HloIndexingError as exc:
        raise InvalidArgumentError(f"{label}: tile sizes {list(tile_sizes)} are not a valid tiling: {exc.message}", at) from None
    if not 0 <= tile_id < tiled.num_programs:
        raise IndexOutOfRangeError(f"{label}: tile id {tile_id} is outside [0, {tiled.num_programs - 1}]", at)
    root = tiled.roots[0]
    root_boxes = _boxes(root, tile_id, tiled.num_programs)
    shape = _shape(root.node.value)
    output_elements = frozenset(
        index for box in root_boxes for index in itertools.product(*(_inside(box.indices(d), n) for d, n in enumerate(shape)))
    )
    output = TensorPanel("output", 0, root.name, str(root.node.value.type), shape, output_elements, root_boxes)
    region = computation.regions[0]
    maps = fusion_indexing(region, 0)
    by_parameter: dict[int, list[TiledInstruction]] = {}
    for inst in tiled.instructions:
        number = inst.node.parameter_number
        if number is not None:
            by_parameter.setdefault(number, []).append(inst)
    operands = []
    for number, argument in enumerate(region.blocks[0].arguments):
        if not isinstance(argument.type, ir.RankedTensorType):
            continue
        insts = by_parameter.get(number, [])
        name = insts[0].name if insts and insts[0].name != label else f"parameter({number})"
        boxes = tuple(b for inst in insts for b in _boxes(inst, tile_id, tiled.num_programs))
        needed = _needed(maps.maps[number], root_boxes, f"{label}: parameter {number}", at)
        notes = () if insts or not needed else ("not in the tiled computation",)
        operands.append(TensorPanel("operand", number, name, str(argument.type), _shape(argument), needed, boxes, notes))
    return TilePicture(label, tuple(tile_sizes), names, tile_id, tiled.num_programs, output, tuple(operands))


def _label(computation: ir.Operation) -> str:
    for label, op in computations(computation.parent.operation if computation.parent is not None else computation):
        if op == computation:
            return label
    return computation.name


def _shape(value: "ir.Value") -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _inside(indices: range, extent: int) -> list[int]:
    return [i for i in indices if 0 <= i < extent]


def _boxes(inst: TiledInstruction, tile_id: int, num_tiles: int) -> tuple[Box, ...]:
    """The boxes of ``inst`` for output tile ``tile_id``: its programs ``tile_id * steps
    + k`` (``steps`` contracting steps per output tile, minor-most), every runtime value."""
    offsets_map = inst.tile_offsets_indexing
    programs = offsets_map.dim_vars[0].bounds.upper + 1 if offsets_map.num_dims else 1
    steps = max(1, programs // max(num_tiles, 1))
    pids = range(tile_id * steps, (tile_id + 1) * steps)
    pinned = offsets_map.replace(dims=[Variable(Interval(pids.start, pids.stop - 1), "pid_0")]) if offsets_map.num_dims else offsets_map
    if pinned.domain_size() > MAX_BOXES:
        raise EnumerationTooLargeError(
            f"{inst.name}: {pinned.domain_size()} tile boxes for one output tile, more than {MAX_BOXES}",
            limit="MAX_BOXES",
            value=pinned.domain_size(),
        )
    points, images = pinned.enumerate(max_points=MAX_BOXES)
    boxes = []
    for point, image in zip(points.tolist(), images.tolist()):
        parts = [f"step {point[0] - pids.start} of {steps}"] if steps > 1 else []
        parts += [f"{v.origin or 'runtime'} = {value}" for v, value in zip(offsets_map.runtime_vars, point[offsets_map.num_dims :])]
        boxes.append(Box(tuple(image), inst.tile_sizes, inst.tile_strides, ", ".join(parts)))
    return tuple(dict.fromkeys(boxes))


def _needed(maps: frozenset[IndexingMap], output_boxes: Sequence[Box], what: str, at: SourceLocation | None) -> frozenset[tuple[int, ...]]:
    """The elements the fused ``maps`` read for the output elements of ``output_boxes``:
    each map's output dimensions restricted to a box (its range, and a stride constraint),
    enumerated."""
    found: set[tuple[int, ...]] = set()
    for m in maps:
        if m.is_undefined:
            raise UnsupportedError(f"{what}: its fused map is unknown ({m.reason})", at)
        if m.is_known_empty():
            continue
        for box in output_boxes:
            restricted = _restrict(m, box)
            if restricted is None:
                continue
            if restricted.domain_size() > MAX_POINTS:
                raise EnumerationTooLargeError(
                    f"{what}: {restricted.domain_size()} points to enumerate, more than {MAX_POINTS}",
                    at,
                    limit="MAX_POINTS",
                    value=restricted.domain_size(),
                )
            _, images = restricted.enumerate(max_points=MAX_POINTS)
            found.update(map(tuple, np.unique(images, axis=0).tolist()) if len(images) else ())
    return frozenset(found)


def _restrict(m: IndexingMap, box: Box) -> IndexingMap | None:
    """``m`` with each dimension narrowed to the box's indices (None when empty)."""
    dims = []
    constraints = dict(m.constraints)
    for d, variable in enumerate(m.dim_vars):
        indices = box.indices(d)
        lower = max(variable.bounds.lower, indices.start)
        upper = min(variable.bounds.upper, indices[-1] if len(indices) else -1)
        if lower > upper:
            return None
        dims.append(Variable(Interval(lower, upper), variable.name))
        if box.strides[d] > 1:
            expr = ax.mod(ax.add(ax.dim(d, m.context), -box.offsets[d]), box.strides[d])
            constraints[expr] = Interval(0, 0)
    return m.replace(dims=dims, constraints=constraints)


# -- drawing


def _scale(rows: int, columns: int, max_cells: int, max_columns: int) -> int:
    """The smallest power of two ``f`` that, as a block side, fits a ``rows x columns`` slice in ``max_cells``
    drawn cells of at most ``max_columns`` per row."""
    f = 1
    while -(-rows // f) * -(-columns // f) > max_cells or -(-columns // f) > max_columns:
        f *= 2
    return f


def _slices(panel: TensorPanel, max_slices: int) -> tuple[list[tuple[int, ...]], int]:
    """The leading indices drawn (first ``max_slices`` the tile touches) and how many it touches."""
    lead = max(len(panel.shape) - 2, 0)
    if lead == 0:
        return [()], 1
    touched = {index[:lead] for index in panel.needed}
    for box in panel.boxes:
        touched.update(itertools.product(*(_inside(box.indices(d), panel.shape[d]) for d in range(lead))))
    if not touched:
        touched = {(0,) * lead}
    ordered = sorted(touched)
    return ordered[:max_slices], len(ordered)


def _draw_panel(canvas: SvgCanvas, panel: TensorPanel, max_cells: int, max_columns: int, max_slices: int) -> None:
    canvas.title(panel.title, bold=True)
    for line in _box_lines(panel.boxes):
        canvas.title(f"  {line}")
    for note in panel.notes:
        canvas.title(f"  {note}")
    if not panel.boxes and not panel.needed:
        canvas.title("  not read by this output")
    rank = len(panel.shape)
    rows = panel.shape[-2] if rank >= 2 else 1
    columns = panel.shape[-1] if rank >= 1 else 1
    leads, touched = _slices(panel, max_slices)
    if touched > len(leads):
        canvas.title(f"  showing {len(leads)} of the {touched} slices [{', '.join(['i'] * (rank - 2))}, :, :] the tile touches")
    f = _scale(rows, columns, max(1, max_cells // len(leads)), max_columns)
    if f > 1:
        canvas.title(f"  scaled: one cell is a {f}x{f} block of elements")
    dark, mid, light = COLOURS[panel.kind]
    for lead in leads:
        if rank > 2:
            canvas.title(f"  [{', '.join(map(str, lead))}, :, :]")
        count = np.zeros((-(-rows // f), -(-columns // f)), np.int64)
        inbox = np.zeros_like(count)
        outside = np.zeros_like(count)
        boxes = [b for b in panel.boxes if all(i in b.indices(d) for d, i in enumerate(lead))]
        for index in panel.needed:
            if index[: len(lead)] == lead:
                r, c = _cell(index, rank)
                count[r // f, c // f] += 1
                if not any(b.contains(index) for b in boxes):
                    outside[r // f, c // f] += 1
        for box in boxes:
            for r in _inside(box.indices(rank - 2), rows) if rank >= 2 else [0]:
                for c in _inside(box.indices(rank - 1), columns) if rank >= 1 else [0]:
                    inbox[r // f, c // f] = 1
        cells: list[list[Cell]] = []
        for br in range(count.shape[0]):
            row_cells = []
            for bc in range(count.shape[1]):
                r0, c0 = br * f, bc * f
                size = (min(rows, r0 + f) - r0) * (min(columns, c0 + f) - c0)
                n = int(count[br, bc])
                if f == 1:
                    index = lead + ((r0,) if rank >= 2 else ()) + ((c0,) if rank >= 1 else ())
                    where = ",".join(map(str, index))
                    title = f"({where})"
                else:
                    where = ",".join([*map(str, lead)] + ([f"{r0}:{min(rows, r0 + f)}"] if rank >= 2 else []) + [f"{c0}:{min(columns, c0 + f)}"])
                    title = f"[{where}]: {n} of {size} elements"
                if outside[br, bc]:
                    kind, fill, title = "outside", OUTSIDE, title + " needed, outside every tile box"
                elif n == size and n:
                    kind, fill = "needed", dark
                elif n:
                    kind, fill = "partial", mid
                elif inbox[br, bc]:
                    kind, fill = "box", light
                    title += " in the tile box, not needed"
                else:
                    kind, fill = "idle", IDLE
                if f == 1 and kind == "needed":
                    title += " needed" if panel.kind == "operand" else " written"
                row_cells.append(Cell(fill, title, css_class=kind, data_index=where))
            cells.append(row_cells)
        outlines = []
        for box in boxes:
            span = [_inside(box.indices(d), n) for d, n in zip(range(rank - 2, rank), (rows, columns))] if rank >= 2 else (
                [[0], _inside(box.indices(0), columns)] if rank == 1 else [[0], [0]]
            )
            if span[0] and span[1]:
                outlines.append(
                    Outline(
                        range(span[0][0] // f, span[0][-1] // f + 1),
                        range(span[1][0] // f, span[1][-1] // f + 1),
                        BOX_LINE,
                        f"tile box at {list(box.offsets)}" + (f" ({box.label})" if box.label else ""),
                        css_class="tile-box",
                        data_index=",".join(map(str, box.offsets)),
                    )
                )
        canvas.grid(cells, outlines=outlines)


def _box_lines(boxes: Sequence[Box], shown: int = 4) -> list[str]:
    """The tile boxes in words: one line per group of boxes of equal sizes and strides,
    its first ``shown`` offsets (and what each box is)."""
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[Box]] = {}
    for box in boxes:
        groups.setdefault((box.sizes, box.strides), []).append(box)
    lines = []
    for (sizes, strides), members in groups.items():
        where = ", ".join(f"{list(b.offsets)}" + (f" ({b.label})" if b.label else "") for b in members[:shown])
        more = f", ... ({len(members)} boxes)" if len(members) > shown else ""
        noun = "tile box" if len(members) == 1 else "tile boxes"
        lines.append(f"{noun} of sizes {list(sizes)}, strides {list(strides)} at offsets {where}{more}")
    return lines


def _cell(index: tuple[int, ...], rank: int) -> tuple[int, int]:
    if rank >= 2:
        return index[-2], index[-1]
    return 0, index[-1] if rank else 0


def render_tile_svg(
    picture: TilePicture, *, max_cells: int = MAX_CELLS, max_columns: int = MAX_COLUMNS, max_slices: int = MAX_SLICES
) -> str:
    """The SVG of ``picture``: the output panel, then one panel per operand (see the
    module docstring for the choices of slices and scale)."""
    for name, value in (("max-cells", max_cells), ("max-columns", max_columns), ("max-slices", max_slices)):
        if value < 1:
            raise InvalidArgumentError(f"--{name} must be at least 1, got {value}", COMMAND_LINE)
    canvas = SvgCanvas(cell=10, gap=6)
    canvas.header(picture.heading)
    canvas.title(
        "dark: needed (written) in the tile box; light: in the box, not needed; red: needed outside every box; "
        "outline: tile box"
    )
    for panel in (picture.output, *picture.operands):
        _draw_panel(canvas, panel, max_cells, max_columns, max_slices)
    return canvas.svg()


def select_computation(module: ir.Operation, name: str | None) -> tuple[str, ir.Operation]:
    """The computation of ``module`` named ``name`` (``@f``, ``f`` or an HLO fusion's
    name); the only one when ``name`` is None. Raises :class:`InvalidArgumentError`
    listing the names (and the closest one) otherwise."""
    found = list(computations(module))
    if name is None:
        if len(found) == 1:
            return found[0]
        raise InvalidArgumentError(
            f"--fusion: the module has {len(found)} computations, name one: {', '.join(label for label, _ in found) or 'none'}",
            COMMAND_LINE,
        )
    for label, op in found:
        if name in (label, label.removeprefix("@")):
            return label, op
    labels = [label for label, _ in found]
    close = difflib.get_close_matches(name, labels + [label.removeprefix("@") for label in labels], n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; computations: {', '.join(labels) or 'none'}"
    raise InvalidArgumentError(f"--fusion: no computation '{name}' in the module{hint}", COMMAND_LINE)


class UsageExit(Exception):
    """A usage error was printed; exit 1."""


class _ArgumentParser(argparse.ArgumentParser):
    """Usage errors as ``<command line>:1:1: error: ...`` and exit status 1."""

    def error(self, message: str) -> NoReturn:
        print(f"{COMMAND_LINE}: error: {message}", file=sys.stderr)
        raise UsageExit(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; returns the exit code (0 ok, 1 bad input or output failure)."""
    parser = _ArgumentParser(
        prog="hlo-indexing-tile-view", description="Draw an output tile of a tiling and the operand elements it needs (SVG)."
    )
    parser.add_argument("input", help="MLIR or HLO text file")
    parser.add_argument("--fusion", help="the computation: @name of a function, or an HLO fusion's name")
    parser.add_argument("--tile-sizes", required=True, help="flat tile sizes, one per tiling parameter (e.g. 8,128)")
    parser.add_argument("--tile-id", type=int, default=0, help="the output tile drawn (0-based, major to minor; default 0)")
    parser.add_argument("--max-cells", type=int, default=MAX_CELLS, help=f"cells per slice before scaling (default {MAX_CELLS})")
    parser.add_argument("--max-slices", type=int, default=MAX_SLICES, help=f"2-D slices drawn per tensor (default {MAX_SLICES})")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout); written only on success")
    arguments = list(sys.argv[1:] if argv is None else argv)
    excerpt.register(COMMAND_LINE.filename, " ".join(arguments))
    try:
        args = parser.parse_args(arguments)
    except UsageExit:
        return 1
    try:
        try:
            sizes = parse_tile_sizes(args.tile_sizes)
        except HloIndexingError as exc:
            raise InvalidArgumentError(f"--tile-sizes: {exc.message}", COMMAND_LINE) from None
        if args.input == "-":
            module = parse_module(sys.stdin.read(), filename="<stdin>")
        else:  # a path: locations name the file
            path = pathlib.Path(args.input)
            if path.is_file():
                excerpt.register(args.input, path.read_text(encoding="utf-8", errors="replace"))
            module = parse_module(path)
        label, op = select_computation(module.operation, args.fusion)
        picture = tile_picture(op, sizes, args.tile_id, label=label)
        rendered = render_tile_svg(picture, max_cells=args.max_cells, max_slices=args.max_slices)
    except HloIndexingError as error:
        where = error.location or COMMAND_LINE
        if where == COMMAND_LINE:  # point at the value of the option the message names
            where = _option_location(arguments, error.message.partition(":")[0])
        print(excerpt.render(where, "error", error.message), file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(rendered)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(rendered)
    except OSError as error:
        print(f"{COMMAND_LINE}: error: cannot write {args.output}: {error.strerror}", file=sys.stderr)
        return 1
    return 0


def _option_location(arguments: Sequence[str], option: str) -> SourceLocation:
    """Where the value of ``option`` (``--fusion``) starts in the command line as
    registered (the arguments joined by spaces); its start when absent."""
    column = 1
    for k, argument in enumerate(arguments):
        if argument == option and k + 1 < len(arguments):
            return SourceLocation(COMMAND_LINE.filename, 1, column + len(argument) + 1)
        if argument.startswith(option + "="):
            return SourceLocation(COMMAND_LINE.filename, 1, column + len(option) + 1)
        column += len(argument) + 1
    return COMMAND_LINE


def cli_main() -> None:
    """Entry point of ``hlo-indexing-tile-view``: runs :func:`main` and exits with its status."""
    sys.exit(main(sys.argv[1:]))
