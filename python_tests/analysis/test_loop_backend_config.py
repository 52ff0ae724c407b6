"""A ``while`` whose condition does not give its trip count (the induction carry's init
is a parameter, as in compiled HLO where the loop sits in a called computation) is
counted from XLA's ``backend_config`` (``known_trip_count``, ``known_init_step``,
``known_induction_variable``) when the config is sound, with the maps a readable
condition gives; a malformed config, or one the loop contradicts, is not used and the
note says why. The loop writes ``2 * x[i]`` into row ``i`` of ``out`` for ``i`` in
``[0, 3)`` (a scan's stacked output)."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing import analyze
from hlo_indexing.ops.loops import NOT_COUNTED

N, TRIPS = 4, 3
CARRY = f"(s32[], f32[{N}], f32[{N}])"
SOUND = '{"known_trip_count":{"n":"3"},"known_init_step":{"init":"0","step":"1"},"known_induction_variable":{"tuple_index":"0"}}'


def loop_text(config: str, start: str = "s32[] parameter(2)", carry: str = CARRY, pack: str = "") -> str:
    """The loop with ``backend_config=config`` (none when empty), its induction init
    ``start``; ``carry``/``pack`` nest the carry's tuple (``pack`` builds the nested
    element ``xo`` from ``x`` and ``out``)."""
    nested = carry != CARRY
    unpack = (
        f"  xo = (f32[{N}], f32[{N}]) get-tuple-element(p), index=1\n"
        f"  x = f32[{N}] get-tuple-element(xo), index=0\n  out = f32[{N}] get-tuple-element(xo), index=1\n"
        f"  i = s32[] get-tuple-element(p), index=0\n"
        if nested
        else f"  i = s32[] get-tuple-element(p), index=0\n  x = f32[{N}] get-tuple-element(p), index=1\n"
        f"  out = f32[{N}] get-tuple-element(p), index=2\n"
    )
    root = (
        f"  pair = (f32[{N}], f32[{N}]) tuple(x, written)\n  ROOT t = {carry} tuple(next, pair)"
        if nested
        else f"  ROOT t = {carry} tuple(next, x, written)"
    )
    init = "tuple(start, xo)" if nested else "tuple(start, x, out)"
    result = (
        f"  final = (f32[{N}], f32[{N}]) get-tuple-element(w), index=1\n  ROOT r = f32[{N}] get-tuple-element(final), index=1"
        if nested
        else f"  ROOT r = f32[{N}] get-tuple-element(w), index=2"
    )
    attribute = f", backend_config={config}" if config else ""
    return f"""HloModule counted

body {{
  p = {carry} parameter(0)
{unpack}  one = s32[] constant(1)
  next = s32[] add(i, one)
  xi = f32[1] dynamic-slice(x, i), dynamic_slice_sizes={{1}}
  two = f32[] constant(2)
  twos = f32[1] broadcast(two), dimensions={{}}
  y = f32[1] multiply(xi, twos)
  written = f32[{N}] dynamic-update-slice(out, y, i)
{root}
}}

cond {{
  p = {carry} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({TRIPS})
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  x = f32[{N}] parameter(0)
  out = f32[{N}] parameter(1)
  start = {start}
{pack}  init = {carry} {init}
  w = {carry} while(init), condition=cond, body=body{attribute}
{result}
}}
"""


def provenance() -> set:
    """(out element, x element) pairs of a run of the loop in numpy on tags (each x
    element's set of sources)."""
    x = [{(k,)} for k in range(N)]
    out: list[set] = [set() for _ in range(N)]
    for i in range(TRIPS):
        out[i] = set(x[i])
    return {((j,), source) for j in range(N) for source in out[j]}


def relation(maps) -> set:
    assert not any(m.is_undefined for m in maps), [m.reason for m in maps if m.is_undefined]
    return set().union(*(m.relation() for m in maps))


def fused(text: str):
    (result,) = analyze(text).computation("main").maps
    return result


def test_a_sound_config_counts_the_loop_as_its_readable_condition_would() -> None:
    counted = fused(loop_text(SOUND))
    assert not counted.over_approximated, counted.over_approximated
    assert relation(counted.maps[0]) == provenance()
    readable = fused(loop_text("", start="s32[] constant(0)"))  # the condition alone counts it
    assert counted.maps[:2] == readable.maps[:2]


def test_without_a_config_the_loop_is_not_counted() -> None:
    result = fused(loop_text(""))
    assert any(NOT_COUNTED in note for note in result.over_approximated)
    assert relation(result.maps[0]) > provenance()  # any row of x: sound, not exact


BAD_CONFIGS = {
    "not JSON": ('{"known_trip_count":{"n":3},known_trip_count}', "is not JSON"),
    "count not an integer": ('{"known_trip_count":{"n":"three"}}', "without an integer 'n'"),
    "count not an object": ('{"known_trip_count":[3]}', "without an integer 'n'"),
    "negative count": ('{"known_trip_count":{"n":"-3"}}', "negative known_trip_count"),
    "zero step": ('{"known_trip_count":{"n":"3"},"known_init_step":{"init":"0","step":"0"}}', "step is 0"),
    "index out of range": (
        '{"known_trip_count":{"n":"3"},"known_induction_variable":{"tuple_index":"7"}}', "tuple_index 7 out of the 3"
    ),
    "index of a float carry": (
        '{"known_trip_count":{"n":"3"},"known_induction_variable":{"tuple_index":"1"}}',
        "not a scalar integer (tensor<4xf32>)",
    ),
    "count the condition contradicts": (SOUND.replace('"n":"3"', '"n":"4"'), "neither is trusted"),
    "step the body contradicts": (SOUND.replace('"step":"1"', '"step":"2"'), "step 2 is not the step 1"),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_a_bad_config_is_not_used_and_the_note_says_why(name) -> None:
    config, reason = BAD_CONFIGS[name]
    result = fused(loop_text(config))
    (note,) = result.over_approximated
    assert NOT_COUNTED in note and "backend_config is not used" in note and reason in note, note
    assert relation(result.maps[0]) > provenance()


def test_a_config_contradicting_a_readable_condition_is_trusted_with_neither() -> None:
    config = SOUND.replace('"init":"0"', '"init":"1"')
    result = fused(loop_text(config, start="s32[] constant(0)"))
    (note,) = result.over_approximated
    assert "known_init_step (1, 1) of carry 0 is not the loop's (0, 1)" in note, note


def test_a_config_agreeing_with_a_readable_condition_changes_nothing() -> None:
    with_config = fused(loop_text(SOUND, start="s32[] constant(0)"))
    assert not with_config.over_approximated
    assert with_config.maps[:2] == fused(loop_text("", start="s32[] constant(0)")).maps[:2]


NESTED = f"(s32[], (f32[{N}], f32[{N}]))"
PACK = f"  xo = (f32[{N}], f32[{N}]) tuple(x, out)\n"


def test_the_tuple_index_counts_top_level_elements_of_a_nested_carry() -> None:
    """The translator flattens ``(s32[], (f32[4], f32[4]))`` into three operands; the
    config's tuple index 0 is the induction variable, index 1 the nested pair."""
    text = loop_text(SOUND, carry=NESTED, pack=PACK)
    result = fused(text)
    assert not result.over_approximated, result.over_approximated
    assert relation(result.maps[0]) == provenance()
    pair = fused(loop_text(SOUND.replace('"tuple_index":"0"', '"tuple_index":"1"'), carry=NESTED, pack=PACK))
    (note,) = pair.over_approximated
    assert "tuple_index 1 whose carry is not a scalar integer (2 arrays)" in note, note


def test_the_loop_maps_enumerate_like_numpy_at_every_trip_count_xla_writes() -> None:
    """``known_trip_count`` decides the rows written: for n in [0, N], rows [0, n)."""
    for n in range(N + 1):
        config = SOUND.replace('"n":"3"', f'"n":"{n}"')
        text = loop_text(config).replace(f"constant({TRIPS})", f"constant({n})")
        result = fused(text)
        assert not result.over_approximated, (n, result.over_approximated)
        expected = {((j,), (j,)) for j in range(n)}
        assert relation(result.maps[0]) == expected, n
        assert np.all([((j,), (j,)) in relation(result.maps[1]) for j in range(n, N)])
