"""Turn user input (MLIR text, a file, or a caller's own module) into an ``ir.Module``."""

from __future__ import annotations

import os
from typing import Union

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import ParseError, SourceLocation

# MLIR names the buffer of ``ir.Module.parse(text)`` "-"; we report the caller's name.
ANONYMOUS_BUFFER = "-"

ModuleLike = Union[str, bytes, os.PathLike, "ir.Module", "ir.Operation", "ir.OpView"]


def location_of(loc: "ir.Location", filename: str | None = None) -> SourceLocation | None:
    """The file:line:col of an MLIR location (the first file position inside fused or
    call-site locations); ``filename`` replaces MLIR's anonymous buffer name ``-``."""
    text = str(loc)
    start = text.find('"')
    if start < 0:
        return None
    end = text.find('"', start + 1)
    rest = text[end + 1 :].split(":")
    if len(rest) < 3:
        return None
    try:
        line = int(rest[1])
        column = int("".join(ch for ch in rest[2] if ch.isdigit()))
    except ValueError:
        return None
    name = text[start + 1 : end]
    if name == ANONYMOUS_BUFFER and filename is not None:
        name = filename
    return SourceLocation(name, line, column)


def _parse_error(exc: "ir.MLIRError", filename: str) -> ParseError:
    diagnostics = list(getattr(exc, "error_diagnostics", []) or [])
    if not diagnostics:
        return ParseError(str(exc), SourceLocation(filename, 1, 1))
    first = diagnostics[0]
    location = location_of(first.location, filename) or SourceLocation(filename, 0, 0)
    return ParseError(first.message, location)


def parse_module(
    source: ModuleLike,
    *,
    filename: str | None = None,
    context: "ir.Context | None" = None,
) -> "ir.Module | ir.Operation":
    """Parse StableHLO/MHLO/CHLO text (pretty or generic form) into an ``ir.Module``.

    ``source`` may be:

    * MLIR text (``str``) or MLIR bytecode (``bytes``); ``filename`` names it in errors;
    * a path (``os.PathLike``), read with ``ir.Module.parseFile`` so locations keep it;
    * an ``ir.Module`` or ``ir.Operation`` of the caller (e.g. JAX's
      ``jit(f).lower(x).compiler_ir('stablehlo')``): returned unchanged, in the caller's
      context, never re-parsed. Clone it first if it must not be modified.

    Raises :class:`hlo_indexing.errors.ParseError` carrying ``file:line:col`` and
    MLIR's message. Example::

        module = parse_module("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {"
                              " return %a : tensor<4xf32> }")
    """
    if isinstance(source, (ir.Module, ir.Operation, ir.OpView)):
        return source
    context = context or current_or_default_context()
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        try:
            return ir.Module.parseFile(path, context=context)
        except ir.MLIRError as exc:
            raise _parse_error(exc, path) from None
    if not isinstance(source, (str, bytes)):
        raise TypeError(f"parse_module: cannot parse a {type(source).__name__}")
    name = filename or "<string>"
    try:
        return ir.Module.parse(source, context=context)
    except ir.MLIRError as exc:
        raise _parse_error(exc, name) from None
