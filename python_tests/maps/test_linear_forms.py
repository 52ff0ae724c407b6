"""Linear forms and their expressions (``hlo_indexing.maps.linear_form``).

* ``build`` gives the tree MLIR's parser makes of the printed expression (so equal texts
  are equal expressions), checked against MLIR's own parser on random sums: sums of
  distinct variables (the simplifier builds these without the left-association pass),
  and sums with ``mod``/``floordiv`` atoms and products of variables.
* ``linearize(build(form))`` gives the form back; ``LinearForms`` remembers both ways.
"""

from __future__ import annotations

import random

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.linear_form import Linear, LinearForms, build, is_variable_sum, linearize

DIMS, SYMBOLS = 4, 12
COEFFICIENTS = (1, -1, 2, -2, 3, 4, -8, 16, 1024, -7)
CONSTANTS = (0, 0, 1, -1, 5, -73, 1 << 40)


def _parsed(expr: ir.AffineExpr, context: ir.Context) -> ir.AffineExpr:
    dims = ", ".join(f"d{i}" for i in range(DIMS))
    symbols = ", ".join(f"s{i}" for i in range(SYMBOLS))
    attribute = ir.Attribute.parse(f"affine_map<({dims})[{symbols}] -> ({expr})>", context)
    return ax.typed(ir.AffineMapAttr(attribute).value.results[0])


def _random_forms(rng: random.Random, context: ir.Context, variables_only: bool, count: int) -> list[Linear]:
    variables = ax.dim_list(DIMS, context) + ax.symbol_list(SYMBOLS, context)
    forms = []
    for _ in range(count):
        atoms = rng.sample(variables, rng.randint(1, 8))
        if not variables_only:
            x, y = rng.sample(variables, 2)
            s, t = rng.sample(variables[DIMS:], 2)  # a product of variables the parser reads: of symbols
            atoms += [ax.mod(x + y * 3, rng.choice((2, 7))), ax.floordiv(x, rng.choice((3, 16))), ax.mul(s, t)]
        forms.append(Linear({a: rng.choice(COEFFICIENTS) for a in atoms}, rng.choice(CONSTANTS)))
    return forms


def test_build_is_the_parsed_tree_of_its_text() -> None:
    context = make_context()
    rng = random.Random(0)
    for variables_only in (True, False):
        for form in _random_forms(rng, context, variables_only, 400):
            assert is_variable_sum(form) is variables_only
            built = build(form, context)
            assert built == _parsed(built, context), str(built)


def test_linear_forms_round_trip_and_are_remembered() -> None:
    context = make_context()
    forms = LinearForms()
    for form in _random_forms(random.Random(1), context, False, 200):
        built = forms.build(form, context)
        assert built == build(form, context)
        again = linearize(built)
        assert (again.terms, again.constant) == (form.terms, form.constant)
        assert forms.of(built) is forms.of(built)  # remembered
        assert forms.build(form.copy(), context) is built
