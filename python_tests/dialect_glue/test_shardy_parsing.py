"""JAX's Shardy annotations parse with default flags: with the dialect where the
bindings ship it (jaxlib does), else the ``#sdy`` attributes are kept opaque (Shardy's
ops have a custom syntax that needs the dialect)."""

from __future__ import annotations

import pytest

from hlo_indexing.dialect_glue import context as context_module
from hlo_indexing.dialect_glue import parsing
from hlo_indexing.errors import ParseError

TEXT = """module @jit_f {
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x3xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}"""


def test_shardy_text_parses_with_the_dialect() -> None:
    module = parsing.parse_module(TEXT, context=context_module.make_context())
    assert "sdy.sharding_constraint" in str(module)


ATTRIBUTES_ONLY = """func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<4x3xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) {
  return %arg0 : tensor<4x3xf32>
}"""


def test_without_the_dialect_the_attributes_stay_opaque(monkeypatch) -> None:
    monkeypatch.setattr(context_module, "sdy", None)
    monkeypatch.setattr(parsing, "sdy", None)
    bare = context_module.make_context()
    module = parsing.parse_module(ATTRIBUTES_ONLY, context=bare)
    assert "#sdy.sharding" in str(module)


def test_without_the_dialect_shardy_ops_are_a_clear_parse_error(monkeypatch) -> None:
    monkeypatch.setattr(context_module, "sdy", None)
    monkeypatch.setattr(parsing, "sdy", None)
    with pytest.raises(ParseError, match="sdy") as info:
        parsing.parse_module(TEXT, context=context_module.make_context())
    assert info.value.location.line == 2
