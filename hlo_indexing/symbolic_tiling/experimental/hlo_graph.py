"""The instruction graph of an HLO module, as XLA's own HLO parser (in jaxlib) reads it.

Tiling works on HLO instructions (opcodes, shapes, attributes, operands, called
computations), which the HLO -> StableHLO translation partly loses (tuple parameters,
``get-tuple-element`` of ``scan``, ``scaled-dot``). :func:`parse_hlo_graph` parses the
text with XLA's parser and reads each instruction's canonical print
(``%n = f32[4,5]{1,0} transpose(%p0), dimensions={1,0}``) for shape and attributes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlo_indexing.dialect_glue import hlo_import
from hlo_indexing.errors import ParseError, UnsupportedError


@dataclass(frozen=True)
class ArrayShape:
    """An array shape: element type, dimensions, minor-to-major layout (None: default)."""

    element_type: str
    dims: tuple[int, ...]
    layout: tuple[int, ...] | None = None

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        """The layout, default (row-major) when none was written."""
        return self.layout if self.layout is not None else tuple(reversed(range(len(self.dims))))


Shape = ArrayShape | tuple  # a tuple shape holds ArrayShape or nested tuples


@dataclass(eq=False)
class Instruction:
    """One HLO instruction. ``attrs`` maps attribute names to their printed values."""

    name: str
    opcode: str
    shape: Shape
    operands: list["Instruction"]
    attrs: dict[str, str]
    text: str
    computation: str
    literal: str | None = None

    @property
    def array(self) -> ArrayShape:
        """The (first) array shape of the result."""
        return first_array(self.shape)

    def int_list(self, key: str) -> list[int]:
        """An attribute ``{1,2}`` as integers (``[]`` when absent)."""
        value = self.attrs.get(key)
        return [] if value is None else [int(x) for x in re.findall(r"-?\d+", value)]

    def __repr__(self) -> str:
        return f"<{self.opcode} {self.name}>"


@dataclass
class Computation:
    """A computation: instructions in text order, the root."""

    name: str
    instructions: list[Instruction]
    root: Instruction


@dataclass
class HloGraph:
    """All computations of a module by name, and the entry computation's name."""

    computations: dict[str, Computation]
    entry: str

    @property
    def entry_computation(self) -> Computation:
        """The ENTRY computation."""
        return self.computations[self.entry]

    def called(self, inst: Instruction, key: str = "calls") -> Computation:
        """The computation an attribute (``calls``, ``to_apply``) names."""
        name = inst.attrs[key].lstrip("%")
        return self.computations[name]

    def instruction(self, name: str) -> Instruction:
        """The instruction named ``name`` (any computation; KeyError if none)."""
        for comp in self.computations.values():
            for inst in comp.instructions:
                if inst.name == name:
                    return inst
        raise KeyError(name)


_ARRAY = re.compile(r"(\w+)\[([^\]]*)\](?:\{([^}]*)\})?")


def parse_shape(text: str) -> tuple[Shape, int]:
    """Parse a shape at the start of ``text``; returns it and the length read."""
    text_stripped = text.lstrip()
    skip = len(text) - len(text_stripped)
    if text_stripped.startswith("("):
        elements: list[Shape] = []
        pos = 1
        while True:
            rest = text_stripped[pos:].lstrip()
            pos = len(text_stripped) - len(rest)
            if rest.startswith(")"):
                return tuple(elements), skip + pos + 1
            element, used = parse_shape(rest)
            elements.append(element)
            pos += used
            rest = text_stripped[pos:].lstrip()
            pos = len(text_stripped) - len(rest)
            if rest.startswith(","):
                pos += 1
    m = _ARRAY.match(text_stripped)
    if m is None:
        raise ParseError(f"cannot read a shape in {text[:60]!r}")
    try:
        dims = tuple(int(d) for d in m.group(2).split(",") if d.strip())
    except ValueError:
        raise UnsupportedError(f"dynamic dimensions are not tiled: {m.group(0)}") from None
    layout = None
    if m.group(3) is not None:
        minor = m.group(3).split(":")[0]
        layout = tuple(int(d) for d in minor.split(",") if d.strip())
    return ArrayShape(m.group(1), dims, layout), skip + m.end()


def first_array(shape: Shape) -> ArrayShape:
    """The first array of a (possibly tuple) shape."""
    while isinstance(shape, tuple):
        shape = shape[0]
    return shape


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _read(text: str) -> tuple[str, Shape, str, str | None, dict[str, str]]:
    m = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*", text)
    if m is None:
        raise ParseError(f"cannot read HLO instruction {text!r}")
    shape, used = parse_shape(text[m.end():])
    rest = text[m.end() + used:]
    op = re.match(r"\s*([\w\-]+)\(", rest)
    if op is None:
        raise ParseError(f"cannot read the opcode of {text!r}")
    depth, pos = 1, op.end()
    while depth and pos < len(rest):
        depth += {"(": 1, ")": -1}.get(rest[pos], 0)
        pos += 1
    inside = rest[op.end(): pos - 1]
    attrs = {}
    for part in _split_top(rest[pos:].lstrip(", ")):
        key, _, value = part.partition("=")
        attrs[key.strip()] = value.strip()
    literal = inside if op.group(1) == "constant" else None
    return m.group(1), shape, op.group(1), literal, attrs


def parse_hlo_graph(text: str, filename: str = "<hlo>") -> HloGraph:
    """Parse HLO text (``HloModule`` header optional) into an :class:`HloGraph`.

    Raises ParseError (from XLA's parser) on bad text."""
    if not re.match(r"\s*HloModule\b", text):
        text = "HloModule m\n" + text
    module = hlo_import.parse_xla_hlo_module(text, filename)
    printed = module.to_string()  # type: ignore[attr-defined]
    entry = re.search(r"^ENTRY %?([\w.\-]+)", printed, re.MULTILINE)
    if entry is None:
        raise ParseError(f"{filename}: no ENTRY computation")
    by_name: dict[str, Instruction] = {}
    computations: dict[str, Computation] = {}
    for comp in module.computations():  # type: ignore[attr-defined]
        raw = list(comp.instructions())
        insts = []
        for item in raw:
            text_of_item = item.to_string()
            name, shape, opcode, literal, attrs = _read(text_of_item)
            inst = Instruction(name, opcode, shape, [], attrs, text_of_item, comp.name, literal)
            by_name[name] = inst
            insts.append((inst, item))
        for inst, item in insts:
            inst.operands = [by_name[o.name] for o in item.operands()]
        computations[comp.name] = Computation(comp.name, [i for i, _ in insts], insts[-1][0])
    for comp_name, comp in computations.items():
        block = re.search(r"^(?:ENTRY )?%" + re.escape(comp_name) + r" .*?\{\n(.*?)^\}", printed,
                          re.MULTILINE | re.DOTALL)
        if block is not None:
            root = re.search(r"^\s*ROOT %?([\w.\-]+)", block.group(1), re.MULTILINE)
            if root is not None:
                comp.root = by_name[root.group(1)]
    return HloGraph(computations, entry.group(1))
