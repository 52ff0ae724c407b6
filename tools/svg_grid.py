"""The SVG drawing shared by the pictures of the command-line tools: lines of text and
grids of square cells, one grid per 2-D block, with optional gaps between groups of rows
or columns and rectangle outlines over cells.

:class:`SvgCanvas` lays its items out top to bottom; :meth:`SvgCanvas.svg` returns the
document (``<svg>`` with a hatched ``url(#pad)`` pattern for padding cells). Every cell
is a ``<rect>`` with a ``<title>`` (its tooltip), and, when given, a ``class`` and a
``data-index`` attribute, so a script (or a test) reads back what a picture shows with
any XML parser. ``hlo-indexing-layout --format=svg`` (:mod:`hlo_indexing.tools.show_layout`)
and ``hlo-indexing-tile-view`` (:mod:`hlo_indexing.tools.tile_view`) draw with it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from html import escape

#: Fill of padding cells: a hatched grey pattern defined in every document.
PADDING_FILL = "url(#pad)"


@dataclass(frozen=True)
class Cell:
    """One cell: its ``fill``, the ``label`` written inside (none when empty), its
    tooltip ``title``, a dashed border for padding, and optional ``css_class`` and
    ``data_index`` attributes."""

    fill: str
    title: str
    label: str = ""
    dashed: bool = False
    css_class: str = ""
    data_index: str = ""


@dataclass(frozen=True)
class Outline:
    """A rectangle drawn over the cells ``rows`` x ``columns`` (positions in the grid,
    stop exclusive) of one grid: ``colour``, ``title``, optional ``css_class`` and
    ``data_index`` attributes."""

    rows: range
    columns: range
    colour: str
    title: str
    css_class: str = ""
    data_index: str = ""


def _text(text: str) -> str:
    """``text`` escaped as XML character data (``>`` kept: ``(1, 2) -> 5`` stays readable)."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _attributes(css_class: str, data_index: str) -> str:
    return (f' class="{escape(css_class)}"' if css_class else "") + (
        f' data-index="{escape(data_index)}"' if data_index else ""
    )


class SvgCanvas:
    """Items stacked top to bottom (see the module docstring). ``cell`` is the side of a
    cell in pixels, ``gap`` the space between groups of cells and between items."""

    def __init__(self, cell: int = 34, gap: int = 6, margin: int = 10):
        self.cell, self.gap, self.margin = cell, gap, margin
        self._parts: list[str] = []
        self._y = margin + 20
        self._width = margin

    def header(self, line: str) -> None:
        """The first line of the picture (above everything else)."""
        self._parts.append(
            f'<text x="{self.margin}" y="{self.margin + 10}" font-family="monospace" font-size="12">{_text(line)}</text>'
        )
        self._width = max(self._width, self.margin + round(7.5 * len(line)))

    def title(self, line: str, bold: bool = False) -> None:
        """A line of text below the previous item."""
        self._y += 16
        weight = ' font-weight="bold"' if bold else ""
        self._parts.append(
            f'<text x="{self.margin}" y="{self._y - 4}" font-family="monospace" font-size="12"{weight}>{_text(line)}</text>'
        )
        self._width = max(self._width, self.margin + round(7.5 * len(line)))

    def grid(
        self,
        rows: Sequence[Sequence[Cell]],
        *,
        row_gaps: Collection[int] = (),
        column_gaps: Collection[int] = (),
        outlines: Sequence[Outline] = (),
    ) -> None:
        """Draw ``rows`` of cells below the previous item, with a gap before the rows
        (columns) at the positions in ``row_gaps`` (``column_gaps``), then ``outlines``."""
        size = self.cell
        small = size < 20  # thin borders from the group, not on every cell
        if small:
            self._parts.append('<g stroke="#999" stroke-width="0.5">')
        ys: list[float] = []
        xs: list[float] = []
        y = self._y
        for r, row in enumerate(rows):
            if r and r in row_gaps:
                y += self.gap
            ys.append(y)
            x = self.margin
            for c, cell in enumerate(row):
                if c and c in column_gaps:
                    x += self.gap
                if len(xs) <= c:
                    xs.append(x)
                self._parts.append(
                    f'<rect x="{x}" y="{y}" width="{size}" height="{size}" fill="{cell.fill}"'
                    + ("" if small else ' stroke="#333"')
                    + (' stroke-dasharray="3,2"' if cell.dashed else "")
                    + _attributes(cell.css_class, cell.data_index)
                    + f"><title>{_text(cell.title)}</title></rect>"
                )
                if cell.label:
                    self._parts.append(
                        f'<text x="{x + size / 2}" y="{y + size / 2 + 4}" text-anchor="middle" font-family="monospace" '
                        f'font-size="11">{_text(cell.label)}</text>'
                    )
                x += size
            self._width = max(self._width, x)
            y += size
        if small:
            self._parts.append("</g>")
        for outline in outlines:
            if not len(outline.rows) or not len(outline.columns) or outline.rows.stop > len(ys) or outline.columns.stop > len(xs):
                continue
            x0, y0 = xs[outline.columns.start], ys[outline.rows.start]
            x1, y1 = xs[outline.columns.stop - 1] + size, ys[outline.rows.stop - 1] + size
            self._parts.append(
                f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="{outline.colour}" '
                f'stroke-width="2.5"{_attributes(outline.css_class, outline.data_index)}><title>{_text(outline.title)}</title></rect>'
            )
        self._y = y + self.gap

    def svg(self, min_width: int = 420) -> str:
        """The SVG document of everything drawn."""
        header = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(self._width + self.margin, min_width)}" '
            f'height="{self._y + self.margin}">'
            '<defs><pattern id="pad" width="6" height="6" patternUnits="userSpaceOnUse">'
            '<rect width="6" height="6" fill="#eeeeee"/><path d="M0,6 L6,0" stroke="#999"/></pattern></defs>'
        )
        return header + "".join(self._parts) + "</svg>\n"
