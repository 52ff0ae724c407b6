"""The legality rules of the GPU backend, each with a tiling that satisfies it and one
that breaks it (``/work/shared/notes/xla-gpu-cost-model.md`` §8, §13).

Each rule is checked three ways that must agree: the per-tiling path
(:func:`~hlo_indexing.cost_model.gpu.assess_symbolic`), the vectorised path the ranking
uses (:func:`~hlo_indexing.cost_model.backends.assess_tiling`) and the ranking itself
(a tiling breaking a rule is never ranked; the rule is counted). The rejection names the
instruction and the numbers. XLA's experimental ``VerifyTritonConstraints`` is checked
with its own messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from hlo_indexing.cost_model.backends import assess_tiling
from hlo_indexing.cost_model.gpu import SpaceFactory, assess_symbolic, experimental_computation
from hlo_indexing.cost_model.ranking import rank_tilings
from hlo_indexing.cost_model.triton_constraints import verify_experimental
from hlo_indexing.devices import device
from hlo_indexing.symbolic_tiling.experimental.hlo_graph import parse_hlo_graph
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion
from tiling_fixtures import hlo_fusion

A6000 = device("a6000-test")


def _module(body: str, params: str, root_shape: str, extra: str = "") -> str:
    """An HLO module whose entry calls fusion computation ``f`` (body) once."""
    names = [p.split("=")[0].strip() for p in params.strip().splitlines()]
    return f"""HloModule m
{extra}
f {{
{body}
}}
ENTRY e {{
{params}
  ROOT fusion = {root_shape} fusion({", ".join(names)}), kind=kCustom, calls=f
}}"""


ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""


@dataclass(frozen=True)
class Case:
    rule: str
    hlo: str
    tiling_owner: str
    good: tuple[int, ...]
    bad: tuple[int, ...]
    message: tuple[str, ...]  # fragments of the failing case's message
    allow_pad: bool = False


def _softmax(rows: int, cols: int) -> str:
    return _module(f"""  p0 = f32[{rows},{cols}] parameter(0)
  c = f32[] constant(0)
  r = f32[{rows}] reduce(p0, c), dimensions={{1}}, to_apply=add
  b = f32[{rows},{cols}] broadcast(r), dimensions={{0}}
  ROOT s = f32[{rows},{cols}] subtract(p0, b)""", f"  p0 = f32[{rows},{cols}] parameter(0)", f"f32[{rows},{cols}]", ADD)


def _concat(root: str) -> str:
    return _module(f"""  p0 = bf16[16] parameter(0)
  p1 = bf16[16] parameter(1)
  p2 = bf16[16] parameter(2)
  concatenate = bf16[48] concatenate(p0, p1, p2), dimensions={{0}}
  {root}""", "  p0 = bf16[16] parameter(0)\n  p1 = bf16[16] parameter(1)\n  p2 = bf16[16] parameter(2)", "bf16[24]")


CASES = [
    # padded tile elements at most 2^20: [18, 50304] pads to 32 x 65536 = 2^21
    Case("triton.tile-elements", _softmax(8192, 50304), "s", (8, 50304), (18, 50304),
         ("[32, 65536]", "2097152", "1048576")),
    # fewer blocks than the grid limit 2^31 - 1: [1, 1] on 65536 x 65536 needs 2^32
    Case("triton.grid", _module("  p0 = f32[65536,65536] parameter(0)\n  ROOT r = f32[65536,65536] negate(p0)",
                                "  p0 = f32[65536,65536] parameter(0)", "f32[65536,65536]"),
         "r", (128, 128), (1, 1), ("4294967296", "2147483647")),
    # dot operand tiles in [1, 256]: a K tile of 512 is too wide
    Case("triton.dot-operand-tile", _module(
        "  p0 = f32[4,5376] parameter(0)\n  p1 = f32[32768,5376] parameter(1)\n"
        "  ROOT dot = f32[4,32768] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
        "  p0 = f32[4,5376] parameter(0)\n  p1 = f32[32768,5376] parameter(1)", "f32[4,32768]"),
        "dot", (4, 4, 4), (512, 4, 4), ("512", "256")),
    # output tiles are powers of two or the whole dimension
    Case("triton.root-tile", _module(
        "  p0 = f32[36] parameter(0)\n  abs = f32[36] abs(p0)\n  ROOT reshape = f32[6,6] reshape(abs)",
        "  p0 = f32[36] parameter(0)", "f32[6,6]"), "reshape", (1, 6), (1, 3), ("reshape", "[1, 3]", "3", "6")),
    # a reshape's padded tile satisfies the reshape's own tile constraints: [2,6] pads to [2,8]
    Case("tiled.reshape", _module("  p = s8[36] parameter(0)\n  ROOT bitcast = s8[6,6] bitcast(p)",
                                  "  p = s8[36] parameter(0)", "s8[6,6]"), "bitcast", (1, 6), (2, 6),
         ("bitcast", "[2, 8]")),
    # every concatenated operand but the last has a size the padded tile divides
    Case("tiled.concatenate-divisibility", _module(
        "  p0 = bf16[8] parameter(0)\n  p1 = bf16[8] parameter(1)\n  p2 = bf16[4] parameter(2)\n"
        "  ROOT concatenate = bf16[20] concatenate(p0, p1, p2), dimensions={0}",
        "  p0 = bf16[8] parameter(0)\n  p1 = bf16[8] parameter(1)\n  p2 = bf16[4] parameter(2)", "bf16[20]"),
        "concatenate", (8,), (16,), ("concatenate", "16", "8")),
    # a concatenate's tile starts at offset 0 along the concatenated dimension
    Case("tiled.concatenate-offset", None, "slice", (8,), (8,), ("concatenate", "24")),  # type: ignore[arg-type]
    # ... with stride 1
    Case("tiled.concatenate-stride", None, "slice", (8,), (8,), ("concatenate", "2")),  # type: ignore[arg-type]
    # XLA's register rule: a padded tile above 40% of 65536 registers
    Case("gpu.register-spill", _softmax(4, 16000), "s", (1, 16000), (2, 16000), ("32768", "65536")),
]
# The concatenate offset/stride cases differ in their fusion between the good and the bad tiling.
CONCAT_GOOD = _concat("ROOT slice = bf16[24] slice(concatenate), slice={[0:24]}")
CONCAT_BAD = {"tiled.concatenate-offset": _concat("ROOT slice = bf16[24] slice(concatenate), slice={[24:48]}"),
              "tiled.concatenate-stride": _concat("ROOT slice = bf16[24] slice(concatenate), slice={[0:48:2]}")}


def fusion_of(hlo: str) -> TiledFusion:
    return hlo_fusion(hlo, "f")


def _rules(fusion: TiledFusion, sizes: list[int]) -> tuple[set[str], set[str]]:
    exact = assess_symbolic(fusion, sizes, A6000)
    vectorised = assess_tiling(fusion, sizes, A6000)
    exact_rules = {r.rule for r in exact.rejections}
    assert exact_rules == {r.rule for r in vectorised.rejections}, (exact.rejections, vectorised.rejections)
    return exact_rules, {str(r) for r in vectorised.rejections}


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_each_rule_passes_and_fails(case: Case):
    good_hlo = case.hlo or CONCAT_GOOD
    bad_hlo = case.hlo or CONCAT_BAD[case.rule]
    good = fusion_of(good_hlo)
    bad = fusion_of(bad_hlo)
    good_sizes = good.flat_tile_sizes({case.tiling_owner: case.good})
    bad_sizes = bad.flat_tile_sizes({case.tiling_owner: case.bad})
    rules, _ = _rules(good, good_sizes)
    assert case.rule not in rules
    rules, texts = _rules(bad, bad_sizes)
    assert case.rule in rules
    (message,) = [t for t in texts if t.startswith(f"[{case.rule}]")][:1]
    for fragment in case.message:
        assert fragment in message, message
    # the ranking never keeps a tiling that breaks a rule, and counts the rule (when the
    # tiling is one of its candidates: powers of two or whole sizes)
    candidate = all(s == p.size or s & (s - 1) == 0 for s, p in zip(bad_sizes, bad.parameters))
    if candidate:
        ranking = rank_tilings(bad, device=A6000)
        assert tuple(bad_sizes) not in {t.tile_sizes for t in ranking.tilings}
        assert ranking.rejected.get(case.rule, 0) >= 1


def test_the_fusions_own_constraints_are_a_rule():
    """A tiling breaking the symbolic analysis's constraints (f32[4,6] collapsed to 24:
    a tile of 8 is neither a multiple nor a divisor of 6) is rejected as
    tiling.constraints by assess_tiling."""
    fusion = fusion_of(_module("  p0 = f32[4,6] parameter(0)\n  ROOT r = f32[24] reshape(p0)",
                               "  p0 = f32[4,6] parameter(0)", "f32[24]"))
    assert fusion.satisfies_constraints([12]) and not fusion.satisfies_constraints([8])
    assert "tiling.constraints" not in {r.rule for r in assess_tiling(fusion, [12], A6000).rejections}
    assert "tiling.constraints" in {r.rule for r in assess_tiling(fusion, [8], A6000).rejections}


# ------------------------------------------------------------ experimental: VerifyTritonConstraints


def _experimental(hlo: str, sizes: list[int]):
    graph = parse_hlo_graph(hlo, "rule.hlo")
    return verify_experimental(experimental_computation(graph, SpaceFactory(graph)(), sizes), A6000)


@pytest.mark.parametrize(("hlo", "good", "bad", "rule", "message"), [
    (_module("  p0 = f32[2048,1024] parameter(0)\n  ROOT r = f32[2048,1024] negate(p0)",
             "  p0 = f32[2048,1024] parameter(0)", "f32[2048,1024]"), [1024, 1024], [2048, 1024],
     "triton.tile-elements", "Instruction `<r>` has a padded tile size product that exceeds the maximum allowed tensor "
     "size of 1048576 elements."),
    (_module("  p0 = f32[16,512] parameter(0)\n  p1 = f32[512,16] parameter(1)\n"
             "  ROOT dot = f32[16,16] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
             "  p0 = f32[16,512] parameter(0)\n  p1 = f32[512,16] parameter(1)", "f32[16,16]"), [16, 16, 256],
     [16, 16, 512], "triton.dot-operand-tile",
     "Dot operand instruction `<p0>` has a tile size of `512`, which exceeds the maximum MMA dimension size of 256."),
    (_module("  p0 = f32[6,6] parameter(0)\n  ROOT r = f32[6,6] abs(p0)", "  p0 = f32[6,6] parameter(0)", "f32[6,6]"),
     [1, 6], [1, 3], "triton.root-tile",
     "Root instruction `<r>` has a tile size of `3` in dimension `1`, which is neither a power of 2 nor equal to the "
     "dimension size `6`."),
    (_module("  p0 = f32[65536,65536] parameter(0)\n  ROOT r = f32[65536,65536] negate(p0)",
             "  p0 = f32[65536,65536] parameter(0)", "f32[65536,65536]"), [2, 2], [1, 1], "triton.grid",
     "Number of blocks `65536*65536` exceeds the device grid X limit of `2147483647`."),
])
def test_verify_triton_constraints(hlo, good, bad, rule, message):
    """XLA's messages; ``<name>`` stands for the tiled instruction of HLO ``name``
    (``name.tile_N`` when the tiling has several tiles of it)."""
    assert rule not in {r.rule for r in _experimental(hlo, good)}
    found = [r for r in _experimental(hlo, bad) if r.rule == rule]
    pattern = re.sub(r"<(\w+)>", r"\1(\\.tile_\\d+)?", re.escape(message).replace(r"\<", "<").replace(r"\>", ">"))
    assert any(re.fullmatch(pattern, r.message) for r in found), (pattern, found)
