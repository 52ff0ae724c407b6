"""A small scanner over XLA's HLO text: where computations, instructions and layouts are.

It does not parse HLO (XLA's own parser does that, see :mod:`hlo_import`); it finds, in
the user's text, what XLA's HLO -> StableHLO translator loses or refuses:

* each instruction's name, line and column, and the layouts written in its shape;
* every layout's *extra fields* (tiles, ``L``, ``E``, ``S``, ``SC``, ``M``, ...), which
  :func:`prepare_for_translation` blanks out so that the translator accepts the text while
  every line and column stays where it was.

Layouts are the ``{...}`` written right after an array shape ``type[dims]``; braces
elsewhere (``dimensions={1,0}``, ``slice={[0:2]}``, ``window={...}``) are not layouts.

Example::

    >>> scan = scan_hlo_text("HloModule m\\nENTRY e {\\n"
    ...                      "  ROOT p = f32[2,3]{0,1:T(2,2)} parameter(0)\\n}\\n")
    >>> inst = scan.computations[0].instructions[0]
    >>> (inst.name, inst.line, inst.column, inst.layouts)
    ('p', 3, 3, ('{0,1:T(2,2)}',))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# An array shape followed directly by a layout: group 1 = element type, 2 = dims, 3 = layout body.
_ARRAY_WITH_LAYOUT = re.compile(
    r"\b(pred|bf16|tf32|token|[suf]\d+[a-z0-9]*|c64|c128)\[([^\[\]]*)\](?:\{([^{}\n]*)\})?"
)
_INSTRUCTION = re.compile(
    r"^[ \t]*(ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*", re.MULTILINE
)
_COMPUTATION = re.compile(
    r"^[ \t]*(ENTRY[ \t]+)?%?(?!ROOT\b|HloModule\b)([A-Za-z_][\w.\-]*)(?![\w.\-])(?![ \t]*=)"
    r"[^\n]*\{[ \t]*$",
    re.MULTILINE,
)
_HEADER = re.compile(r"^\s*(?://[^\n]*\n\s*|/\*.*?\*/\s*)*HloModule\b", re.DOTALL)


@dataclass(frozen=True)
class HloInstruction:
    """One instruction of the text: its name as written (without ``%``), the 1-based
    position where the statement starts (``ROOT`` or the name), its opcode, and the layouts written in its shape, one entry per array of
    the shape in order (``None`` where an array has no written layout; a tuple shape has
    several entries, a scalar without braces has ``(None,)``)."""

    name: str
    line: int
    column: int
    opcode: str
    is_root: bool
    layouts: tuple[str | None, ...]
    ranks: tuple[int, ...]
    parameter_number: int | None
    #: The ``backend_config={...}`` attribute as written (the braces included), if any.
    backend_config: str | None = None
    #: A custom call's attributes that XLA's translator drops (:data:`CUSTOM_CALL_DROPPED`),
    #: as written: ``(("window", "size=3x3 pad=1_1x1_1"), ("dim_labels", "bf01_oi01->bf01"))``.
    dropped_attributes: tuple[tuple[str, str], ...] = ()
    #: Of a ``get-tuple-element``: the name of the instruction it reads (as written) and
    #: the element's index.
    tuple_read: tuple[str, int] | None = None
    #: Of a tuple shape: the number of arrays in each of its top-level elements
    #: (``(s32[], (f32[3], f32[2]))`` gives ``(1, 2)``); empty for an array shape.
    tuple_arrays: tuple[int, ...] = ()


@dataclass(frozen=True)
class HloComputation:
    """A computation of the text (1-based position of its header) with its instructions
    in text order."""

    name: str
    is_entry: bool
    line: int
    column: int
    instructions: tuple[HloInstruction, ...]


@dataclass(frozen=True)
class HloTextScan:
    """Computations in text order."""

    computations: tuple[HloComputation, ...]


# A computation header: ``[ENTRY] [%]name [(params) -> shape] {`` on its own line.
_COMPUTATION_START = re.compile(
    r"(ENTRY[ \t]+)?%?(?P<name>[A-Za-z_][\w.\-]*)[ \t]*(\([^\n]*\)[ \t]*->[^\n{]*)?\{[ \t]*(\n|$)"
)
# The start of a shape: a tuple or an array type.
_SHAPE_START = re.compile(r"\(|(pred|bf16|tf32|token|[suf]\d+[a-z0-9]*|c64|c128)\[")
# An instruction whose right-hand side starts with a shape: ``x = f32[2,3] add(...)``.
_SHAPED_INSTRUCTION = re.compile(
    r"^[ \t]*(ROOT[ \t]+)?%?[A-Za-z_][\w.\-]*[ \t]*=[ \t]*(\(|(pred|bf16|tf32|token|[suf]\d+[a-z0-9]*|c64|c128)\[)",
    re.MULTILINE,
)


def has_hlo_header(text: str) -> bool:
    """True when the first token after whitespace and comments is ``HloModule``."""
    return _HEADER.match(text) is not None


def looks_like_hlo_text(text: str | bytes) -> bool:
    """True for XLA HLO text, recognised by content: the first token after whitespace
    and comments is ``HloModule``, or (XLA's tests and dumps leave the header out) the
    text starts with a computation header (``ENTRY main {``, ``%fused_computation {``,
    ``f (p: f32[2]) -> f32[2] {``) and has an instruction whose value is a shape
    (``p0 = f32[100] parameter(0)``), which MLIR text never has."""
    if isinstance(text, bytes):
        text = text[:4096].decode("utf-8", errors="replace")
    if has_hlo_header(text):
        return True
    body = _blank_comments(text[:4096]).lstrip()
    start = _COMPUTATION_START.match(body)
    if start is None or start.group("name") in ("module", "builtin.module"):
        return False
    return _SHAPED_INSTRUCTION.search(body) is not None


# A string literal (to its closing quote, or the end of an unterminated one; a backslash
# escapes the next character), a line comment or a block comment (to the end of the text
# when unterminated).
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.|\\\Z)*(?:"|\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)', re.DOTALL)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank_comments(text: str) -> str:
    """The text with ``//`` and ``/* */`` comments replaced by spaces (newlines kept),
    leaving string literals (``"..."``) alone."""

    def blank(match: re.Match[str]) -> str:
        found = match.group(0)
        return found if found.startswith('"') else _NOT_NEWLINE.sub(" ", found)

    return _STRING_OR_COMMENT.sub(blank, text)


_BACKEND_CONFIG = re.compile(r"\bbackend_config\s*=\s*")


def _backend_config(text: str, start: int, end: int) -> str | None:
    """The ``{...}`` value of a ``backend_config=`` attribute between ``start`` and
    ``end`` (braces inside string literals skipped), or None."""
    found = _BACKEND_CONFIG.search(text, start, end)
    if found is None or not text.startswith("{", found.end()):
        return None
    depth = 0
    position = found.end()
    while position < end:
        char = text[position]
        if char == '"':
            literal = _STRING_OR_COMMENT.match(text, position)
            position = literal.end() if literal else position + 1
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        position += 1
        if depth == 0:
            return text[found.end():position]
    return None


#: The attributes of a custom call that XLA's HLO -> StableHLO translator drops: a
#: convolution's (XLA's GPU backend writes its cuDNN convolutions as custom calls).
CUSTOM_CALL_DROPPED = ("window", "dim_labels", "feature_group_count", "batch_group_count")
_DROPPED_ATTRIBUTE = re.compile(
    r"\b(window)=\{([^{}\n]*)\}|\b(dim_labels)=([\w>\-]+)|\b(feature_group_count|batch_group_count)=(\d+)"
)


def _dropped_attributes(clean: str, start: int, end: int) -> tuple[tuple[str, str], ...]:
    """The :data:`CUSTOM_CALL_DROPPED` attributes written between ``start`` and ``end``
    (outside string literals), in text order."""
    unquoted = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group(0)), clean[start:end])
    found = []
    for match in _DROPPED_ATTRIBUTE.finditer(unquoted):
        name, value = next((match.group(k), match.group(k + 1)) for k in (1, 3, 5) if match.group(k))
        found.append((name, value.strip()))
    return tuple(found)


_TUPLE_READ = re.compile(r"\s*get-tuple-element\s*\((?:[^()]|\([^()]*\))*?%?([A-Za-z_][\w.\-]*)\s*\)\s*,\s*index\s*=\s*(\d+)")


def _tuple_read(clean: str, start: int) -> tuple[str, int] | None:
    """The operand name and index of the ``get-tuple-element`` written at ``start``
    (its operand possibly typed: ``((f32[2], u8[0]) %t), index=0``)."""
    match = _TUPLE_READ.match(clean, start)
    return (match.group(1), int(match.group(2))) if match else None


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in _NEWLINE.finditer(text))
    return starts


def _shape_end(text: str, start: int) -> int:
    """Offset just past the shape starting at ``start`` (an array or a tuple)."""
    if text.startswith("(", start):
        depth = 0
        for i in range(start, len(text)):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
        return len(text)
    match = _ARRAY_WITH_LAYOUT.match(text, start)
    return match.end() if match else start


def _tuple_arrays(shape: str, arrays: list[re.Match[str]]) -> tuple[int, ...]:
    """The number of ``arrays`` (matches in ``shape``) in each top-level element of the
    tuple ``shape``; empty when ``shape`` is an array."""
    if not shape.startswith("("):
        return ()
    element_of = []  # the top-level element each character is in
    depth, element = 0, 0
    for char in shape:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 1:
            element += 1
        element_of.append(element)
    counts = [0] * (element + 1)
    for array in arrays:
        counts[element_of[array.start()]] += 1
    return tuple(counts) if arrays else ()


def _rank(dims: str) -> int:
    return 0 if not dims.strip() else dims.count(",") + 1


#: An instruction's opcode (after its shape), and a parameter's number: matched in place
#: (``pattern.match(text, offset)``: a slice of the rest of the text per instruction
#: made the scan quadratic in the module's size).
_OPCODE = re.compile(r"\s*([\w\-]+)")
_PARAMETER_NUMBER = re.compile(r"\s*parameter\s*\(\s*(\d+)")
_NEWLINE = re.compile("\n")


def scan_hlo_text(text: str) -> HloTextScan:
    """Find computations, instructions and written layouts in HLO text (see module doc)."""
    clean = _blank_comments(text)
    starts = _line_starts(clean)
    headers = list(_COMPUTATION.finditer(clean))
    computations = []
    for index, header in enumerate(headers):
        body_end = headers[index + 1].start() if index + 1 < len(headers) else len(clean)
        instructions = []
        # A continuation line of a long instruction (``calls=f,``, ``backend_config={``)
        # looks like ``name =`` too: an instruction's right-hand side starts with a shape.
        matches = [m for m in _INSTRUCTION.finditer(clean, header.end(), body_end) if _SHAPE_START.match(clean, m.end())]
        for position, match in enumerate(matches):
            statement_end = matches[position + 1].start() if position + 1 < len(matches) else body_end
            shape_start = match.end()
            shape_end = _shape_end(clean, shape_start)
            shape = clean[shape_start:shape_end]
            arrays = list(_ARRAY_WITH_LAYOUT.finditer(shape))
            opcode_match = _OPCODE.match(clean, shape_end)
            opcode = opcode_match.group(1) if opcode_match else ""
            parameter = None
            if opcode == "parameter":
                number = _PARAMETER_NUMBER.match(clean, shape_end)
                parameter = int(number.group(1)) if number else None
            name_offset = match.start(1) if match.group(1) else match.start(2)
            if clean[name_offset - 1 : name_offset] == "%":
                name_offset -= 1
            line = _line_of(starts, name_offset)
            instructions.append(
                HloInstruction(
                    name=match.group(2),
                    line=line + 1,
                    column=name_offset - starts[line] + 1,
                    opcode=opcode,
                    is_root=match.group(1) is not None,
                    layouts=tuple(
                        None if a.group(3) is None else "{" + a.group(3).strip() + "}"
                        for a in arrays
                    ),
                    ranks=tuple(_rank(a.group(2)) for a in arrays),
                    parameter_number=parameter,
                    backend_config=_backend_config(clean, shape_end, statement_end),
                    dropped_attributes=(
                        _dropped_attributes(clean, shape_end, statement_end) if opcode == "custom-call" else ()
                    ),
                    tuple_read=_tuple_read(clean, shape_end) if opcode == "get-tuple-element" else None,
                    tuple_arrays=_tuple_arrays(shape, arrays),
                )
            )
        header_offset = header.start(1) if header.group(1) else header.start(2)
        header_line = _line_of(starts, header_offset)
        computations.append(
            HloComputation(
                name=header.group(2),
                is_entry=header.group(1) is not None,
                line=header_line + 1,
                column=header_offset - starts[header_line] + 1,
                instructions=tuple(instructions),
            )
        )
    return HloTextScan(tuple(computations))


def _line_of(starts: list[int], offset: int) -> int:
    """0-based line index containing ``offset``."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


_METADATA = re.compile(r",\s*metadata=\{")


def _blank_metadata(clean: str, out: list[str]) -> bool:
    """Blank ``, metadata={...}`` attributes (braces inside quoted strings allowed)."""
    changed = False
    for match in _METADATA.finditer(clean):
        i, depth = match.end(), 1
        while i < len(clean) and depth:
            if clean[i] == '"':
                i += 1
                while i < len(clean) and clean[i] != '"':
                    i += 2 if clean[i] == "\\" else 1
            elif clean[i] == "{":
                depth += 1
            elif clean[i] == "}":
                depth -= 1
            i += 1
        out[match.start() : i] = [c if c == "\n" else " " for c in clean[match.start() : i]]
        changed = True
    return changed


def prepare_for_translation(text: str) -> tuple[str, bool]:
    """Prepare a copy of the text for XLA's translator, keeping every line and column:

    * blank every layout's fields after ``minor_to_major`` (``:T(8,128)(2,1)S(1)``),
      and a whole layout whose ``minor_to_major`` is empty (``f32[]{:T(128)}``);
    * blank ``metadata={...}``: the translator names an op after its metadata's
      ``op_name`` instead of the instruction when metadata is present.

    Returns the new text and whether anything changed.
    """
    clean = _blank_comments(text)
    out = list(text)
    changed = _blank_metadata(clean, out)
    for match in _ARRAY_WITH_LAYOUT.finditer(clean):
        body = match.group(3)
        if body is None or ":" not in body:
            continue
        body_start = match.start(3)
        colon = body_start + body.index(":")
        if not body[: body.index(":")].strip():
            blank_from, blank_to = body_start - 1, match.end()
        else:
            blank_from, blank_to = colon, match.end() - 1
        out[blank_from:blank_to] = " " * (blank_to - blank_from)
        changed = True
    return "".join(out), changed


#: The custom call a ``scaled-dot`` is translated as (XLA's translator has no scaled dot):
#: the four operands unchanged, the dot's dimension numbers in its ``backend_config``.
SCALED_DOT_TARGET = "hlo_indexing.scaled_dot"
_SCALED_DOT = re.compile(r"^(?P<head>[^\n]*?=[^\n]*?\s)scaled-dot\((?P<operands>[^()\n]*)\)(?P<attributes>[^\n]*)$", re.MULTILINE)
#: One dot dimension-number attribute of XLA's text: side, kind, dimensions.
DOT_DIMS_ATTRIBUTE = re.compile(r"\b(lhs|rhs)_(batch|contracting)_dims=\{([\d,\s]*)\}")


def scaled_dots_as_custom_calls(printed: str) -> str:
    """XLA's printing of a module (``HloModule.to_string()``: one instruction per line,
    operands by name) with each ``scaled-dot`` written as a custom call to
    :data:`SCALED_DOT_TARGET` whose ``backend_config`` holds its dimension numbers
    (``lhs_contracting_dims={1}, rhs_contracting_dims={0}``); its other attributes are
    dropped (the importer puts layouts and backend configs back from the user's text).
    Other lines are unchanged."""

    def rewrite(match: re.Match[str]) -> str:
        dims = ", ".join(m.group(0) for m in DOT_DIMS_ATTRIBUTE.finditer(match.group("attributes")))
        return (
            f"{match.group('head')}custom-call({match.group('operands')}), "
            f'custom_call_target="{SCALED_DOT_TARGET}", backend_config="{dims}"'
        )

    return _SCALED_DOT.sub(rewrite, printed)


_ENTRY_LAYOUT = re.compile(r",?\s*entry_computation_layout\s*=\s*\{")


def as_entry(text: str, name: str) -> str | None:
    """The text with computation ``name`` as its entry, every line and column kept; None
    when the text has no computation ``name``.

    XLA's parser takes the last computation as the entry when none is marked ``ENTRY``,
    and a computation may call only computations written before it; so the ENTRY
    computation and every computation after ``name`` are blanked (what ``name`` calls
    stays), and so is the header's ``entry_computation_layout`` (the old entry's). What
    is blanked is not parsed, hence not checked: an ill-typed call in the old entry no
    longer matters, as for XLA's tools that analyse one computation of an unverified
    module (``print_indexing``)."""
    clean = _blank_comments(text)
    computations = scan_hlo_text(text).computations
    position = next((k for k, c in enumerate(computations) if c.name == name), None)
    if position is None:
        return None
    starts = _line_starts(clean)
    spans = [starts[c.line - 1] for c in computations] + [len(text)]
    out = list(text)

    def blank(start: int, end: int) -> None:
        out[start:end] = [c if c == "\n" else " " for c in text[start:end]]

    for k, computation in enumerate(computations):
        if k > position or (computation.is_entry and k != position):
            blank(spans[k], spans[k + 1])
    header_end = spans[0]
    layout = _ENTRY_LAYOUT.search(clean, 0, header_end)
    if layout is not None:
        depth, end = 1, layout.end()
        while end < header_end and depth:
            depth += {"{": 1, "}": -1}.get(clean[end], 0)
            end += 1
        blank(layout.start(), end)
    return "".join(out)
