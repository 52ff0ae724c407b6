"""The static verdict of check_pallas agrees with TPU interpret mode (:mod:`pallas_harness`)
on kernels given as grids, blocks and index maps: a hand-written one per finding kind,
correct and defective, and generated ones (hypothesis: grids, block shapes, squeezed and
element dimensions, affine index maps with ``//``, ``%``, ``min``, ``max``).

Agreement on a case, for what its runs could observe (a run stops at the first raise):
an out-of-range block interpret mode raises on is one the checker reports, and the
checker reports one only if interpret mode raises; revisits likewise; partial blocks,
uncovered outputs and races are the same sets. One defect interpret mode cannot see: a
negative index along a squeezed dimension, which it reads from the end of the array as
numpy does (:func:`wrapped_index`); such cases are counted apart, not compared. The normal profile runs the hand-written
cases and 8 generated ones; ``HLO_INDEXING_PALLAS_PROFILE=long`` runs 19 batches of 8 generated
cases (152; about 2 s of CPU each).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("jax")
pytest.importorskip("jax.experimental.pallas")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pallas_harness import GridCase, Observation, Spec, observe, static_verdict, verdict_labels  # noqa: E402

LONG = os.environ.get("HLO_INDEXING_PALLAS_PROFILE") == "long"
#: Generated cases per batch (one worker process each), and batches.
BATCH = 8
BATCHES = 19 if LONG else 1


def _case(name, grid, semantics, inputs, outputs):
    return GridCase(grid, semantics, tuple(Spec(*s) for s in inputs), tuple(Spec(*s) for s in outputs), name)


HAND_WRITTEN = [
    _case("correct", (3, 2), ("parallel", "arbitrary"), [((6, 8), (2, 4), "lambda i, j: (i, j)")], [((6, 8), (2, 4), "lambda i, j: (i, j)")]),
    _case("accumulate", (3, 2), ("parallel", "arbitrary"), [((6, 8), (2, 4), "lambda i, j: (i, j)")], [((6, 4), (2, 4), "lambda i, j: (i, 0)")]),
    _case("race", (2, 2), ("parallel", "parallel"), [((4, 8), (2, 4), "lambda i, j: (i, j)")], [((4, 4), (2, 4), "lambda i, j: (i, 0)")]),
    _case("revisit", (2, 3), ("arbitrary", "arbitrary"), [((4, 12), (2, 4), "lambda i, j: (i, j)")], [((2, 12), (2, 4), "lambda i, j: (0, j)")]),
    _case("out of range", (4,), None, [((8, 4), (2, 4), "lambda i: (i + 1, 0)")], [((8, 4), (2, 4), "lambda i: (i, 0)")]),
    _case("negative block", (3,), ("arbitrary",), [((6, 4), (2, 4), "lambda i: (i - 1, 0)")], [((6, 4), (2, 4), "lambda i: (i, 0)")]),
    _case("partial", (3,), ("parallel",), [((5, 4), (2, 4), "lambda i: (i, 0)")], [((5, 4), (2, 4), "lambda i: (i, 0)")]),
    _case("uncovered", (2,), ("parallel",), [((4, 4), (2, 4), "lambda i: (i, 0)")], [((6, 4), (2, 4), "lambda i: (i, 0)")]),
    _case("clamped", (4,), ("arbitrary",), [((6, 4), (2, 4), "lambda i: (jnp.minimum(i, 2), 0)")], [((6, 4), (2, 4), "lambda i: (jnp.minimum(i, 2), 0)")]),
    _case("squeezed", (4, 2), ("parallel", "arbitrary"), [((4, 3, 8), (None, 3, 4), "lambda i, j: (i, 0, j)")], [((4, 3, 8), (None, 3, 4), "lambda i, j: (i, 0, j)")]),
    _case("strided", (2,), ("parallel",), [((8, 4), (2, 4), "lambda i: (i * 2, 0)")], [((8, 4), (2, 4), "lambda i: (i * 2, 0)")]),
    _case("element windows", (3,), ("parallel",), [((8, 4), ("e4", "e4"), "lambda i: (i * 2, 0)")], [((8, 4), ("e3", "e4"), "lambda i: (i * 2, 0)")]),
    _case("element overhang", (3,), ("arbitrary",), [((8, 4), ("e4", "e4"), "lambda i: (i * 3, 0)")], [((9, 4), ("e3", "e4"), "lambda i: (i * 3, 0)")]),
]


def wrapped_index(case: GridCase, report) -> bool:
    """Whether an out-of-range block the checker reports has a negative index along a
    squeezed dimension, no lower than minus the extent: jax 0.10.2's TPU interpreter
    reads such an index as numpy does (from the end of the array, or fails on an
    internal assertion when writing), so it cannot observe that defect; a TPU would read
    or write before the array."""
    specs = dict(zip([f"input {k}" for k in range(len(case.inputs))] + [f"output {k}" for k in range(len(case.outputs))], case.inputs + case.outputs))
    for finding in report.findings:
        if finding.kind != "block-index-out-of-range" or finding.element is None:
            continue
        spec = specs[" ".join(finding.operand.split()[:2])]
        for block, extent, element in zip(spec.block_shape, spec.array_shape, finding.element):
            if block is None and -extent <= element <= -1:
                return True
    return False


def disagreements(case: GridCase, observation: Observation) -> list[str] | None:
    """What the static verdict and the runs disagree on (empty: agreement; None: a
    case interpret mode cannot observe, :func:`wrapped_index`)."""
    report = static_verdict(case)
    labels = verdict_labels(report)
    if wrapped_index(case, report) and (observation.error or not observation.out_of_range):
        return None
    assert not observation.error, (case, observation)
    problems = []
    undecided = labels.get("not-decided", set())
    if undecided:
        problems.append(f"not decided: {undecided}")
    out_of_range = labels.get("block-index-out-of-range", set())
    if observation.out_of_range:
        if not set(observation.out_of_range) <= out_of_range:
            problems.append(f"interpret mode raised on {observation.out_of_range}, static {out_of_range}")
        return problems  # the run stopped there: nothing else was observed
    if out_of_range:
        problems.append(f"static out of range {out_of_range}, interpret mode ran")
    revisit = labels.get("non-consecutive-revisit", set())
    if set(observation.revisit) - revisit or (revisit and not observation.revisit):
        problems.append(f"revisit: static {revisit}, observed {observation.revisit}")
    for kind, observed in (("partial-block", observation.partial), ("uncovered-output", observation.uncovered)):
        if observed is not None and labels.get(kind, set()) != set(observed):
            problems.append(f"{kind}: static {labels.get(kind, set())}, observed {observed}")
    if observation.race is not None and bool(labels.get("race")) != observation.race:
        problems.append(f"race: static {labels.get('race', set())}, observed {observation.race}")
    return problems


@pytest.fixture(scope="module")
def hand_written():
    return dict(zip([c.name for c in HAND_WRITTEN], observe(HAND_WRITTEN)))


@pytest.mark.parametrize("case", HAND_WRITTEN, ids=[c.name for c in HAND_WRITTEN])
def test_hand_written_cases_agree_with_interpret_mode(hand_written, case):
    observation = hand_written[case.name]
    assert disagreements(case, observation) == [], observation


def test_a_negative_squeezed_index_is_out_of_range_though_interpret_mode_wraps_it():
    case = _case("wrapped", (2,), ("arbitrary",), [((5, 4), (None, 4), "lambda i: (i - 1, 0)")], [((2, 4), (None, 4), "lambda i: (i, 0)")])
    report = static_verdict(case)
    (finding,) = report.errors
    assert finding.kind == "block-index-out-of-range" and finding.grid_point == (0,) and finding.element == (-1, 0)
    assert wrapped_index(case, report)


def test_the_hand_written_cases_show_every_kind(hand_written):
    seen = set()
    for observation in hand_written.values():
        seen |= {"block-index-out-of-range"} if observation.out_of_range else set()
        seen |= {"non-consecutive-revisit"} if observation.revisit else set()
        seen |= {"partial-block"} if observation.partial else set()
        seen |= {"uncovered-output"} if observation.uncovered else set()
        seen |= {"race"} if observation.race else set()
    assert seen == {"block-index-out-of-range", "non-consecutive-revisit", "partial-block", "uncovered-output", "race"}


# ------------------------------------------------------------------ generated cases


@st.composite
def _index(draw, grid_rank):
    """A block index: an affine form of one grid index, sometimes wrapped."""
    axis = draw(st.integers(0, grid_rank - 1))
    scale = draw(st.sampled_from([0, 1, 1, 1, 2, -1]))
    offset = draw(st.sampled_from([0, 0, 0, 1, -1, 2]))
    expr = f"g{axis} * {scale} + {offset}" if scale else f"{offset}"
    wrap = draw(st.sampled_from(["", "", "", "floordiv", "mod", "min", "max"]))
    if wrap == "floordiv":
        return f"({expr}) // 2"
    if wrap == "mod":
        return f"({expr}) % {draw(st.integers(1, 3))}"
    if wrap == "min":
        return f"jnp.minimum({expr}, {draw(st.integers(0, 3))})"
    if wrap == "max":
        return f"jnp.maximum({expr}, 0)"
    return expr


@st.composite
def _spec(draw, grid_rank, squeeze):
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 8)))
    # Mosaic lowers a block of element windows (pl.Element) only when no dimension is
    # blocked: the generated blocks are all blocked (maybe squeezed) or all windows.
    windows = draw(st.sampled_from([False, False, True]))
    if squeeze:
        leading = None
    elif windows:
        leading = f"e{draw(st.integers(1, shape[0]))}"
    else:
        leading = draw(st.integers(1, shape[0] + 1))
    last = f"e{draw(st.integers(1, shape[1]))}" if windows else draw(st.integers(1, shape[1] + 1))
    block = (leading, last)
    names = ", ".join(f"g{k}" for k in range(grid_rank))
    indices = ", ".join(draw(_index(grid_rank)) for _ in block)
    return Spec(shape, block, f"lambda {names}: ({indices},)")


@st.composite
def _grid_case(draw):
    rank = draw(st.integers(1, 2))
    grid = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    parallel = draw(st.integers(0, rank))
    semantics = tuple("parallel" if k < parallel else "arbitrary" for k in range(rank))
    squeeze = draw(st.booleans())
    return GridCase(grid, semantics, (draw(_spec(rank, squeeze)),), (draw(_spec(rank, draw(st.booleans()))),), "generated")


@settings(max_examples=BATCHES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_grid_case(), min_size=BATCH, max_size=BATCH))
def test_generated_cases_agree_with_interpret_mode(cases):
    observations = observe(cases)
    failures, blind = [], 0
    for case, observation in zip(cases, observations):
        problems = disagreements(case, observation)
        if problems is None:
            blind += 1
        elif problems:
            failures.append((case, observation, problems))
    print(f"{len(cases)} generated cases: {len(cases) - blind} observable, {len(cases) - blind - len(failures)} agree")
    assert failures == []
