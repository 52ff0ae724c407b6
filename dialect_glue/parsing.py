"""Turn user input (MLIR text, a file, or a caller's own module) into an ``ir.Module``."""

from __future__ import annotations

import os
import re
from typing import Union

from hlo_indexing.dialect_glue.bindings import ir, sdy
from hlo_indexing.dialect_glue.context import current_or_default_context, make_context
from hlo_indexing.dialect_glue.hlo_import import import_hlo_text
from hlo_indexing.dialect_glue.hlo_text import looks_like_hlo_text
from hlo_indexing.errors import InputNotFoundError, InvalidArgumentError, ParseError, SourceLocation

# MLIR names the buffer of ``ir.Module.parse(text)`` "-"; we report the caller's name.
ANONYMOUS_BUFFER = "-"

# A file position inside a printed location: "name":line:col.
_FILE_POSITION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')

ModuleLike = Union[str, bytes, os.PathLike, "ir.Module", "ir.Operation", "ir.OpView"]


def location_of(loc: "ir.Location", filename: str | None = None) -> SourceLocation | None:
    """The file:line:col of an MLIR location (the first file position inside name, fused
    or call-site locations); ``filename`` replaces MLIR's anonymous buffer name ``-``."""
    match = _FILE_POSITION.search(str(loc))
    if match is None:
        return None
    name = match.group(1)
    if name == ANONYMOUS_BUFFER and filename is not None:
        name = filename
    return SourceLocation(name, int(match.group(2)), int(match.group(3)))


# A name location, as the HLO importer gives every op: loc("fusion.3"(<child>)).
_NAME_LOCATION = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"\(')


def location_name(loc: "ir.Location") -> str | None:
    """The name of a name location (``loc("fusion.3"(...))``: the HLO importer names
    each op after its HLO instruction), or None for other locations."""
    match = _NAME_LOCATION.match(str(loc))
    return match.group(1) if match is not None else None


def source_order_key(loc: "ir.Location") -> tuple[int, str, int, int]:
    """A sort key putting located ops in file, line, column order (unlocated ones last)."""
    where = location_of(loc)
    return (0, where.filename, where.line, where.column) if where is not None else (1, "", 0, 0)


def enclosing_function(op: "ir.Operation") -> str | None:
    """The symbol name of ``op`` when it is a ``func.func``, else of the innermost
    ``func.func`` around it; None outside functions."""
    current: "ir.Operation | None" = op
    while current is not None and current.name != "builtin.module":
        if current.name == "func.func":
            return ir.StringAttr(current.attributes["sym_name"]).value
        current = current.parent
    return None


def _parse_error(exc: "ir.MLIRError", filename: str) -> ParseError:
    diagnostics = list(getattr(exc, "error_diagnostics", []) or [])
    if not diagnostics:
        return ParseError(str(exc), SourceLocation(filename, 1, 1))
    first = diagnostics[0]
    location = location_of(first.location, filename) or SourceLocation(filename, 0, 0)
    error = ParseError(first.message, location)
    error.notes = tuple((location_of(note.location, filename), note.message) for note in first.notes)
    return error


def parse_module(
    source: ModuleLike,
    *,
    filename: str | None = None,
    context: "ir.Context | None" = None,
    input_format: str | None = None,
) -> "ir.Module | ir.Operation | ir.OpView":
    """Parse StableHLO/MHLO/CHLO text (pretty or generic form) into an ``ir.Module``.

    ``source`` may be:

    * MLIR text (``str``) or MLIR bytecode (``bytes``); ``filename`` names it in errors;
    * a path (``os.PathLike``), read with ``ir.Module.parseFile`` so locations keep it;
    * an ``ir.Module`` or ``ir.Operation`` of the caller (e.g. JAX's
      ``jit(f).lower(x).compiler_ir('stablehlo')``): returned unchanged, in the caller's
      context, never re-parsed. Clone it first if it must not be modified.

    XLA's HLO text is read too, through XLA's own parser and translator (see
    :mod:`hlo_indexing.dialect_glue.hlo_import`): when ``input_format="hlo"``, when the
    path or ``filename`` ends in ``.hlo``, or when the text is HLO by its content
    (``HloModule`` first, or headerless computations: :func:`looks_like_hlo_text`). ``input_format="mlir"`` forces MLIR.

    Raises :class:`hlo_indexing.errors.ParseError` carrying ``file:line:col`` and
    MLIR's (or XLA's) message, :class:`~hlo_indexing.errors.InputNotFoundError` (a
    ``FileNotFoundError``) for a path that names no file and
    :class:`~hlo_indexing.errors.InvalidArgumentError` (a ``TypeError``) for a source
    of another type. JAX's Shardy annotations (``sdy.mesh``,
    ``#sdy.sharding``) parse with the dialect the bindings ship (jaxlib's); bindings
    without it keep ``#sdy`` attributes opaque (Shardy's ops need the dialect). Example::

        module = parse_module("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {"
                              " return %a : tensor<4xf32> }")
    """
    if isinstance(source, (ir.Module, ir.Operation, ir.OpView)):
        return source
    if input_format not in (None, "mlir", "hlo"):
        raise InvalidArgumentError(f"parse_module: unknown input_format {input_format!r} (mlir or hlo)")
    if isinstance(source, os.PathLike) and not os.path.isfile(source):
        raise InputNotFoundError(f"parse_module: no such file: {os.fspath(source)!r}")
    if not isinstance(source, (str, bytes, os.PathLike)):
        raise InvalidArgumentError(
            f"parse_module: cannot parse a {type(source).__name__} (expected MLIR/HLO text, bytes, a path or a module)"
        )
    context = context or current_or_default_context()
    if _is_hlo(source, filename, input_format):
        return _import_hlo(source, filename, context)
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        try:
            return ir.Module.parseFile(path, context=context)
        except ir.MLIRError as exc:
            raise _parse_error(exc, path) from None
    name = filename or "<string>"
    try:
        return ir.Module.parse(source, context=context)
    except ir.MLIRError as exc:
        error = _parse_error(exc, name)
    if sdy is None and "sdy" in error.message:
        # bindings without Shardy: keep JAX's sharding annotations as opaque attributes
        try:
            return ir.Module.parse(source, context=make_context(allow_unregistered_dialects=True))
        except ir.MLIRError:
            pass
    raise error


def _is_hlo(source: str | bytes | os.PathLike, filename: str | None, input_format: str | None) -> bool:
    """HLO text: asked for, named ``*.hlo``, or HLO by its content."""
    if input_format is not None:
        return input_format == "hlo"
    name = os.fspath(source) if isinstance(source, os.PathLike) else filename
    if name is not None and str(name).endswith(".hlo"):
        return True
    if isinstance(source, os.PathLike):
        try:
            with open(source, "rb") as handle:
                return looks_like_hlo_text(handle.read(4096))
        except OSError:
            return False
    return isinstance(source, (str, bytes)) and looks_like_hlo_text(source)


def _import_hlo(
    source: str | bytes | os.PathLike, filename: str | None, context: "ir.Context"
) -> "ir.Module":
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ParseError(f"cannot read HLO file: {exc}", SourceLocation(path, 1, 1)) from None
        return import_hlo_text(text, path, context)
    text = source.decode("utf-8", errors="replace") if isinstance(source, bytes) else source
    return import_hlo_text(text, filename or "<string>", context)
