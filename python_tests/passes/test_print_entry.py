"""The print passes render one analysis (``module_indexing``) in two formats: the remarks
and the JSON document of the same module and options say the same thing.

Each map of a remark (``@f result 0.1 -> arg 2: MAP``, ``operand id = k MAP``) and each
map of the JSON document are enumerated with the shared evaluator
(``helpers.evaluate_affine``) over their domains; the relations must agree, value by
value, element by element, target by target, for logical and physical maps (checked
against the layouts' packing as well), with the analyses (utilisation checked against
the elements the maps read) and with failures, which are errors in text and ``error``
fields in JSON, at the same places.
"""

from __future__ import annotations

import itertools
import json
import re

import jsonschema
import numpy as np
import pytest

from hlo_indexing import parse_module
from hlo_indexing.analysis import results
from hlo_indexing.analysis.module_analysis import module_indexing
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.passes.fusion_maps import PrintFusedIndexingMaps
from hlo_indexing.passes.print_indexing_maps import PrintIndexingMaps
from helpers import evaluate_affine, layout_places

SCHEMA = results.schema()

#: Laid-out values (a transpose into a tiled result, a strided slice), a tuple result
#: and a tuple argument.
PROGRAM = """
func.func @main(%a: tensor<4x6xf32> {hlo_indexing.layout = "{0,1}"}, %b: tensor<6xf32>)
    -> (tensor<6x4xf32> {hlo_indexing.layout = "{1,0:T(2,2)}"}, tensor<3xf32>) {
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %s = stablehlo.slice %b [1:6:2] : (tensor<6xf32>) -> tensor<3xf32>
  return %t, %s : tensor<6x4xf32>, tensor<3xf32>
}

func.func @pair(%a: tensor<4xf32>, %p: tuple<tensor<2x3xf32>, tensor<5xf32>>) -> tuple<tensor<4xf32>, tensor<3x2xf32>> {
  %n = stablehlo.negate %a : tensor<4xf32>
  %g = stablehlo.get_tuple_element %p[0] : (tuple<tensor<2x3xf32>, tensor<5xf32>>) -> tensor<2x3xf32>
  %tr = stablehlo.transpose %g, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t = stablehlo.tuple %n, %tr : tuple<tensor<4xf32>, tensor<3x2xf32>>
  return %t : tuple<tensor<4xf32>, tensor<3x2xf32>>
}
"""

#: A computation whose maps fail (an op's layout is no permutation), and two whose
#: physical maps fail (a dynamic shape, a layout that does not parse).
FAILING = """
func.func @bad_op(%a: tensor<16x17x3xf32>) -> tensor<51x16xf32> {
  %0 = mhlo.bitcast %a {result_layout = dense<[0, 1]> : tensor<2xindex>, source_layout = dense<[1, 0]> : tensor<2xindex>} : (tensor<16x17x3xf32>) -> tensor<51x16xf32>
  return %0 : tensor<51x16xf32>
}

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.negate %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @bad_layout(%a: tensor<4xf32>) -> (tensor<4xf32> {hlo_indexing.layout = "{7}"}) {
  %0 = stablehlo.negate %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

Relation = frozenset[tuple[tuple[int, ...], tuple[int, ...]]]


def _relation(text: str) -> Relation:
    """The (dimensions, results) pairs of the map printed as ``text``, enumerated over
    its domain (every variable's range, then its constraints) with the shared evaluator."""
    m = IndexingMap.parse(text)
    variables = [*m.dim_vars, *m.range_vars, *m.runtime_vars]
    axes = [np.arange(v.bounds.lower, v.bounds.upper + 1) for v in variables]
    grid = [g.ravel() for g in np.meshgrid(*axes, indexing="ij")] if axes else []
    dims, symbols = grid[: m.num_dims], grid[m.num_dims :]
    size = grid[0].size if grid else 1
    keep = np.ones(size, dtype=bool)
    for expr, bounds in m.constraints.items():
        value = evaluate_affine(expr, dims, symbols)
        keep &= (value >= bounds.lower) & (value <= bounds.upper)
    images = [np.broadcast_to(evaluate_affine(e, dims, symbols), (size,)) for e in m.results]
    return frozenset(
        (tuple(int(d[i]) for d in dims), tuple(int(r[i]) for r in images)) for i in np.flatnonzero(keep)
    )


def _known(text: str) -> Relation | str:
    """The relation of a printed map, or the text of an unknown one (with its reason)."""
    return text if text.startswith("unknown indexing") else _relation(text)


def _run(pass_class, module, **options: str) -> Diagnostics:
    diagnostics = Diagnostics()
    pass_class.from_options(options).run(module.operation, diagnostics)
    return diagnostics


def _document(diagnostics: Diagnostics) -> dict:
    (output,) = [d for d in diagnostics.items if d.severity == "output"]
    document = json.loads(output.message)
    jsonschema.validate(document, SCHEMA)
    return document


REMARK = re.compile(r"^(\S+) (result [\d.]+|arg [\d.]+) -> (arg [\d.]+|result [\d.]+): (.*)$")


def _text_maps(diagnostics: Diagnostics) -> dict[tuple[str, str, str], set[Relation]]:
    """(computation, value, target) -> the relations of its maps, from the remarks."""
    found: dict[tuple[str, str, str], set[Relation]] = {}
    for d in diagnostics.items:
        match = REMARK.match(d.message) if d.severity == "remark" else None
        if match:
            name, value, target, text = match.groups()
            maps = found.setdefault((name, value, target), set())
            if text != "no dependence":
                maps.add(_relation(text))
    return found


def _json_maps(document: dict) -> dict[tuple[str, str, str], set[Relation]]:
    """The same, from the JSON document."""
    found: dict[tuple[str, str, str], set[Relation]] = {}
    for computation in document["computations"]:
        for value in computation["values"]:
            label = f"result {'.'.join(filter(None, [str(value['index']), value.get('element', '')]))}"
            for target in value["targets"]:
                target_label = f"arg {'.'.join(filter(None, [str(target['index']), target['element']]))}"
                key = (computation["name"], label, target_label)
                found[key] = {_relation(m["text"]) for m in target["maps"]}
    return found


@pytest.mark.parametrize("options", [{}, {"physical": "coordinates"}, {"physical": "offset"}, {"max-maps": "1"}])
def test_fused_remarks_and_json_have_the_same_maps(options):
    module = parse_module(PROGRAM)
    text = _run(PrintFusedIndexingMaps, module, **options)
    document = _document(_run(PrintFusedIndexingMaps, module, format="json", **options))
    assert not text.has_errors
    ours = _text_maps(text)
    assert ours == _json_maps(document)
    # every tensor element of the tuple result; the element of the tuple argument read
    assert {key for key in ours if key[0] == "@pair"} == {
        ("@pair", "result 0.0", "arg 0"),
        ("@pair", "result 0.0", "arg 1"),  # no dependence
        ("@pair", "result 0.1", "arg 0"),  # no dependence
        ("@pair", "result 0.1", "arg 1.0"),
    }
    assert document.get("physical") == options.get("physical")


@pytest.mark.parametrize("form", ["coordinates", "offset"])
def test_physical_json_maps_are_the_layouts_brute_force(form):
    document = _document(_run(PrintFusedIndexingMaps, parse_module(PROGRAM), format="json", physical=form))
    maps = _json_maps(document)
    out, into = layout_places((6, 4), "{1,0:T(2,2)}", form), layout_places((4, 6), "{0,1}", form)
    (transpose,) = maps[("@main", "result 0", "arg 0")]
    assert transpose == {(out[(i, j)], into[(j, i)]) for i, j in itertools.product(range(6), range(4))}
    (strided,) = maps[("@main", "result 1", "arg 1")]
    assert strided == {((k,), (1 + 2 * k,)) for k in range(3)}  # row-major 1-D: physical = logical
    # the tuple result's elements keep logical indices
    (element,) = maps[("@pair", "result 0.1", "arg 1.0")]
    assert element == {((i, j), (j, i)) for i, j in itertools.product(range(3), range(2))}


def test_analyses_agree_in_text_and_json_and_count_the_elements_read():
    module = parse_module(PROGRAM)
    text = _run(PrintFusedIndexingMaps, module, analyses="true")
    document = _document(_run(PrintFusedIndexingMaps, module, format="json", analyses="true"))
    main = next(c for c in document["computations"] if c["name"] == "@main")
    assert main["analyses"]["error"] is None
    for entry in main["analyses"]["arguments"]:
        u, c = entry["utilization"], entry["coalescing"]
        exact = "exact" if u["exact"] else "bound"
        lines = {d.message for d in text.items if d.message.startswith(f"@main arg {entry['index']}:")}
        assert lines == {
            f"@main arg {entry['index']}: utilization {'=' if u['exact'] else '<='} {u['fraction']:.6g} ({exact}, {u['method']})",
            f"@main arg {entry['index']}: coalesced = {'true' if c['coalesced'] else 'false'} ({c['method']})",
        }
    # brute force: the elements of each argument some result reads, over its element count
    maps = _json_maps(document)
    for index, shape in ((0, (4, 6)), (1, (6,))):
        read = {i for (name, _, target), found in maps.items() if (name, target) == ("@main", f"arg {index}") for r in found for _, i in r}
        u = main["analyses"]["arguments"][index]["utilization"]
        assert (u["read"], u["elements"], u["exact"]) == (len(read), int(np.prod(shape)), True)
        assert u["fraction"] == pytest.approx(len(read) / np.prod(shape))


def _location(diagnostic) -> str:
    return str(location_of(diagnostic.location))


def test_failures_are_errors_in_text_and_error_fields_in_json_at_the_samelayout_places():
    module = parse_module(FAILING)
    text = _run(PrintFusedIndexingMaps, module, physical="offset")
    document = _document(_run(PrintFusedIndexingMaps, module, format="json", physical="offset"))
    errors = {(_location(d), d.message) for d in text.items if d.severity == "error"}
    by_name = {c["name"]: c for c in document["computations"]}
    assert by_name["@bad_op"]["values"] == [] and "source_layout" in by_name["@bad_op"]["error"]
    (dynamic,) = by_name["@dynamic"]["values"]
    assert dynamic["targets"] == [] and "statically shaped" in dynamic["error"]
    (value,) = by_name["@bad_layout"]["values"]
    assert value["targets"] == [] and "{7}" in value["error"]
    # the text has one error per failing part; the remarks of the rest are there
    assert len(errors) == 3
    assert any("source_layout" in message and where.endswith(":3:8") for where, message in errors)  # at the op
    for name, part in (("@dynamic", "statically shaped"), ("@bad_layout", "{7}")):
        assert any(part in message and where == by_name[name]["location"] for where, message in errors)

    per_op = _run(PrintIndexingMaps, module)
    per_op_document = _document(_run(PrintIndexingMaps, module, format="json"))
    (failed,) = [op for op in per_op_document["ops"] if "error" in op]
    assert failed["values"] == [] and failed["location"].endswith(":3:8") and "source_layout" in failed["error"]
    ((where, message),) = [(_location(d), d.message) for d in per_op.items if d.severity == "error"]
    assert where == failed["location"] and message in failed["error"]
    assert len([d for d in per_op.items if d.severity == "remark"]) == len(per_op_document["ops"]) - 1


OPERAND_LINE = re.compile(r"^operand id = (\d+) (.*)$")


@pytest.mark.parametrize("options", [{}, {"physical": "coordinates"}, {"direction": "input-to-output", "physical": "offset"}])
def test_per_op_remarks_and_json_have_the_same_maps(options):
    module = parse_module(PROGRAM)
    text = _run(PrintIndexingMaps, module, **options)
    document = _document(_run(PrintIndexingMaps, module, format="json", **options))
    ours: list[dict[int, set[Relation | str]]] = []
    for d in text.items:
        for line in d.message.splitlines():
            if " indexing of " in line:
                ours.append({})
            elif match := OPERAND_LINE.match(line):
                ours[-1].setdefault(int(match.group(1)), set()).add(_known(match.group(2)))
    theirs = [
        {t["index"]: {f"unknown indexing ({m['reason']})" if m["unknown"] else _relation(m["text"]) for m in t["maps"]}
         for t in value["targets"] if t["maps"]}
        for op in document["ops"]
        for value in op["values"]
    ]
    assert ours == theirs and ours
    assert document.get("physical") == options.get("physical")


def test_module_indexing_hands_out_each_result_as_it_is_done():
    module = parse_module(PROGRAM)
    seen: list = []
    result = module_indexing(module.operation, "output-to-input", on_result=seen.append)
    assert seen == [*result.ops, *result.computations]
    assert [type(item).__name__ for item in seen] == ["OpMaps"] * len(result.ops) + ["ComputationMaps"] * 2


def test_fused_physical_maps_and_analyses_need_output_to_input():
    module = parse_module(PROGRAM)
    with pytest.raises(InvalidArgumentError, match="output-to-input"):
        module_indexing(module.operation, "input-to-output", physical="offset")
    with pytest.raises(InvalidArgumentError, match="output-to-input"):
        module_indexing(module.operation, "input-to-output", analyses=True)
