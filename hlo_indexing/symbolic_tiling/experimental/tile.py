"""Tiles of XLA's experimental tiling: per dimension ``offset + stride * iota(size)``,
masked by an upper bound, all as expressions of tile ids ``tid_i``, tile sizes ``ts_i``
and runtime variables ``rt_k`` (see :mod:`tile_expr`).

Element ``j`` of a dimension's tile is at index ``offset + j * stride`` for
``0 <= j < size``; indices ``>= upper_bound`` are masked. Text form (XLA's
``Tile::ToString``)::

    (tid_0, tid_1){rt_0} -> offsets [..] sizes [..] strides [..] upper bounds [..]

optionally followed by ``replica ids { offsets [..] sizes [..] strides [..] upper bounds [..] }``
(all-gather). :func:`parse_tile` reads it (header optional), :meth:`Tile.to_string`
prints it, :meth:`Tile.evaluate` gives the integers at one point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping

from hlo_indexing.errors import ParseError
from hlo_indexing.symbolic_tiling.experimental.tile_expr import Expr, ExprLike, as_expr, parse_expr


def tid(i: int) -> Expr:
    """The tile id of tiling-space dimension ``i``."""
    return Expr.var(f"tid_{i}")


def ts(i: int) -> Expr:
    """The tile size of tiling-space dimension ``i``."""
    return Expr.var(f"ts_{i}")


def rt(k: int) -> Expr:
    """Runtime variable ``k``."""
    return Expr.var(f"rt_{k}")


@dataclass(frozen=True)
class DimTile:
    """The tile of one dimension."""

    offset: Expr
    size: Expr
    stride: Expr
    upper_bound: Expr

    @staticmethod
    def of(offset: ExprLike, size: ExprLike, stride: ExprLike, upper_bound: ExprLike) -> "DimTile":
        """A dimension tile from expressions or integers."""
        return DimTile(as_expr(offset), as_expr(size), as_expr(stride), as_expr(upper_bound))

    @staticmethod
    def full(dim_size: int) -> "DimTile":
        """A tile covering a whole dimension of ``dim_size`` elements (XLA's
        ``GetFullDimTile``: the size is rounded up to a power of two, masked by the bound)."""
        size = 1
        while size < dim_size:
            size *= 2
        return DimTile.of(0, size, 1, dim_size)

    def substitute(self, values: Mapping[str, ExprLike]) -> "DimTile":
        """Every expression with ``values`` substituted."""
        return DimTile(*(e.substitute(values) for e in self.exprs()))

    def exprs(self) -> tuple[Expr, Expr, Expr, Expr]:
        """(offset, size, stride, upper bound)."""
        return (self.offset, self.size, self.stride, self.upper_bound)

    def to_string(self) -> str:
        """XLA's ``DimTile::ToString``: ``offset [o], size [s], stride [t], upper bound [u]``."""
        return (f"offset [{self.offset}], size [{self.size}], stride [{self.stride}], "
                f"upper bound [{self.upper_bound}]")

    def __str__(self) -> str:
        return self.to_string()


@dataclass(frozen=True)
class Tile:
    """A tile of an array of rank ``len(dims)`` in a tiling space of ``num_dims``
    dimensions and ``num_rt`` runtime variables; ``replica`` is the all-gather tile of
    replica ids (or None)."""

    num_dims: int
    num_rt: int
    dims: tuple[DimTile, ...]
    replica: tuple[DimTile, ...] | None = field(default=None)

    def with_dims(self, dims: list[DimTile] | tuple[DimTile, ...]) -> "Tile":
        """The same tiling space and replica tile with other dimension tiles."""
        return replace(self, dims=tuple(dims))

    def scalar(self) -> "Tile":
        """A rank-0 tile in the same tiling space."""
        return Tile(self.num_dims, self.num_rt, ())

    @property
    def rank(self) -> int:
        """Number of dimension tiles."""
        return len(self.dims)

    def substitute(self, values: Mapping[str, ExprLike]) -> "Tile":
        """Every expression with ``values`` substituted."""
        replica = None if self.replica is None else tuple(d.substitute(values) for d in self.replica)
        return Tile(self.num_dims, self.num_rt, tuple(d.substitute(values) for d in self.dims), replica)

    def evaluate(self, point: Mapping[str, int]) -> dict[str, list[int]]:
        """``{offsets, sizes, strides, upper_bounds[, replica_ids]}`` at ``point``."""
        out = _evaluate_dims(self.dims, point)
        if self.replica is not None:
            out["replica_ids"] = _evaluate_dims(self.replica, point)  # type: ignore[assignment]
        return out

    def header(self) -> str:
        """``(tid_0, ...){rt_0, ...} ->``."""
        head = "(" + ", ".join(f"tid_{i}" for i in range(self.num_dims)) + ")"
        if self.num_rt:
            head += "{" + ", ".join(f"rt_{k}" for k in range(self.num_rt)) + "}"
        return head + " ->"

    def to_string(self, print_variables: bool = True) -> str:
        """XLA's ``Tile::ToString`` (one line)."""
        body = _dims_text(self.dims)
        if self.replica is not None:
            body += " replica ids { " + _dims_text(self.replica) + " }"
        return f"{self.header()} {body}" if print_variables else body

    def __str__(self) -> str:
        return self.to_string()


def _evaluate_dims(dims: tuple[DimTile, ...], point: Mapping[str, int]) -> dict[str, list[int]]:
    return {
        "offsets": [d.offset.evaluate(point) for d in dims],
        "sizes": [d.size.evaluate(point) for d in dims],
        "strides": [d.stride.evaluate(point) for d in dims],
        "upper_bounds": [d.upper_bound.evaluate(point) for d in dims],
    }


def _dims_text(dims: tuple[DimTile, ...]) -> str:
    def join(exprs: list[Expr]) -> str:
        return "[" + ", ".join(str(e) for e in exprs) + "]"

    return (f"offsets {join([d.offset for d in dims])} sizes {join([d.size for d in dims])} "
            f"strides {join([d.stride for d in dims])} upper bounds {join([d.upper_bound for d in dims])}")


_HEADER = re.compile(r"^\s*\(([^)]*)\)\s*(?:\{([^}]*)\})?\s*->\s*")


def _split_list(text: str) -> list[str]:
    """Top-level comma split of a bracket list body."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if text.strip():
        items.append(text[start:])
    return [s.strip() for s in items]


def _lists(body: str, text: str) -> list[list[Expr]]:
    out = []
    for key in ("offsets", "sizes", "strides", "upper bounds"):
        m = re.match(r"\s*" + key + r"\s*\[", body)
        if m is None:
            raise ParseError(f"expected '{key} [' in tile {text!r}")
        depth, end = 1, m.end()
        while depth and end < len(body):
            depth += {"[": 1, "]": -1}.get(body[end], 0)
            end += 1
        out.append([parse_expr(item) for item in _split_list(body[m.end(): end - 1])])
        body = body[end:]
    if body.strip():
        raise ParseError(f"trailing text {body.strip()!r} in tile {text!r}")
    return out


def parse_tile(text: str, num_dims: int | None = None, num_rt: int | None = None) -> Tile:
    """Parse a tile in XLA's text; without a header, ``num_dims``/``num_rt`` give the
    tiling space. Raises ParseError on malformed text."""
    m = _HEADER.match(text)
    body = text
    if m is not None:
        names = [n.strip() for n in m.group(1).split(",") if n.strip()]
        rts = [n.strip() for n in (m.group(2) or "").split(",") if n.strip()]
        num_dims, num_rt = len(names), len(rts)
        body = text[m.end():]
    replica = None
    r = re.search(r"replica ids\s*\{(.*)\}\s*$", body, re.DOTALL)
    if r is not None:
        replica = _lists(r.group(1), text)
        body = body[: r.start()]
    lists = _lists(body, text)
    if len({len(x) for x in lists}) != 1:
        raise ParseError(f"lists of different lengths in tile {text!r}")

    def dims(ls: list[list[Expr]]) -> tuple[DimTile, ...]:
        return tuple(DimTile(*parts) for parts in zip(*ls))

    return Tile(num_dims or 0, num_rt or 0, dims(lists), None if replica is None else dims(replica))
