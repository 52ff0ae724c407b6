"""Import XLA's HLO text through XLA's own parser and HLO -> StableHLO translator.

jaxlib ships both as private entry points: ``jaxlib._hlo.hlo_module_from_text`` (the real
HLO parser) and ``jaxlib._jax.mlir.hlo_to_stablehlo`` (serialized ``HloModuleProto`` ->
MLIR bytecode). They are looked up on first use; a jaxlib without them gives an
:class:`~hlo_indexing.errors.UnsupportedError` naming the missing entry point.

What the translator gives: the ENTRY computation becomes the public ``func.func @main``,
every other computation a private ``func.func``; fusions become ``mhlo.fusion`` ops whose
region is the fused computation; tuple parameters/results of the entry are flattened;
each op carries a ``NameLoc`` with XLA's (uniquified) instruction name.

What this importer adds, because the translator loses or refuses it:

* layouts: each layout written in the text (tiles and all other fields included) is put
  back as ``hlo_indexing.layout = "{1,0:T(8,128)(2,1)}"`` on the op (an ``ArrayAttr`` of
  strings, one per result, for ops with several results; the default major-to-minor
  layout fills results whose layout is not written), and on ``func.func`` arguments and
  results (``arg_attrs``/``res_attrs``). The translator itself only sees a copy of the
  text with layout fields after ``minor_to_major`` blanked (it refuses some tiles);
* backend configs: an instruction's ``backend_config={...}`` as written (XLA's GPU
  backend keeps there, e.g., a Triton fusion's ``block_level_fusion_config`` and a dot's
  tile ``sizes``) becomes the string attribute ``hlo_indexing.backend_config`` on its op;
  a ``while`` whose carry tuple nests tuples (the translator flattens them into one
  operand per array, while its ``backend_config`` counts top-level elements) also gets
  ``hlo_indexing.tuple_arrays``, the number of arrays of each top-level element;
* convolution attributes of custom calls: the translator drops a custom call's
  ``window``, ``dim_labels``, ``feature_group_count`` and ``batch_group_count`` (XLA's GPU
  backend writes its cuDNN convolutions so); each, as written, becomes the string
  attribute ``hlo_indexing.<name>`` on the call (:func:`dropped_attribute`);
* scaled dots: the translator has none; a ``scaled-dot`` is translated as a custom call
  to ``hlo_text.SCALED_DOT_TARGET`` with the same operands, its dimension numbers in the
  call's ``backend_config`` (:func:`~.hlo_text.scaled_dots_as_custom_calls`), whose
  indexing rule is :func:`hlo_indexing.ops.contraction.scaled_dot_output_to_input`;
* locations: each op, argument and function is located at its instruction in the text,
  as ``loc("<name as written>"("<file>":line:col))``, so diagnostics point into the HLO
  file and users find ``%fusion.3`` by name.

Example::

    module = import_hlo_text(open("softmax.hlo").read(), "softmax.hlo", default_context())
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.hlo_text import (
    HloComputation,
    HloInstruction,
    as_entry,
    has_hlo_header,
    prepare_for_translation,
    scaled_dots_as_custom_calls,
    scan_hlo_text,
)
from hlo_indexing.dialect_glue.isolation import ChildDied, run_isolated
from hlo_indexing.errors import (
    HloIndexingError,
    InvalidArgumentError,
    InvalidInputError,
    ParseError,
    SourceLocation,
    UnsupportedError,
)

#: The attribute that holds a value's layout (XLA's layout text): on ``func.func`` arguments
#: and results, and on ops (one per result); read by :mod:`hlo_indexing.layout.attributes`.
LAYOUT_ATTRIBUTE = "hlo_indexing.layout"
#: The string attribute holding an instruction's ``backend_config`` as written.
BACKEND_CONFIG_ATTR = "hlo_indexing.backend_config"
#: On a ``while`` whose carry nests tuples: the number of arrays of each top-level element.
TUPLE_ARRAYS_ATTR = "hlo_indexing.tuple_arrays"


def dropped_attribute(name: str) -> str:
    """The op attribute holding a custom call's attribute ``name`` (one of
    :data:`~.hlo_text.CUSTOM_CALL_DROPPED`) as written in the HLO text."""
    return f"hlo_indexing.{name}"


_XLA_POSITION = re.compile(r"(\d+):(\d+): error: ")
_NAME_LOC = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"\)$')
_T = TypeVar("_T")


@dataclass(frozen=True)
class _EntryPoints:
    parse_text: Callable[[str], object]
    to_stablehlo: Callable[[bytes], bytes]
    error_type: type[BaseException]


def _jaxlib_version() -> str:
    """jaxlib's version, if the process has loaded it (the bindings may come from another
    provider: upstream mlir, IREE)."""
    jaxlib = sys.modules.get("jaxlib")
    return "not loaded" if jaxlib is None else str(getattr(jaxlib, "__version__", "unknown"))


@functools.cache
def _entry_points() -> _EntryPoints:
    """jaxlib's private HLO parser and translator, or UnsupportedError naming what is missing."""
    try:
        from jaxlib import _hlo, _jax  # type: ignore[attr-defined]  # private modules, not in jaxlib's stubs; optional (jaxlib provider only); private: kept behind this module
    except ImportError as exc:
        raise UnsupportedError(
            f"HLO text input needs jaxlib._hlo and jaxlib._jax, which jaxlib "
            f"{_jaxlib_version()} does not provide ({exc})"
        ) from None
    parse_text = getattr(_hlo, "hlo_module_from_text", None)
    to_stablehlo = getattr(getattr(_jax, "mlir", None), "hlo_to_stablehlo", None)
    for entry, value in (
        ("jaxlib._hlo.hlo_module_from_text", parse_text),
        ("jaxlib._jax.mlir.hlo_to_stablehlo", to_stablehlo),
    ):
        if value is None:
            raise UnsupportedError(
                f"HLO text input needs {entry}, which jaxlib {_jaxlib_version()} does not provide"
            )
    assert parse_text is not None and to_stablehlo is not None  # checked by the loop above
    return _EntryPoints(parse_text, to_stablehlo, getattr(_jax, "JaxRuntimeError", RuntimeError))


def _xla_parse_error(message: str, filename: str) -> ParseError:
    """XLA's parser message at its first ``line:col`` as a :class:`ParseError`.

    XLA writes one block per error: ``was parsing L:C: error: <message, possibly on
    several lines>`` followed by the source line and a caret line."""
    blocks = []
    for block in message.split("was parsing ")[1:]:
        match = _XLA_POSITION.match(block)
        if match is None:
            continue
        lines = block[match.end() :].rstrip("\n").split("\n")
        text_lines = lines[:-2] if len(lines) > 2 and lines[-2].strip() and "^" in lines[-1] else lines
        text = " ".join(line.strip() for line in text_lines if line.strip())
        blocks.append((int(match.group(1)), int(match.group(2)), text))
    if not blocks:
        return ParseError(message.strip(), SourceLocation(filename, 1, 1))
    line, column = blocks[0][0], blocks[0][1]
    texts = [text for l, c, text in blocks if (l, c) == (line, column)]
    return ParseError("; ".join(dict.fromkeys(texts)), SourceLocation(filename, line, column))


@contextlib.contextmanager
def _native_stderr_captured() -> Iterator[None]:
    """Keep XLA's C++ logging (stack traces of RET_CHECK failures) off the user's stderr;
    the failure itself is reported through the Python exception."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


#: XLA's names of a parsed module: (computation name, instruction names) in text order.
Names = list[tuple[str, list[str]]]


class _XlaRejected(Exception):
    """XLA's parser (``parse``) or translator (``translate``) refused the text."""

    def __init__(self, stage: str, message: str):
        super().__init__(stage, message)  # both in args: the exception crosses a pickle
        self.stage, self.message = stage, message


#: Put before headerless text (on its first line, so that lines keep their numbers):
#: XLA's parser reads text without ``HloModule`` as a single instruction.
_HEADER_PREFIX = "HloModule m "


def _with_header(text: str) -> tuple[str, int]:
    """``text`` as XLA's parser needs it, and by how many columns line 1 moved."""
    shift = 0 if has_hlo_header(text) else len(_HEADER_PREFIX)
    return (_HEADER_PREFIX + text if shift else text), shift


def _parse_error_at(message: str, filename: str, shift: int) -> ParseError:
    error = _xla_parse_error(message, filename)
    if shift and error.location is not None and error.location.line == 1:
        where = error.location
        error = ParseError(error.message, SourceLocation(where.filename, 1, max(1, where.column - shift)))
    return error


def _parses(text: str) -> str | None:
    """XLA's parse error message for ``text``, None when it parses (run isolated)."""
    entry = _entry_points()
    try:
        entry.parse_text(text)
    except entry.error_type as exc:
        return str(exc)
    return None


def parse_xla_hlo_module(text: str, filename: str) -> object:
    """XLA's own ``HloModule`` for HLO text (jaxlib's private parser, behind this module):
    ``computations()``, each with ``instructions()`` (``name``, ``operands()``,
    ``to_string()``), and ``to_string()``. Raises ParseError naming the position (also
    when XLA's parser crashes on the text: it first runs isolated, see
    :func:`_run_xla`), or UnsupportedError when jaxlib lacks the parser."""
    entry = _entry_points()
    full, shift = _with_header(text)
    start = _module_start(text, filename)
    try:
        message = run_isolated(_parses, full, what="XLA's HLO parser", location=start)
    except ChildDied as exc:
        raise ParseError(f"XLA's HLO parser crashed on this module ({exc.how})" + (f": {exc.log}" if exc.log else ""), start) from None
    if message is not None:
        raise _parse_error_at(message, filename, shift)
    return entry.parse_text(full)


def _parse_and_translate(text: str) -> tuple[Names, bytes]:
    """XLA's names of ``text``'s computations and instructions, and its translation to
    StableHLO bytecode. May abort the process on malformed text: see :func:`_run_xla`."""
    entry = _entry_points()
    try:
        hlo_module = entry.parse_text(_with_header(text)[0])
        stripped, changed = prepare_for_translation(text)
        translatable = entry.parse_text(_with_header(stripped)[0]) if changed else hlo_module
        if any(i.opcode.name == "kScaledDot" for c in translatable.computations() for i in c.instructions()):  # type: ignore[attr-defined]
            translatable = entry.parse_text(scaled_dots_as_custom_calls(translatable.to_string()))  # type: ignore[attr-defined]
    except entry.error_type as exc:
        raise _XlaRejected("parse", str(exc)) from None
    names = [(c.name, [i.name for i in c.instructions()]) for c in hlo_module.computations()]  # type: ignore[attr-defined]
    proto = translatable.as_serialized_hlo_module_proto()  # type: ignore[attr-defined]
    try:
        with _native_stderr_captured():
            return names, entry.to_stablehlo(proto)
    except entry.error_type as exc:
        raise _XlaRejected("translate", str(exc).strip()) from None


def _parse_translate_and_load(text: str) -> tuple[Names, bytes]:
    """:func:`_parse_and_translate`, then load and verify the translation in a fresh,
    single-threaded context: for some malformed modules (a ``reduce`` without operands)
    the translator writes IR that crashes MLIR's reader or verifier. Run in the isolated
    child, so that the parent only loads bytecode that loaded once."""
    names, bytecode = _parse_and_translate(text)
    context = make_context()
    context.enable_multithreading(False)
    try:
        ir.Module.parse(bytecode, context=context).operation.verify()
    except ir.MLIRError:
        pass  # reported, located, by the parent's own load
    return names, bytecode


def _run_xla(text: str, filename: str, isolate: bool) -> tuple[Names, bytes]:
    """:func:`_parse_and_translate`, in a forked child unless ``isolate`` is false (text
    this project produced or checked): XLA's parser CHECK-fails (aborting the process)
    or allocates without bound on some malformed text."""
    _entry_points()  # UnsupportedError here, in the caller's process
    start = _module_start(text, filename)
    try:
        if isolate:
            return run_isolated(_parse_translate_and_load, text, what="XLA's HLO parser", location=start)
        return _parse_and_translate(text)
    except _XlaRejected as exc:
        if exc.stage == "parse":
            raise _parse_error_at(exc.message, filename, _with_header(text)[1]) from None
        raise UnsupportedError(f"XLA's HLO -> StableHLO translator failed: {exc.message}", start) from None
    except ChildDied as exc:
        raise ParseError(
            f"XLA's HLO parser or translator crashed on this module ({exc.how})"
            + (f": {exc.log}" if exc.log else "")
            + "; the module is malformed (e.g. an instruction that does not fit its computation)",
            start,
        ) from None
    except HloIndexingError:
        raise
    except Exception as exc:  # noqa: BLE001 - what XLA raised in the child (e.g. RESOURCE_EXHAUSTED)
        raise ParseError(f"XLA's HLO parser failed on this module: {type(exc).__name__}: {exc}", start) from None


def _module_start(text: str, filename: str) -> SourceLocation:
    """Where the module starts: its ``HloModule`` line, else the first line."""
    match = re.search(r"^[ \t]*HloModule\b", text, re.MULTILINE)
    line = text.count("\n", 0, match.start()) + 1 if match else 1
    column = (match.start() - text.rfind("\n", 0, match.start())) if match else 1
    return SourceLocation(filename, line, column if match else 1)


def _translation_error(
    exc: "ir.MLIRError", instructions: dict[str, HloInstruction], filename: str
) -> UnsupportedError:
    """The translator's output did not load (it writes ``mhlo.unknown`` for instructions it
    cannot translate): name the instruction at its place in the text."""
    diagnostics = list(getattr(exc, "error_diagnostics", []) or [])
    if not diagnostics:
        return UnsupportedError(str(exc), SourceLocation(filename, 1, 1))
    first = diagnostics[0]
    instruction = instructions.get(_name_of(first.location) or "")
    if instruction is None:
        return UnsupportedError(first.message, SourceLocation(filename, 1, 1))
    return UnsupportedError(
        f"XLA's HLO -> StableHLO translator cannot translate instruction "
        f"'{instruction.name}' ({instruction.opcode}): {first.message}",
        SourceLocation(filename, instruction.line, instruction.column),
    )


def _align(
    names: Names, computations: tuple[HloComputation, ...]
) -> tuple[dict[str, HloInstruction], dict[str, HloComputation]]:
    """Map XLA's uniquified instruction and computation names to the scanned text.

    XLA keeps text order and renames duplicates ``name`` -> ``name.N``; computations and
    instructions are matched in order under that rule."""
    instructions: dict[str, HloInstruction] = {}
    by_computation: dict[str, HloComputation] = {}
    texts = iter(computations)
    for computation_name, instruction_names in names:
        text = _next_matching(texts, computation_name, lambda c: c.name)
        if text is None:
            break
        by_computation[computation_name] = text
        # The translator spells function names with '_' where XLA has '-'.
        by_computation[computation_name.replace("-", "_")] = text
        text_instructions = iter(text.instructions)
        for instruction_name in instruction_names:
            match = _next_matching(text_instructions, instruction_name, lambda i: i.name)
            if match is None:
                break
            instructions[instruction_name] = match
    return instructions, by_computation


def _next_matching(items: Iterator[_T], xla_name: str, name_of: Callable[[_T], str]) -> _T | None:
    for item in items:
        written = name_of(item)
        if xla_name == written or (
            xla_name.startswith(written + ".") and xla_name[len(written) + 1 :].isdigit()
        ):
            return item
    return None


def _default_layout(rank: int) -> str:
    return "{" + ",".join(str(d) for d in range(rank - 1, -1, -1)) + "}"


def _ranks(types: list["ir.Type"]) -> tuple[int, ...] | None:
    ranks = []
    for type_ in types:
        if not isinstance(type_, ir.RankedTensorType):
            return None
        ranks.append(ir.RankedTensorType(type_).rank)
    return tuple(ranks)


def _layout_attr(instruction: HloInstruction, types: list["ir.Type"]) -> "ir.Attribute | None":
    """The layout attribute for values of ``types`` produced by ``instruction``, if the
    text writes a layout and the values are the instruction's arrays (same ranks)."""
    if all(layout is None for layout in instruction.layouts):
        return None
    if _ranks(types) != instruction.ranks:
        return None
    texts = [
        layout if layout is not None else _default_layout(rank)
        for layout, rank in zip(instruction.layouts, instruction.ranks)
    ]
    if len(texts) == 1:
        return ir.StringAttr.get(texts[0])
    return ir.ArrayAttr.get([ir.StringAttr.get(t) for t in texts])


def _text_location(name: str, line: int, column: int, filename: str) -> "ir.Location":
    return ir.Location.name(name, ir.Location.file(filename, line, column))


def _with_attr(dictionary: "ir.Attribute | None", key: str, value: "ir.Attribute") -> "ir.Attribute":
    entries = {}
    if dictionary is not None:
        for named in ir.DictAttr(dictionary):  # type: ignore[attr-defined]  # iterable (__len__/__getitem__); the stubs lack __iter__
            entries[named.name] = named.attr
    entries[key] = value
    return ir.DictAttr.get(entries)


def _set_value_attrs(func_op: "ir.Operation", key: str, attrs: dict[int, "ir.Attribute"], count: int) -> None:
    """Add ``hlo_indexing.layout`` to some entries of ``arg_attrs``/``res_attrs``."""
    if not attrs:
        return
    existing = func_op.attributes[key] if key in func_op.attributes else None
    current = list(ir.ArrayAttr(existing)) if existing is not None else [None] * count
    updated = [
        _with_attr(current[i], LAYOUT_ATTRIBUTE, attrs[i]) if i in attrs else (current[i] or ir.DictAttr.get({}))
        for i in range(count)
    ]
    func_op.attributes[key] = ir.ArrayAttr.get(updated)


def _annotate_function(
    func_op: "ir.Operation",
    computation: HloComputation | None,
    instructions: dict[str, HloInstruction],
    filename: str,
) -> None:
    """Locations and layouts on a function's arguments and results, and on its ops."""
    if computation is not None:
        func_op.location = ir.Location.name(
            computation.name, ir.Location.file(filename, computation.line, computation.column)
        )
        root = next((i for i in computation.instructions if i.is_root), None)
        function_type = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
        if root is not None:
            results = list(function_type.results)
            layout = _layout_attr(root, results)
            if layout is not None and len(results) == 1:
                _set_value_attrs(func_op, "res_attrs", {0: layout}, 1)
            elif layout is not None:
                per_result = {
                    i: element
                    for i, (text, element) in enumerate(zip(root.layouts, ir.ArrayAttr(layout)))
                    if text is not None
                }
                _set_value_attrs(func_op, "res_attrs", per_result, len(results))
        block = func_op.regions[0].blocks[0]
        # A tuple parameter of the entry is flattened into one argument per element,
        # all named after the parameter.
        by_parameter: dict[str, list[ir.BlockArgument]] = {}
        for argument in block.arguments:
            by_parameter.setdefault(_name_of(argument.location) or "", []).append(argument)
        arg_layouts: dict[int, ir.Attribute] = {}
        for name, arguments in by_parameter.items():
            parameter = instructions.get(name)
            if parameter is None:
                continue
            for argument in arguments:
                argument.set_location(
                    _text_location(parameter.name, parameter.line, parameter.column, filename)
                )
            layout = _layout_attr(parameter, [a.type for a in arguments])
            if layout is not None and len(arguments) == 1:
                arg_layouts[arguments[0].arg_number] = layout
            elif layout is not None:
                for argument, text, element in zip(arguments, parameter.layouts, ir.ArrayAttr(layout)):
                    if text is not None:
                        arg_layouts[argument.arg_number] = element
        _set_value_attrs(func_op, "arg_attrs", arg_layouts, len(block.arguments))
    line, column = (computation.line, computation.column) if computation is not None else (1, 1)
    # XLA's translator names a get_tuple_element after the instruction it reads.
    tuple_reads = {i.tuple_read: i for i in computation.instructions if i.tuple_read} if computation is not None else {}
    for region in func_op.regions:
        for block in region.blocks:
            for op in block.operations:
                _annotate_op(op.operation, instructions, filename, (line, column), tuple_reads)


def _annotate_op(
    op: "ir.Operation",
    instructions: dict[str, HloInstruction],
    filename: str,
    fallback: tuple[int, int],
    tuple_reads: dict[tuple[str, int], HloInstruction],
) -> None:
    """Locate ``op`` at its instruction (with its layout); an op the text scan could not
    match (unusual formatting, an op the translator made up) is located at its
    computation, so that errors about it still point into the file. A
    ``get_tuple_element`` named after the instruction it reads is located at the
    ``get-tuple-element`` of ``tuple_reads`` (by that instruction and the index) and
    named after it."""
    name = _name_of(op.location)
    instruction = instructions.get(name or "")
    if instruction is not None and instruction.opcode != "get-tuple-element" and op.name.endswith(".get_tuple_element"):
        instruction = tuple_reads.get((instruction.name, ir.IntegerAttr(op.attributes["index"]).value), instruction)
    if instruction is not None:
        op.location = _text_location(instruction.name, instruction.line, instruction.column, filename)
        layout = _layout_attr(instruction, [r.type for r in op.results])
        if layout is not None:
            op.attributes[LAYOUT_ATTRIBUTE] = layout
        if instruction.backend_config is not None:
            op.attributes[BACKEND_CONFIG_ATTR] = ir.StringAttr.get(instruction.backend_config)
        if instruction.opcode == "while" and any(count != 1 for count in instruction.tuple_arrays):
            op.attributes[TUPLE_ARRAYS_ATTR] = ir.DenseI64ArrayAttr.get(list(instruction.tuple_arrays))
        if instruction.dropped_attributes and op.name.endswith(".custom_call"):
            for attribute, value in instruction.dropped_attributes:
                op.attributes[dropped_attribute(attribute)] = ir.StringAttr.get(value)
    elif '":' not in str(op.location):
        op.location = _text_location(name or op.name, fallback[0], fallback[1], filename)
    for region in op.regions:
        for block in region.blocks:
            for argument in block.arguments:
                owner = instructions.get(_name_of(argument.location) or "")
                if owner is not None:
                    argument.set_location(
                        _text_location(owner.name, owner.line, owner.column, filename)
                    )
            for inner in block.operations:
                _annotate_op(inner.operation, instructions, filename, fallback, tuple_reads)


def _name_of(location: "ir.Location") -> str | None:
    match = _NAME_LOC.match(str(location))
    return match.group(1) if match else None


def import_hlo_text(
    text: str, filename: str, context: "ir.Context", *, isolate: bool = True, entry: str | None = None
) -> "ir.Module":
    """Parse HLO text with XLA's parser and translate it to a StableHLO/MHLO module in
    ``context``, keeping layouts and instruction names (see the module docstring).

    ``entry`` names a computation to import as the module's entry instead of its ENTRY
    (``fused_computation``): it and the computations written before it are imported,
    the ENTRY computation is not (:func:`~.hlo_text.as_entry`), so it is analysed by
    itself, with its own parameters, as XLA's ``print_indexing`` reads a fusion's maps
    from its fused computation; an ENTRY whose call of it is ill-typed is then not
    checked. :class:`InvalidArgumentError` when the text has no such computation.

    XLA's parser aborts its process on some malformed text, so by default it runs in a
    forked child (:mod:`~hlo_indexing.dialect_glue.isolation`, ~2 ms); ``isolate=False``
    runs it in-process, for text this project produced or already checked.

    Raises :class:`ParseError` (XLA's message at ``filename:line:col``) for text XLA's
    parser rejects or crashes on, :class:`TimeLimitError` past ``limits.HLO_PARSE_SECONDS``,
    :class:`InvalidInputError` for a module that parses but is not valid (a fusion whose
    parameters disagree with its operands), and :class:`UnsupportedError` when jaxlib
    lacks the entry points or the translator refuses the module.
    """
    if entry is not None:
        source = as_entry(text, entry)
        if source is None:
            known = ", ".join(c.name for c in scan_hlo_text(text).computations)
            raise InvalidArgumentError(f"no computation named '{entry}' in {filename} (computations: {known})")
        text = source
    names, bytecode = _run_xla(text, filename, isolate)
    scan = scan_hlo_text(text)
    instructions, computations = _align(names, scan.computations)
    try:
        module = ir.Module.parse(bytecode, context=context)
    except ir.MLIRError as exc:
        raise _translation_error(exc, instructions, filename) from None
    entry_computation = next((c for c in scan.computations if (c.name == entry if entry else c.is_entry)), None)
    with context, ir.Location.unknown(context):
        for op in module.body.operations:
            if op.operation.name != "func.func":
                continue
            func_op = op.operation
            name = ir.StringAttr(func_op.attributes["sym_name"]).value
            is_public = "sym_visibility" not in func_op.attributes
            computation = entry_computation if is_public else computations.get(name)
            _annotate_function(func_op, computation, instructions, filename)
        module.operation.location = ir.Location.file(filename, 1, 1)
    verify_imported(module, filename)
    return module


def verify_imported(module: "ir.Module", filename: str) -> None:
    """What XLA's parser does not check (jaxlib exposes no HLO verifier): the MLIR
    verifier on the translation, and that each ``mhlo.fusion``'s computation takes its
    operands' types and returns its result types. :class:`InvalidInputError` at the
    offending instruction."""
    with module.context:
        if not module.operation.verify():
            raise InvalidInputError("the translated module does not verify", SourceLocation(filename, 1, 1))

        problems: list[InvalidInputError] = []

        def visit(op: "ir.Operation") -> "ir.WalkResult":
            if op.name == "mhlo.fusion" and len(op.regions) and len(op.regions[0].blocks):
                block = op.regions[0].blocks[0]
                operand_types = [str(v.type) for v in op.operands]
                parameter_types = [str(a.type) for a in block.arguments]
                operations = list(block.operations)
                root_types = [str(v.type) for v in operations[-1].operands] if operations else []
                result_types = [str(v.type) for v in op.results]
                if operand_types != parameter_types or root_types != result_types:
                    problems.append(
                        InvalidInputError(
                            f"fusion computation takes ({', '.join(parameter_types)}) and returns "
                            f"({', '.join(root_types)}), but the fusion passes ({', '.join(operand_types)}) "
                            f"and produces ({', '.join(result_types)})",
                            _location_of_op(op, filename),
                        )
                    )
                    return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        if problems:
            raise problems[0]


def _location_of_op(op: "ir.Operation", filename: str) -> SourceLocation:
    """The file position inside an op's location (file:1:1 when it has none)."""
    match = re.search(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)', str(op.location))
    if match is None:
        return SourceLocation(filename, 1, 1)
    return SourceLocation(filename, int(match.group(2)), int(match.group(3)))
