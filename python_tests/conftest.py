"""Shared pytest fixtures. Tests import the installed ``hlo_indexing`` package only
(pytest runs with ``--import-mode=importlib``; the repository root is not on sys.path)."""

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
