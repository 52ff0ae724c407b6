"""Locations: where an op or an error is in the user's source. The file:line:col of an
MLIR location (:func:`location_of`), an op's HLO instruction name (:func:`location_name`),
source order, the function an op is in, and errors located at their op (:func:`located`,
with a named place for an op written ``loc(unknown)``).

Example::

    location_of(op.location)   # SourceLocation("f.mlir", 3, 8), printed f.mlir:3:8
"""

from __future__ import annotations

import re

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.errors import HloIndexingError, SourceLocation

# MLIR names the buffer of ``ir.Module.parse(text)`` "-"; we report the caller's name.
ANONYMOUS_BUFFER = "-"

# A file position inside a printed location: "name":line:col.
_FILE_POSITION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')

def location_of(loc: "ir.Location", filename: str | None = None) -> SourceLocation | None:
    """The file:line:col of an MLIR location (the first file position inside name, fused
    or call-site locations); ``filename`` replaces MLIR's anonymous buffer name ``-``.
    The name is as MLIR prints it (escaped)."""
    position = _file_position(loc)
    if position is None:
        return None
    name, line, column = position
    if name == ANONYMOUS_BUFFER and filename is not None:
        name = filename
    return SourceLocation(name, line, column)


# The location classes, where the bindings have them (read directly instead of printed).
_FILE_LOCATION = tuple(c for c in (getattr(ir, "FileLineColLoc", None),) if c is not None)
_NAME_LOCATION_CLASS = tuple(c for c in (getattr(ir, "NameLoc", None),) if c is not None)
_UNKNOWN_LOCATION = tuple(c for c in (getattr(ir, "UnknownLoc", None),) if c is not None)


def _prints_plain(text: str) -> bool:
    """Whether MLIR prints ``text`` in a location unescaped (printable ASCII, no quote
    or backslash)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _file_position(loc: "ir.Location") -> tuple[str, int, int] | None:
    """(file, line, column) of the first file position in the printed form of ``loc``:
    a file location, alone or under a name, is read directly; any other location is
    printed and searched."""
    if isinstance(loc, _NAME_LOCATION_CLASS):
        loc = loc.child_loc
    if isinstance(loc, _FILE_LOCATION):
        name = loc.filename
        if _prints_plain(name):
            return name, loc.start_line, loc.start_col
    elif isinstance(loc, _UNKNOWN_LOCATION):
        return None
    match = _FILE_POSITION.search(str(loc))
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def located(exc: HloIndexingError, operation: "ir.Operation") -> HloIndexingError:
    """``exc`` pointed at ``operation`` where it points nowhere yet (its file position,
    ``<string>`` for a module parsed from a string, and its MLIR location). An op without
    a file position (``loc(unknown)``) is named by its place, ``op #12 (stablehlo.dot)
    in @main`` (its index in a pre-order walk of the function), and the error points at
    its nearest ancestor that has a position (``ir_location`` stays the op's own, where
    a pass reports it, as MLIR does)."""
    if exc.location is None:
        exc.location = location_of(operation.location, "<string>")
        if exc.location is None:
            exc.location, place = unlocated_place(operation)
            exc.message = f"{exc.message} (at {place}, which has no location)"
            exc.args = (exc.message,)
    if exc.ir_location is None:
        exc.ir_location = operation.location
    return exc


def unlocated_place(operation: "ir.Operation") -> tuple[SourceLocation | None, str]:
    """For an op without a file position: the position of its nearest ancestor that has
    one (None if none has) and the op's place, ``op #N (name) in @function`` (``N`` its
    index in a pre-order walk of the function, or of the outermost op)."""
    position = None
    root = operation
    current = operation.parent
    while current is not None:
        current = current.operation
        if position is None:
            position = location_of(current.location, "<string>")
        root = current
        if current.name == "func.func":
            break
        current = current.parent
    index = _preorder_index(root, operation)
    owner = f"@{ir.StringAttr(root.attributes['sym_name']).value}" if root.name == "func.func" else f"'{root.name}'"
    return position, f"op #{index} ({operation.name}) in {owner}"


def _preorder_index(root: "ir.Operation", target: "ir.Operation") -> int:
    """The index of ``target`` among the ops nested in ``root`` (pre-order, from 0)."""
    index = 0
    stack = [iter(block.operations) for region in reversed(list(root.regions)) for block in reversed(list(region.blocks))]
    while stack:
        view = next(stack[-1], None)
        if view is None:
            stack.pop()
            continue
        op = view.operation
        if op == target:
            return index
        index += 1
        stack.extend(iter(block.operations) for region in reversed(list(op.regions)) for block in reversed(list(region.blocks)))
    return -1


# A name location, as the HLO importer gives every op: loc("fusion.3"(<child>)).
_NAME_LOCATION = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"\(')


def location_name(loc: "ir.Location") -> str | None:
    """The name of a name location (``loc("fusion.3"(...))``: the HLO importer names
    each op after its HLO instruction), or None for other locations (and for a name
    with no child location, ``loc("name")``)."""
    if _NAME_LOCATION_CLASS:
        if not isinstance(loc, _NAME_LOCATION_CLASS) or isinstance(loc.child_loc, _UNKNOWN_LOCATION):
            return None
        name = loc.name_str
        if _prints_plain(name):
            return name
    match = _NAME_LOCATION.match(str(loc))
    return match.group(1) if match is not None else None


def bare_location_name(loc: "ir.Location") -> str | None:
    """The name of a name location with no position under it (``loc("params['w']")``,
    as JAX names the arguments of the functions it lowers), else None."""
    if _NAME_LOCATION_CLASS and isinstance(loc, _NAME_LOCATION_CLASS) and isinstance(loc.child_loc, _UNKNOWN_LOCATION):
        return str(loc.name_str)
    return None


def source_order_key(loc: "ir.Location") -> tuple[int, str, int, int]:
    """A sort key putting located ops in file, line, column order (unlocated ones last)."""
    position = _file_position(loc)
    return (0, *position) if position is not None else (1, "", 0, 0)


def enclosing_function(op: "ir.Operation") -> str | None:
    """The symbol name of ``op`` when it is a ``func.func``, else of the innermost
    ``func.func`` around it; None outside functions."""
    current: "ir.Operation | None" = op
    while current is not None and current.name != "builtin.module":
        if current.name == "func.func":
            return ir.StringAttr(current.attributes["sym_name"]).value
        current = current.parent
    return None
