"""location_of / location_name read file and name locations through the bindings'
location classes (no printing); they must agree with a search of the printed location,
which is what MLIR shows the user, for every kind of location and every awkward name."""

from __future__ import annotations

import itertools
import re

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.locations import location_name, location_of, source_order_key
from hlo_indexing.dialect_glue.parsing import parse_module

# The reference: the first "file":line:col in the printed location, and the name of a
# printed name location that has a child location.
FILE_POSITION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
NAME_LOCATION = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"\(')

NAMES = ["a.py", "-", "dir/f.mlir", 'q"uote.py', "back\\slash", "tab\there", "unicodé.py", "", "x:1:2", 'n"(x":3:4']


def printed_position(loc: ir.Location) -> tuple[str, int, int] | None:
    match = FILE_POSITION.search(str(loc))
    return None if match is None else (match.group(1), int(match.group(2)), int(match.group(3)))


def printed_name(loc: ir.Location) -> str | None:
    match = NAME_LOCATION.match(str(loc))
    return None if match is None else match.group(1)


def locations(context: ir.Context) -> list[ir.Location]:
    with context:
        files = [ir.Location.file(name, line, col) for name, (line, col) in zip(NAMES, itertools.cycle([(1, 1), (7, 30), (120, 4)]))]
        unknown = ir.Location.unknown()
        found = [*files, unknown]
        for name in NAMES:
            found += [ir.Location.name(name), ir.Location.name(name, childLoc=files[1]), ir.Location.name(name, childLoc=files[3])]
        found.append(ir.Location.name("outer", childLoc=ir.Location.name("inner", childLoc=files[0])))
        found.append(ir.Location.callsite(files[2], [files[0], files[1]]))
        found.append(ir.Location.fused([files[4], files[0]]))
        found.append(ir.Location.fused([unknown, files[2]]))
        found.append(ir.Location.name("fusion.3", childLoc=ir.Location.callsite(files[5], [files[1]])))
        return found


def test_every_location_reads_as_printed() -> None:
    context = ir.Context()
    for loc in locations(context):
        expected = printed_position(loc)
        got = location_of(loc)
        assert (None if got is None else (got.filename, got.line, got.column)) == expected, str(loc)
        assert location_name(loc) == printed_name(loc), str(loc)


@pytest.mark.parametrize("filename", [None, "input.mlir"])
def test_anonymous_buffer_is_renamed_and_ops_sort_by_position(filename: str | None) -> None:
    module = parse_module("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                          "  %0 = stablehlo.abs %a : tensor<2xf32>\n"
                          "  %1 = stablehlo.negate %0 : tensor<2xf32>\n"
                          "  return %1 : tensor<2xf32>\n}")
    ops = list(module.body.operations[0].regions[0].blocks[0].operations)
    printed = [printed_position(op.location) for op in ops]
    assert [p[1:] for p in printed if p is not None] == [(2, 8), (3, 8), (4, 3)]
    for op, (name, line, col) in zip(ops, printed):
        where = location_of(op.location, filename)
        assert (where.filename, where.line, where.column) == (filename if filename and name == "-" else name, line, col)
    assert sorted(ops[::-1], key=lambda op: source_order_key(op.location)) == ops
