"""Programs built with JAX's libraries (issue #31), analysed end to end: no error, no
unknown map of ``@main``, and every fused map sound against reverse-mode rows of the
jacobian (one-hot VJPs at random output elements: every input element with a non-zero
entry must be an image of that element under the maps).

The programs come from ``benchmarks/library_programs.py`` (and ``library_programs_extra.py``) at their sizes; each
needs its library (the ``programs`` extra: ``pip install -e '.[programs]'``) and is
skipped, naming it, when it is absent. A few results and points per program keep the
suite fast; ``benchmarks/library_check.py`` checks the whole corpus.
"""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

from hlo_indexing import analyze  # noqa: E402
from helpers import BENCHMARKS, load_module  # noqa: E402

library_programs = load_module(BENCHMARKS / "library_programs.py")
library_check = load_module(BENCHMARKS / "library_check.py")

#: Program -> the module it needs: one per kind of code the issue names.
PROGRAMS = {
    "diffrax_lotka_volterra_heun": "diffrax",  # while with case inside, captured values, host callbacks
    "keras_lstm_gru_classifier": "keras",  # scans
    "linen_masked_attention": "flax",  # masks
    # of library_programs_extra (found through library_programs.build):
    "jax_pad_gather_modes": "jax",  # reflect/wrap/edge pads, take and map_coordinates modes, clamped slices
    "jax_beam_search": "jax",  # top_k over beams x vocab and beam reordering in a fori_loop
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request):
    pytest.importorskip(PROGRAMS[request.param], reason=f"{PROGRAMS[request.param]} is not installed (the 'programs' extra)")
    built = library_programs.build(request.param)
    return built, analyze(built.lowered().as_text(), per_op=False).computation("main")


def test_analysed_without_error_or_unknown_map(program) -> None:
    built, main = program
    assert main.error is None, main.error
    unknown = {m.reason for fused in main.maps for maps in fused.maps for m in maps if m.is_undefined}
    assert not unknown, f"{built.name}: unknown maps: {sorted(unknown)[:3]}"


def test_maps_are_sound_against_the_jacobian(program) -> None:
    built, main = program
    outputs = jax.eval_shape(built.fn, *built.args)
    found = library_check.check_soundness(built.fn, list(built.args), list(outputs), main.maps, max_results=3,
                                          points_per_result=1)
    assert found["checked"] > 0, f"{built.name}: nothing checked ({found})"
    assert found["missed"] == 0, f"{built.name}: {found['examples']}"
