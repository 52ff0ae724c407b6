"""The conformance runner's documented differences: reported only when the documented
relation between our maps and XLA's holds on the case."""

from __future__ import annotations

import random

import conformance

PAD_VALUE = conformance.KnownDifference("ours_inside", "padding value")
BOUNDS = conformance.KnownDifference("equal_in_shape", "bounds")
OURS_WIDER = conformance.KnownDifference("xla_inside", "over-approximation")


def _maps(*texts):
    return [conformance.parse_map(t) for t in texts]


def test_ours_inside_holds_only_for_a_strict_subset() -> None:
    rng = random.Random(0)
    xla = _maps("(d0) -> (), domain: d0 in [0, 4]")
    subset = _maps("(d0) -> (), domain: d0 in [0, 4], d0 mod 2 in [0, 0]")
    assert conformance.known_difference_holds(PAD_VALUE, subset, xla, (), rng)
    assert not conformance.known_difference_holds(PAD_VALUE, xla, xla, (), rng)  # no difference at all
    assert not conformance.known_difference_holds(PAD_VALUE, xla, subset, (), rng)  # ours is the larger one


def test_equal_in_shape_ignores_only_pairs_outside_the_operand() -> None:
    rng = random.Random(0)
    xla = _maps("(d0){rt0} -> (d0 - rt0), domain: d0 in [0, 9], rt0 in [0, 6]")
    ours = _maps("(d0){rt0} -> (d0 - rt0), domain: d0 in [0, 9], rt0 in [0, 6], d0 - rt0 in [0, 3]")
    shifted = _maps("(d0){rt0} -> (d0 - rt0 + 1), domain: d0 in [0, 9], rt0 in [0, 6], d0 - rt0 + 1 in [0, 3]")
    assert conformance.known_difference_holds(BOUNDS, ours, xla, (4,), rng)
    assert not conformance.known_difference_holds(BOUNDS, shifted, xla, (4,), rng)


def test_xla_inside_accepts_a_placeholder_map_only_when_ours_fits_the_operand() -> None:
    rng = random.Random(0)
    placeholder = _maps("() -> ()")
    ours = _maps("()[s0] -> (s0), domain: s0 in [0, 9]")
    assert conformance.known_difference_holds(OURS_WIDER, ours, placeholder, (10,), rng)
    assert not conformance.known_difference_holds(OURS_WIDER, placeholder, placeholder, (10,), rng)
    prefix = _maps("(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], s0 - d0 in [-9, 0]")
    assert conformance.known_difference_holds(OURS_WIDER, prefix, _maps("(d0) -> (d0), domain: d0 in [0, 9]"), (10,), rng)
    assert not conformance.known_difference_holds(OURS_WIDER, _maps("(d0) -> (d0), domain: d0 in [0, 9]"), prefix, (10,), rng)


def test_documented_cases_are_diff_not_pass_or_fail() -> None:
    record = {
        "id": "t::PadNegative", "kind": "output_to_input", "root_opcode": "pad", "also_checked_on_stablehlo": True,
        "hlo": "HloModule m\nENTRY e {\n  p0 = f32[7] parameter(0)\n  p1 = f32[] parameter(1)\n"
               "  ROOT pad = f32[5] pad(p0, p1), padding=-3_-5_1\n}\n",
        "expected": [["(d0) -> ((d0 + 3) floordiv 2), domain: d0 in [1, 3], (d0 + 3) mod 2 in [0, 0]"],
                     ["(d0) -> (), domain: d0 in [0, 4]"]],
    }
    outcome = conformance.run_record(record)
    assert outcome.status == conformance.DIFF, outcome
    wrong = dict(record, expected=[record["expected"][0], ["(d0) -> (), domain: d0 in [0, 1]"]])
    assert conformance.run_record(wrong).status == conformance.FAIL


def test_no_dependence_is_inside_a_map_that_reads() -> None:
    """A scan output whose body never reads the carry has no init maps at all."""
    rng = random.Random(0)
    reads_init = _maps("(d0) -> (), domain: d0 in [0, 9]")
    assert conformance.known_difference_holds(PAD_VALUE, [], reads_init, (), rng)
    assert not conformance.known_difference_holds(PAD_VALUE, [], [], (), rng)  # nothing on either side


def test_scan_passthrough_body_is_a_documented_difference_only_where_documented() -> None:
    """XLA reads the init at every step of a body that ignores the carry (ours: no
    dependence), and gives the final carry a placeholder for the input."""
    hlo = (
        "HloModule m\nscan_computation {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
        "  ROOT t = (f32[], f32[]) tuple(p0, p1)\n}\nENTRY e {\n  p0 = f32[10] parameter(0)\n"
        "  p1 = f32[] parameter(1)\n  ROOT scan = (f32[10], f32[]) scan(p0, p1), dimensions={0}, "
        "num_carries=1, to_apply=scan_computation\n}\n"
    )
    record = {
        "id": "t::Scan", "kind": "output_to_input", "root_opcode": "scan", "also_checked_on_stablehlo": False,
        "hlo": hlo, "root_output": 0,
        "expected": [["(d0) -> (d0), domain: d0 in [0, 9]"], ["(d0) -> (), domain: d0 in [0, 9]"]],
    }
    assert conformance.run_record(record).status == conformance.DIFF
    shifted = dict(record, expected=[["(d0) -> (9 - d0), domain: d0 in [0, 9]"], record["expected"][1]])
    assert conformance.run_record(shifted).status == conformance.FAIL  # input maps are not documented away
