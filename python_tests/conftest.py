"""Shared pytest fixtures. Tests import the installed ``hlo_indexing`` package only
(pytest runs with ``--import-mode=importlib``; the repository root is not on sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context

#: ``tools/devtools`` (developer tools, not installed) is importable as ``devtools``,
#: and the tests' shared helper modules (``tiling_fixtures``) by their names.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def context() -> ir.Context:
    """A fresh context with every dialect loaded, active for the whole test."""
    ctx = make_context()
    with ctx:
        yield ctx
