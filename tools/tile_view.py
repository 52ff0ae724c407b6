"""``hlo-indexing-tile-view``: a picture of one output tile of a tiling and of what it
needs on every operand of the fused computation.

For a computation (a ``func.func`` or an ``mhlo.fusion``), flat tile sizes (one per
tiling parameter, as ``hlo-print-tilings`` lists them) and a tile id,
:func:`~hlo_indexing.symbolic_tiling.tile_picture.tile_picture` computes (see that module for how):

* the **output tile**: the elements of output 0 (``--output-index``) that tile
  ``tile_id`` writes (tiles are numbered major to minor, as the program ids of
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

    hlo-indexing-tile-view FILE [--fusion NAME] --tile-sizes 8,128 [--tile-id N] [--output-index K]
                           [--allow-pad] [--max-cells N] [--max-slices N] [-o out.svg]

``FILE`` is MLIR or HLO text (as ``hlo-indexing-opt`` reads it); ``--fusion`` names the
computation (``@softmax``, ``softmax``, or an HLO fusion's name; optional when there is
one); ``--allow-pad`` tiles a pad outside a gemm fusion (as ``hlo-print-tilings``'
``allow-pad``). Exit code 1 with ``file:line:col: error: ...`` and the source line with a caret
(as ``hlo-indexing-opt`` reports errors) on bad input; ``-o`` is written only on success.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import pathlib
import sys
from collections.abc import Sequence
from typing import NoReturn

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError, InvalidArgumentError, SourceLocation
from hlo_indexing.passes.tilings import parse_tile_sizes
from hlo_indexing.tools import console, excerpt
from hlo_indexing.tools.output import write_output
from hlo_indexing.tools.svg_grid import Cell, Outline, SvgCanvas
from hlo_indexing.symbolic_tiling.tile_picture import Box, TensorPanel, TilePicture, inside, tile_picture

__all__ = ["TilePicture", "TensorPanel", "Box", "tile_picture", "render_tile_svg", "select_computation", "main", "cli_main"]

#: Default cells per drawn slice before scaling, and columns per row.
MAX_CELLS = 2048
MAX_COLUMNS = 64
MAX_SLICES = 4
#: Where errors about the command line point.
COMMAND_LINE = SourceLocation("<command line>", 1, 1)

COLOURS = {
    "output": ("#e6550d", "#fdae6b", "#fdd0a2"),  # needed (in box), partial, box only
    "operand": ("#3182bd", "#9ecae1", "#deebf7"),
}
OUTSIDE, IDLE, BOX_LINE = "#d62728", "#f7f7f7", "#222222"


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
        touched.update(itertools.product(*(inside(box.indices(d), panel.shape[d]) for d in range(lead))))
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
    needed = np.array(sorted(panel.needed), np.int64).reshape(len(panel.needed), rank)
    for lead in leads:
        if rank > 2:
            canvas.title(f"  [{', '.join(map(str, lead))}, :, :]")
        count = np.zeros((-(-rows // f), -(-columns // f)), np.int64)
        inbox = np.zeros_like(count)
        outside = np.zeros_like(count)
        boxes = [b for b in panel.boxes if all(i in b.indices(d) for d, i in enumerate(lead))]
        here = needed[(needed[:, : len(lead)] == np.array(lead, np.int64)).all(axis=1)] if len(lead) else needed
        r_index = here[:, -2] if rank >= 2 else np.zeros(len(here), np.int64)
        c_index = here[:, -1] if rank >= 1 else np.zeros(len(here), np.int64)
        np.add.at(count, (r_index // f, c_index // f), 1)
        covered = np.zeros(len(here), bool)
        for box in boxes:
            covered |= _in_box(here, box)
        np.add.at(outside, (r_index[~covered] // f, c_index[~covered] // f), 1)
        for box in boxes:
            for r in inside(box.indices(rank - 2), rows) if rank >= 2 else [0]:
                for c in inside(box.indices(rank - 1), columns) if rank >= 1 else [0]:
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
            span = [inside(box.indices(d), n) for d, n in zip(range(rank - 2, rank), (rows, columns))] if rank >= 2 else (
                [[0], inside(box.indices(0), columns)] if rank == 1 else [[0], [0]]
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


def _in_box(indices: np.ndarray, box: Box) -> np.ndarray:
    """Which rows of ``indices`` (one element per row) are elements of ``box``."""
    found = np.ones(len(indices), bool)
    for d, (offset, size, stride) in enumerate(zip(box.offsets, box.sizes, box.strides)):
        delta = indices[:, d] - offset
        if stride > 0:
            found &= (delta >= 0) & (delta % stride == 0) & (delta // stride < size)
        else:
            found &= (delta == 0) & (size > 0)
    return found


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
    if not found:
        raise InvalidArgumentError("the module has no computation to tile (no function with a body, no mhlo.fusion)", COMMAND_LINE)
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
    parser.add_argument("--tile-id", metavar="N", type=int, default=0, help="the output tile drawn (0-based, major to minor; default 0)")
    parser.add_argument(
        "--output-index", metavar="K", type=int, default=0, help="the output drawn, of a multi-output fusion (default 0)"
    )
    parser.add_argument("--allow-pad", action="store_true", help="also tile pads outside gemm fusions (as hlo-print-tilings' allow-pad)")
    parser.add_argument("--max-cells", type=int, default=MAX_CELLS, help=f"cells per slice before scaling (default {MAX_CELLS})")
    parser.add_argument("--max-slices", type=int, default=MAX_SLICES, help=f"2-D slices drawn per tensor (default {MAX_SLICES})")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout); written only on success")
    arguments = list(sys.argv[1:] if argv is None else argv)
    excerpt.forget_all()
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
        picture = tile_picture(op, sizes, args.tile_id, output=args.output_index, label=label, allow_pad=args.allow_pad)
        rendered = render_tile_svg(picture, max_cells=args.max_cells, max_slices=args.max_slices)
    except HloIndexingError as error:
        where = error.location or COMMAND_LINE
        if where == COMMAND_LINE:  # point at the value of the option the message names
            where = _option_location(arguments, error.message.partition(":")[0])
        print(excerpt.render(where, "error", error.message), file=sys.stderr)
        return 1
    try:
        write_output(args.output, rendered)
    except HloIndexingError as error:
        print(excerpt.render(error.location or COMMAND_LINE, "error", error.message), file=sys.stderr)
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
    """Entry point of ``hlo-indexing-tile-view``: runs :func:`main` and exits with its status
    (Ctrl-C: a quiet end, see :mod:`~hlo_indexing.tools.console`)."""
    console.run(lambda: main(sys.argv[1:]))
