"""Shared pytest fixtures. Tests import the installed ``hlo_indexing`` package only (the
repository root is never on their path); the shared test helpers next to this file
(``tiling_fixtures``, ``test_op_indexing_support``) and the developer tools of ``dev/``
import by their names (pytest's configuration in ``pyproject.toml``)."""

from __future__ import annotations

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context


@pytest.fixture
def context() -> ir.Context:
    """A fresh context with every dialect loaded, active for the whole test."""
    ctx = make_context()
    with ctx:
        yield ctx
