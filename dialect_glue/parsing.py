"""Turn user input (MLIR text, a file, or a caller's own module) into an ``ir.Module``."""

from __future__ import annotations

import os
import re
from typing import Union

from hlo_indexing.dialect_glue.bindings import ir, sdy
from hlo_indexing.dialect_glue.context import current_or_default_context, make_context
from hlo_indexing.dialect_glue.hlo_import import import_hlo_text
from hlo_indexing.dialect_glue.hlo_text import looks_like_hlo_text
from hlo_indexing.dialect_glue.isolation import ChildDied, run_isolated
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.errors import (
    InputNotFoundError,
    InvalidArgumentError,
    LimitExceededError,
    ParseError,
    SourceLocation,
)
from hlo_indexing.limits import MAX_ATTRIBUTE_ELEMENTS, MAX_DIMENSION_INDEX, MAX_RESULT_INDEX

ModuleLike = Union[str, bytes, os.PathLike, "ir.Module", "ir.Operation", "ir.OpView"]


def _parse_error(exc: "ir.MLIRError", filename: str, text: str | None = None) -> ParseError:
    diagnostics = list(getattr(exc, "error_diagnostics", []) or [])
    if not diagnostics:
        return ParseError(str(exc), SourceLocation(filename, 1, 1))
    first = diagnostics[0]
    location = location_of(first.location, filename) or _guess_location(first.message, filename, text)
    error = ParseError(first.message, location)
    error.notes = tuple((location_of(note.location, filename), note.message) for note in first.notes)
    return error


#: Each list of convolution dimension numbers (``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]``),
#: in the op's custom form or in ``#stablehlo.conv<...>``/``#mhlo.conv<...>``: a list after
#: ``dim_numbers =``, ``conv<``, ``]x`` or ``->``, checked on its own (the parser reads, and
#: allocates for, the lists before any malformed rest, e.g. ``->:[b, 0, 1, f]``).
_CONV_DIMENSIONS = re.compile(r"(?:dim_numbers\s*=|conv<|(?<=\])\s*x|->)\s*(\[[^\[\]]*\])")
_CONV_ATTRIBUTE = re.compile(r"conv\s*<")
_NUMBER = re.compile(r"\d+")
#: A 1-d integer ``dense`` attribute: ``dense<1> : tensor<2147483648xi64>`` (or ``xindex``).
_DENSE_INTEGERS = re.compile(r"dense<[^<>]*>\s*:\s*tensor<(\d+)x(?:(?:i|ui|si)\d+|index)>")
#: ``%name#N`` (result N of a multi-result op) and ``%name:N =`` (an op with N results).
_RESULT_NUMBER = re.compile(r"%[\w.$-]+[#:](\d+)")


def check_magnitudes(text: str, filename: str) -> None:
    """Refuse the numbers MLIR's parser allocates memory in proportion to, before it sees
    them: convolution dimension numbers above ``limits.MAX_DIMENSION_INDEX`` (a dimension
    ``2147483648`` takes minutes and ~9.5 GB) and result numbers above
    ``limits.MAX_RESULT_INDEX`` (``%0#2147483647`` ends in ``std::bad_alloc``)."""

    def refuse(what: str, value: int, offset: int, limit: str, maximum: int) -> LimitExceededError:
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        return LimitExceededError(
            f"{what} {value} exceeds the limit of {maximum} (limits.{limit})",
            SourceLocation(filename, line, column),
            limit=limit,
            value=value,
        )

    # Dimension numbers start after 'dim_numbers =' or in a '#...conv<...>' attribute:
    # text with neither is spared the pattern's scan (~1 ms per 44 kB).
    has_convolutions = "dim_numbers" in text or _CONV_ATTRIBUTE.search(text) is not None
    for match in _CONV_DIMENSIONS.finditer(text) if has_convolutions else ():
        for number in _NUMBER.finditer(match.group(1)):
            if int(number.group(0)) > MAX_DIMENSION_INDEX:
                offset = match.start(1) + number.start()
                raise refuse("convolution dimension number", int(number.group(0)), offset, "MAX_DIMENSION_INDEX", MAX_DIMENSION_INDEX)
    for match in _DENSE_INTEGERS.finditer(text):
        if int(match.group(1)) > MAX_ATTRIBUTE_ELEMENTS:
            raise refuse(
                "1-d integer dense attribute of", int(match.group(1)), match.start(1), "MAX_ATTRIBUTE_ELEMENTS", MAX_ATTRIBUTE_ELEMENTS
            )
    for match in _RESULT_NUMBER.finditer(text):
        if int(match.group(1)) > MAX_RESULT_INDEX:
            raise refuse("result number", int(match.group(1)), match.start(1), "MAX_RESULT_INDEX", MAX_RESULT_INDEX)


#: Ops whose custom parser (Shardy's, in jaxlib 0.10.2) corrupts the heap when the op
#: fails to parse after its region, if the region defined a value that an op before it
#: had used (a forward reference): e.g. ``"func.return"(%1) ...`` followed by
#: ``sdy.manual_computation(%x) ... (%a: ...) { %1 = stablehlo.negate %a ... }`` without
#: its ``: (...) -> ...`` type. Nothing is reported then; the process dies later, in
#: another allocation (the fuzz campaign's "free(): unaligned chunk detected in tcache
#: 2" thousands of cases on). Text that names them is parsed in an isolated child first.
_HEAP_UNSAFE_PARSERS = re.compile(r"sdy\.(?:manual|named)_computation\b")  # no leading \b: 40x faster
#: The first bytes of MLIR bytecode.
_BYTECODE_MAGIC = b"ML\xefR"


def trial_parse(
    text: str | bytes, filename: str
) -> tuple[str, SourceLocation | None, tuple[tuple[SourceLocation | None, str], ...]] | None:
    """Parse ``text`` in a new context: None when it parses, else the (message, location,
    notes) of its parse error. Run in an isolated child by :func:`check_in_child`."""
    try:
        ir.Module.parse(text, context=make_context())
    except ir.MLIRError as exc:
        error = _parse_error(exc, filename, text if isinstance(text, str) else None)
        return error.message, error.location, error.notes
    return None


def check_in_child(text: str | bytes, filename: str) -> None:
    """Raise the :class:`ParseError` of ``text`` (MLIR text, or bytes holding it) when it
    names an op whose parser may corrupt the heap on failure (:data:`_HEAP_UNSAFE_PARSERS`)
    and does not parse: the parse is tried in an isolated child
    (:mod:`~hlo_indexing.dialect_glue.isolation`, ~14 ms), so that only text MLIR parsed
    without failing is parsed in this process. MLIR bytecode is not checked."""
    if isinstance(text, bytes):
        if text.startswith(_BYTECODE_MAGIC):
            return
        searched = text.decode("utf-8", errors="replace")
    else:
        searched = text
    if _HEAP_UNSAFE_PARSERS.search(searched) is None:
        return
    start = SourceLocation(filename, 1, 1)
    try:
        failure = run_isolated(trial_parse, text, filename, what="MLIR's parser", location=start)
    except ChildDied as exc:
        raise ParseError(f"MLIR's parser crashed on this module ({exc.how})", start) from None
    if failure is not None:
        message, location, notes = failure
        error = ParseError(message, location)
        error.notes = notes
        raise error


def _guess_location(message: str, filename: str, text: str | None) -> SourceLocation:
    """For a verifier error at an op written with ``loc(unknown)``: the first place the
    text names the op (``'stablehlo.add' op ...``), else the start of the text."""
    match = re.match(r"'([\w.$-]+)' op", message)
    if match and text:
        at = re.search(rf"(?<![\w.]){re.escape(match.group(1))}(?![\w.])", text)
        if at is None:
            at = re.search(rf'"{re.escape(match.group(1))}"', text)  # generic form
        if at is not None:
            line = text.count("\n", 0, at.start()) + 1
            return SourceLocation(filename, line, at.start() - (text.rfind("\n", 0, at.start()) + 1) + 1)
    return SourceLocation(filename, 1, 1)


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
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            pass  # parseFile reports it
        else:
            check_magnitudes(text, path)
            check_in_child(text, path)
        try:
            return ir.Module.parseFile(path, context=context)
        except ir.MLIRError as exc:
            raise _parse_error(exc, path) from None
        except MemoryError:  # std::bad_alloc in the parser: a size written in the text
            raise LimitExceededError("out of memory while parsing this module", SourceLocation(path, 1, 1)) from None
    if not isinstance(source, (str, bytes)):
        raise InvalidArgumentError(f"parse_module: cannot parse a {type(source).__name__}")
    name = filename or "<string>"
    if isinstance(source, str):
        check_magnitudes(source, name)
    check_in_child(source, name)
    try:
        return ir.Module.parse(source, context=context)
    except ir.MLIRError as exc:
        error = _parse_error(exc, name, source if isinstance(source, str) else None)
    except MemoryError:  # std::bad_alloc in the parser: a size written in the text
        raise LimitExceededError("out of memory while parsing this module", SourceLocation(name, 1, 1)) from None
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
    if not isinstance(source, (str, bytes)):
        raise InvalidArgumentError(f"parse_module: cannot parse a {type(source).__name__} as HLO")
    text = source.decode("utf-8", errors="replace") if isinstance(source, bytes) else source
    return import_hlo_text(text, filename or "<string>", context)
