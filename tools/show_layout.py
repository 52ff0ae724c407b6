"""``hlo-indexing-layout``: show where each element of an array sits in memory.

Prints the logical array (the last two dims as a grid, one block per index of the
leading dims) with each cell's buffer offset, tiles of the first tiling set apart by
extra space/blank lines, and the padding slots of the first tiling shown as ``(n)``::

    $ hlo-indexing-layout 'f32[3,5]{1,0:T(2,2)}'
    f32[3,5]{1,0:T(2,2)}: physical shape 2x3x2x2, 24 slots: 15 elements, 9 padding
    row 0:    0   1     4   5     8  (9)
    ...

``--format=svg`` writes the same grid as an SVG picture, cells coloured by the memory
tile (consecutive block of one tile's size) that holds them. ``-o FILE`` writes the
output to FILE, only on success. Exit code 1 with ``error: ...`` on bad input.

A text picture that would not fit the terminal (lines wider than it, as
``shutil.get_terminal_size`` tells: ``COLUMNS``, else the terminal, else 80; more than
:data:`MAX_PICTURE_LINES` lines; more than ``--max-cells`` cells, default
:data:`MAX_CELLS`) is an overview by tiles instead (:func:`build_overview`): one cell per
tile of the first tiling (per element where none), showing the memory tile that holds it,
the first and last rows of tiles and as many columns as fit::

    $ hlo-indexing-layout 'f32[4096,4096]{1,0:T(8,128)}'
    ...
               0      1      2      3    ...     28     29     30     31
       0:      0      1      2      3    ...     28     29     30     31
       1:     32     33     34     35    ...     60     61     62     63

``--window=0:16,0:128`` draws the elements of a region (``START:STOP`` per dim, stop
exclusive, ``:`` for a whole dim); an SVG of more than ``--max-cells`` cells is cropped
to the first index of each leading dim and the rows that fit, as a text ``--window`` is. ``--maps`` prints, instead of the picture, the layout's indexing
maps in XLA text: logical index -> buffer offset and logical index -> tiled coordinates
(:func:`hlo_indexing.layout.linear_offset_map`, :func:`~hlo_indexing.layout.tiled_coordinates_map`).
"""

from __future__ import annotations

import argparse
import itertools
import math
import shutil
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from hlo_indexing.errors import EnumerationTooLargeError, HloIndexingError, InvalidArgumentError, SourceLocation
from hlo_indexing.layout.lowering import linear_offset_map, tiled_coordinates_map
from hlo_indexing.layout.tiling import IntArith, TilingPlan, linear_from_coordinates, plan, tiled_coordinates
from hlo_indexing.layout.types import Shape
from hlo_indexing.limits import MAX_VIEWER_CELLS
from hlo_indexing.tools import console
from hlo_indexing.tools.output import write_output
from hlo_indexing.tools.svg_grid import PADDING_FILL, Cell, SvgCanvas

MAX_CELLS = MAX_VIEWER_CELLS
#: Where errors about the shape argument point (as the layout parser names its input).
SHAPE_ARGUMENT = "<layout>"
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd")


@dataclass(frozen=True)
class Grid:
    """The cells to draw: ``extents`` per logical dim (padded where the first tile covers
    that dim alone), each cell's offset, whether it is padding, and tile gap sizes."""

    shape: Shape
    plan: TilingPlan
    extents: tuple[int, ...]
    gaps: tuple[int, ...]  # per logical dim: the first tile's size along it (0: no gaps)
    offsets: dict[tuple[int, ...], int]
    chunk: int  # slots per memory tile (for colours)
    window: tuple[range, ...] = ()  # the cells drawn, per dim (all of extents when empty)

    def is_padding(self, index: tuple[int, ...]) -> bool:
        """Whether cell ``index`` of the grid lies outside the logical shape (padding)."""
        return any(i >= d for i, d in zip(index, self.shape.dims))


def build_grid(shape: Shape, window: Sequence[range] | None = None, max_cells: int = MAX_CELLS) -> Grid:
    """Offsets of the cells of the (first-tile padded) logical grid of ``shape`` inside
    ``window`` (per dim; default: the whole grid, cropped to ``max_cells`` cells by
    :func:`crop`). Raises :class:`HloIndexingError` for a window outside the grid or
    larger than ``max_cells``."""
    p = plan(shape)
    extents, gaps, chunk = _first_tiles(shape, p)
    if window is None:
        window = crop(extents, max_cells)
    window = tuple(window)
    at = SourceLocation(SHAPE_ARGUMENT, 1, 1)
    if len(window) != len(extents):
        raise InvalidArgumentError(f"--window: expected {len(extents)} ranges (one per dimension), got {len(window)}", at)
    for dim, (picked, extent) in enumerate(zip(window, extents)):
        if (not picked and extent) or picked.start < 0 or picked.stop > extent:
            raise InvalidArgumentError(
                f"--window: range {picked.start}:{picked.stop} of dimension {dim} is empty or outside [0, {extent}]", at
            )
    cells = math.prod(len(r) for r in window)
    if cells > max_cells or any(len(r) > max_cells for r in window):
        raise EnumerationTooLargeError(
            f"--window: {cells} cells, more than --max-cells={max_cells}", at, limit="MAX_VIEWER_CELLS", value=cells
        )
    arith = IntArith()
    offsets = {
        index: int(linear_from_coordinates(p, tiled_coordinates(p, list(index), arith), arith))
        for index in itertools.product(*window)
    }
    return Grid(shape, p, tuple(extents), tuple(gaps), offsets, chunk, window)


def _first_tiles(shape: Shape, p: TilingPlan) -> tuple[list[int], list[int], int]:
    """(extents per logical dim, padded where the first tiling's tile covers that dim alone;
    that tile's size along each dim, 0 where it covers none alone; slots per memory tile)."""
    extents = list(shape.dims)
    gaps = [0] * len(extents)
    chunk = 1
    if p.steps and 0 not in shape.dims:
        step = p.steps[0]
        chunk = math.prod(step.tile)
        k = len(step.tile)
        first_covered = len(step.combined) - k
        for position, group in enumerate(step.groups):
            tile = step.tile[position - first_covered] if position >= first_covered else 0
            physical = [i - step.ones for i in group if i >= step.ones]
            if tile and len(group) == 1 and physical:
                logical_dim = p.permutation[physical[0]]
                extents[logical_dim] = -(-extents[logical_dim] // tile) * tile
                gaps[logical_dim] = tile
    return extents, gaps, chunk


def crop(extents: Sequence[int], max_cells: int) -> tuple[range, ...]:
    """The window drawn by default: the whole grid when it has at most ``max_cells``
    cells, else the first index of each leading dim and the first rows (columns) that fit."""
    window = [range(e) for e in extents]
    if math.prod(extents) <= max_cells:  # an empty grid may still have a huge extent: draw at most max_cells of it
        return tuple(range(min(e, max_cells)) for e in extents)
    for dim in range(len(extents) - 2):  # leading dims: one block
        window[dim] = range(min(1, extents[dim]))
    if len(extents) >= 2:
        columns = min(extents[-1], max_cells)
        window[-1] = range(columns)
        window[-2] = range(max(1, min(extents[-2], max_cells // max(columns, 1))))
    elif extents:
        window[-1] = range(min(extents[-1], max_cells))
    return tuple(window)


def parse_window(text: str, rank: int) -> tuple[range, ...] | None:
    """``--window`` text (``0:16,0:128``, ``:`` for a whole dim) as ranges, with None
    for a whole dim; raises :class:`HloIndexingError` when malformed."""
    parts = text.split(",")
    if len(parts) != rank:
        raise HloIndexingError(f"--window: expected {rank} comma-separated START:STOP ranges, got '{text}'")
    ranges: list[range | None] = []
    for part in parts:
        start, sep, stop = part.strip().partition(":")
        try:
            ranges.append(None if sep and not start and not stop else range(int(start), int(stop)))
        except ValueError:
            raise HloIndexingError(f"--window: expected START:STOP, got '{part}'") from None
    return tuple(ranges)  # type: ignore[arg-type]


def render_maps(shape: Shape) -> str:
    """The layout's indexing maps (logical index -> offset, -> tiled coordinates)."""
    p = plan(shape)
    lines = [
        f"{shape}: physical shape {'x'.join(map(str, p.tiled_shape))}, {p.padded_size} slots",
        f"offset: {linear_offset_map(shape)}",
        f"tiled coordinates: {tiled_coordinates_map(shape)}",
    ]
    return "\n".join(lines) + "\n"


def _window_note(grid: Grid) -> str | None:
    """A line saying which cells are shown, when not all are."""
    if all(len(r) == e for r, e in zip(grid.window, grid.extents)):
        return None
    shown = ", ".join(f"{r.start}:{r.stop}" for r in grid.window)
    return (
        f"showing cells [{shown}] of the {'x'.join(map(str, grid.extents))} grid "
        f"({math.prod(len(r) for r in grid.window)} of {math.prod(grid.extents)} cells; --window, --max-cells to change)"
    )


def _summary_line(shape: Shape, p: TilingPlan) -> str:
    elements = p.element_count
    return (
        f"{shape}: physical shape {'x'.join(map(str, p.tiled_shape))}, {p.padded_size} slots: "
        f"{elements} elements, {p.padded_size - elements} padding"
    )


def _blocks(grid: Grid) -> list[tuple[str, tuple[int, ...], list[list[tuple[int, ...]]]]]:
    """``(title, leading index, rows of cell indices)`` per 2-D block."""
    window = grid.window or tuple(range(e) for e in grid.extents)
    rank = len(window)
    row_range = window[-2] if rank >= 2 else range(1)
    col_range = window[-1] if rank >= 1 else range(1)
    blocks = []
    for lead in itertools.product(*window[:-2]):
        title = f"[{', '.join(map(str, lead))}, :, :]" if lead else ""
        rows = []
        for r in row_range:
            prefix = lead + ((r,) if rank >= 2 else ())
            rows.append([prefix + ((c,) if rank >= 1 else ()) for c in col_range])
        blocks.append((title, lead, rows))
    return blocks


def render_text(grid: Grid) -> str:
    """The text picture (see the module docstring)."""
    width = len(str(max(grid.offsets.values(), default=0))) + 3
    col_gap = grid.gaps[-1] if grid.gaps else 0
    row_gap = grid.gaps[-2] if len(grid.gaps) >= 2 else 0
    lines = [_summary_line(grid.shape, grid.plan)]
    note = _window_note(grid)
    if note is not None:
        lines.append(note)
    for title, _, rows in _blocks(grid):
        if title:
            lines.append(title)
        for position, row in enumerate(rows):
            if not row:  # a zero-sized last dimension: no cells to draw
                continue
            r = row[0][-2] if len(grid.extents) >= 2 else 0
            if position and row_gap and r % row_gap == 0:
                lines.append("")
            cells = []
            for position_c, index in enumerate(row):
                c = index[-1] if index else 0
                text = str(grid.offsets[index])
                text = f"({text})" if grid.is_padding(index) else text
                cells.append((" " if position_c and col_gap and c % col_gap == 0 else "") + text.rjust(width))
            label = f"row {r}:" if len(grid.extents) >= 2 else "row:"
            lines.append(label + "".join(cells))
    return "\n".join(lines) + "\n"


#: Rows of blocks the overview shows at each end of a long dimension (numpy summarises
#: with 3 edge items; a terminal has room for a few more).
EDGE_ROWS = 5


@dataclass(frozen=True)
class Overview:
    """A large grid drawn by blocks: the first tiling's tiles (``blocks``: elements per
    block along each logical dim, 1 where no tile covers it alone), ``counts`` of blocks
    per dim, the block indices drawn per dim (None for an elided run), and for each drawn
    block the memory tile holding its first element (``chunk`` slots per tile) and
    whether it holds padding."""

    shape: Shape
    plan: TilingPlan
    blocks: tuple[int, ...]
    counts: tuple[int, ...]
    chunk: int
    shown: tuple[tuple[int | None, ...], ...]
    tiles: dict[tuple[int, ...], int]
    padded: frozenset[tuple[int, ...]]


def build_overview(shape: Shape, width: int) -> Overview:
    """The overview of ``shape`` that fits ``width`` columns: every block column that
    fits, else the first and last ones; at most ``2 * EDGE_ROWS`` block rows and the
    first and last index of each leading dim. Work bounded by the blocks drawn."""
    p = plan(shape)
    extents, gaps, chunk = _first_tiles(shape, p)
    blocks = tuple(g or 1 for g in gaps)
    counts = tuple(-(-e // b) for e, b in zip(extents, blocks))
    rank = len(counts)
    shown: list[tuple[int | None, ...]] = [_ends(n, 1) for n in counts[:-2]]
    if rank >= 2:
        shown.append(_ends(counts[-2], EDGE_ROWS))
    if rank >= 1:
        cell = len(str(max(p.padded_size // chunk - 1, 0))) + 3  # the widest tile number, a '*' and spaces
        label = len(str(max(counts[-2] - 1, 0))) + 2 if rank >= 2 else 5
        shown.append(_ends(counts[-1], max(1, (width - label - cell) // (2 * cell))))
    arith = IntArith()
    tiles: dict[tuple[int, ...], int] = {}
    padded = set()
    for index in itertools.product(*[[i for i in picked if i is not None] for picked in shown]):
        first = [i * b for i, b in zip(index, blocks)]
        tiles[index] = int(linear_from_coordinates(p, tiled_coordinates(p, first, arith), arith)) // chunk
        if any(start + b > d for start, b, d in zip(first, blocks, shape.dims)):
            padded.add(index)
    return Overview(shape, p, blocks, counts, chunk, tuple(shown), tiles, frozenset(padded))


def _ends(count: int, edge: int) -> tuple[int | None, ...]:
    """``0..count-1``, or the first and last ``edge`` of them around a None when longer."""
    if count <= 2 * edge + 1:
        return tuple(range(count))
    return (*range(edge), None, *range(count - edge, count))


def render_overview(overview: Overview, width: int) -> str:
    """The overview as text: the summary, what a cell is and a ``--window`` to see
    elements (wrapped to ``width``), then the blocks, rows labelled by block row and
    columns by block column."""
    blocks, counts, rank = overview.blocks, overview.counts, len(overview.counts)
    values = {index: str(tile) + ("*" if index in overview.padded else "") for index, tile in overview.tiles.items()}
    cell = max((len(v) for v in values.values()), default=1) + 2
    grid = "x".join(map(str, counts))
    tiled = overview.chunk > 1
    if tiled:
        region = ", ".join(f"{b}i{k}:{b}i{k}+{b}" if b > 1 else f"i{k}" for k, b in enumerate(blocks))
        what = (
            f"overview: a {grid} grid of tiles of {'x'.join(map(str, blocks))} elements; cell [{', '.join(f'i{k}' for k in range(rank))}] "
            f"is the tile of elements [{region}], and shows its place in memory: tile t holds slots "
            f"t*{overview.chunk} to t*{overview.chunk}+{overview.chunk - 1}"
        )
    else:
        what = f"overview: the first and last elements of the {grid} grid (not tiled); a cell is the element's offset"
    if overview.padded:
        what += "; * marks a tile with padding"
    window = ",".join(
        f"0:{min(max(2 * b, 8), n * b)}" if k >= rank - 2 else "0:1" for k, (b, n) in enumerate(zip(blocks, counts))
    )
    what += f". --window={window} draws the elements of a region (START:STOP per dim)."
    lines = textwrap.wrap(_summary_line(overview.shape, overview.plan), max(width, 40)) + textwrap.wrap(what, max(width, 40))
    shown = overview.shown
    label = len(str(max(counts[-2] - 1, 0))) + 2 if rank >= 2 else 5
    columns = "".join(("..." if j is None else str(j)).rjust(cell) for j in shown[-1]) if rank else ""
    lines.append(" " * label + columns)
    for lead in itertools.product(*shown[:-2]):
        leading = tuple(i for i in lead if i is not None)
        if len(leading) < len(lead):
            lines.append("...")
            continue
        if leading:
            lines.append(f"[{', '.join(map(str, leading))}, :, :]")
        for i in shown[-2] if rank >= 2 else (0,):
            if i is None:
                lines.append("...".rjust(label))
                continue
            row = leading + ((i,) if rank >= 2 else ())
            cells = "".join(("..." if j is None else values[row + (j,)]).rjust(cell) for j in shown[-1])
            lines.append((f"{i}:" if rank >= 2 else "row:").rjust(label) + cells)
    return "\n".join(lines) + "\n"


#: The most lines the element picture may take before the overview replaces it.
MAX_PICTURE_LINES = 100


def render_picture(shape: Shape, width: int, max_cells: int = MAX_CELLS) -> str:
    """The text picture of ``shape`` for a terminal ``width`` columns wide: every element
    when the grid has at most ``max_cells`` cells and its picture fits (below the summary
    line, lines at most ``width`` characters, at most :data:`MAX_PICTURE_LINES` of them),
    else the overview by tiles (:func:`build_overview`)."""
    if 0 in shape.dims:  # no element: nothing to overview
        return render_text(build_grid(shape, max_cells=max_cells))
    if math.prod(_first_tiles(shape, plan(shape))[0]) <= max_cells:
        text = render_text(build_grid(shape, max_cells=max_cells))
        lines = text.splitlines()[1:]  # below the summary
        if len(lines) <= MAX_PICTURE_LINES and max(map(len, lines), default=0) <= width:
            return text
    return render_overview(build_overview(shape, width), width)


def render_svg(grid: Grid) -> str:
    """An SVG of the grid: cells coloured by memory tile, padding hatched grey (drawn
    with :class:`~hlo_indexing.tools.svg_grid.SvgCanvas`)."""
    col_gap = grid.gaps[-1] if grid.gaps else 0
    row_gap = grid.gaps[-2] if len(grid.gaps) >= 2 else 0
    canvas = SvgCanvas()
    canvas.header(_summary_line(grid.shape, grid.plan))
    for title, _, rows in _blocks(grid):
        if title:
            canvas.title(title)
        cells = []
        for row in rows:
            line = []
            for index in row:
                offset = grid.offsets[index]
                padding = grid.is_padding(index)
                fill = PADDING_FILL if padding else PALETTE[(offset // grid.chunk) % len(PALETTE)]
                line.append(
                    Cell(fill, f"{index} -> {offset}{' (padding)' if padding else ''}", label=str(offset), dashed=padding)
                )
            cells.append(line)
        first = rows[0][0] if rows and rows[0] else ()
        canvas.grid(
            cells,
            row_gaps=_gap_positions(first[-2] if len(first) >= 2 else 0, len(rows), row_gap),
            column_gaps=_gap_positions(first[-1] if first else 0, len(rows[0]) if rows else 0, col_gap),
        )
    return canvas.svg()


def _gap_positions(start: int, count: int, every: int) -> set[int]:
    """Positions (from 0) of the cells ``start, start + 1, ...`` that begin a tile of ``every``."""
    return {k for k in range(count) if every and (start + k) % every == 0}


def _grid(shape: Shape, window: tuple[range | None, ...] | None, max_cells: int) -> Grid:
    """The grid of ``shape`` in ``window`` (None entries: whole dims)."""
    if window is None:
        return build_grid(shape, max_cells=max_cells)
    extents = build_grid(shape, window=[range(1)] * len(shape.dims), max_cells=1).extents
    return build_grid(shape, [r if r is not None else range(e) for r, e in zip(window, extents)], max_cells)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the viewer; returns the exit code (0 ok, 1 bad input or output failure)."""
    parser = _ArgumentParser(prog="hlo-indexing-layout", description="Show the memory position of each array element.")
    parser.add_argument("shape", help="a shape with layout, e.g. 'f32[3,5]{1,0:T(2,2)}'")
    parser.add_argument("--format", choices=("text", "svg"), default="text")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout); written only on success")
    parser.add_argument("--maps", action="store_true", help="print the layout's indexing maps instead of the picture")
    parser.add_argument("--window", help="cells to draw: START:STOP per dimension, e.g. 0:16,0:128 (':' = whole dim)")
    parser.add_argument("--max-cells", type=int, default=MAX_CELLS, help=f"crop larger grids (default {MAX_CELLS})")
    try:
        args = parser.parse_args(argv)
    except UsageExit:
        return 1
    try:
        shape = Shape.parse(args.shape)
        if args.maps:
            rendered = render_maps(shape)
        else:
            if args.max_cells < 1:
                raise HloIndexingError(f"--max-cells must be at least 1, got {args.max_cells}")
            if args.format == "text" and args.window is None:
                rendered = render_picture(shape, shutil.get_terminal_size().columns, args.max_cells)
            else:
                window = None if args.window is None else parse_window(args.window, len(shape.dims))
                grid = _grid(shape, window, args.max_cells)
                rendered = render_svg(grid) if args.format == "svg" else render_text(grid)
    except HloIndexingError as error:
        location = error.location or SourceLocation(SHAPE_ARGUMENT, 1, 1)
        print(f"{location}: error: {error.message}", file=sys.stderr)
        return 1
    try:
        write_output(args.output, rendered)
    except HloIndexingError as error:
        print(f"{error.location}: error: {error.message}", file=sys.stderr)
        return 1
    return 0


class UsageExit(Exception):
    """A usage error was printed; exit 1."""


class _ArgumentParser(argparse.ArgumentParser):
    """Usage errors as ``<command line>:1:1: error: ...`` and exit status 1, as
    ``hlo-indexing-opt`` reports them (argparse's own form has no location and exits 2)."""

    def error(self, message: str) -> NoReturn:
        print(f"<command line>:1:1: error: {message}", file=sys.stderr)
        raise UsageExit(message)


def cli_main() -> None:
    """Entry point of ``hlo-indexing-layout``: runs :func:`main` on ``sys.argv`` and exits with
    its status (Ctrl-C: a quiet end, see :mod:`~hlo_indexing.tools.console`)."""
    console.run(lambda: main(sys.argv[1:]))
