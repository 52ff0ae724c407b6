"""Issue #30: ``python3 dev/run.py test -k EXPR`` and ``--quick`` for the edit-test loop,
retried as a user runs them; ``-k`` reaches lit through a regular expression that selects
the names pytest's ``-k`` selects."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import run
from helpers import REPO_ROOT

NAMES = ["ops/interval.mlir", "layout/Interval-layout.test", "driver/batch.test", "fusion/tuples.mlir"]


@pytest.mark.parametrize(
    "expression, selected",
    [
        ("interval", {0, 1}),
        ("interval and not layout", {0}),
        ("batch or tuples", {2, 3}),
        ("not (interval or batch)", {3}),
    ],
)
def test_keyword_filter_selects_what_pytest_k_selects(expression, selected):
    pattern = run.keyword_filter(expression)
    assert {k for k, name in enumerate(NAMES) if re.search(pattern, name)} == selected


@pytest.mark.parametrize("bad", ["interval and", "(interval", "interval )"])
def test_a_malformed_expression_is_refused_before_anything_runs(bad):
    done = subprocess.run([sys.executable, str(REPO_ROOT / "dev" / "run.py"), "test", "-k", bad], capture_output=True, text=True)
    assert done.returncode == 2 and "dev: error: -k" in done.stderr and "dev: " not in done.stdout


def test_test_dash_k_runs_the_matching_pytest_and_lit_tests_and_says_mypy_did_not_run():
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "dev" / "run.py"), "test", "-k", "show_layout_refuses or show-layout"],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert re.search(r"Passed\s*:\s*1\b", done.stdout)  # lit: driver/show-layout.test alone
    assert re.search(r"\b5 passed, \d+ deselected", done.stdout)  # pytest: the five --show-layout refusals
    assert "dev:   mypy: not run with -k or --quick" in done.stdout


def test_a_name_only_pytest_has_passes_and_a_name_nothing_has_fails():
    # README's example: `-k interval` selects pytest tests and no lit test (lit runs with
    # --allow-empty-runs: not a failure); a name that selects nothing at all fails.
    def run(expression: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(REPO_ROOT / "dev" / "run.py"), "test", "-k", expression],
            capture_output=True, text=True, timeout=600,
        )

    only_pytest = run("interval")
    assert only_pytest.returncode == 0 and "dev: all tests passed" in only_pytest.stdout, only_pytest.stdout[-2000:]
    assert re.search(r"\b\d+ passed, \d+ deselected", only_pytest.stdout)
    nothing = run("no_test_has_this_name")
    assert nothing.returncode == 1 and "dev: FAILED: pytest" in nothing.stdout, nothing.stdout[-2000:]
