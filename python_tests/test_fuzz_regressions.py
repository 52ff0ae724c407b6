"""Every minimised finding of the fuzz campaign (``python3 tools/dev.py fuzz``), and the
cases of issue #15, replayed through the campaign's own worker in a child process (so
an abort or a hang fails the test instead of killing pytest): each must end ``ok`` or
with a located ``HloIndexingError`` (``error``), never an abort, a hang, an exception
outside the hierarchy, an out-of-bounds map, a traceback or an unlocated error.

``fuzz_regressions.json`` holds one entry per finding: ``finding`` (the signature it had
when found, or the issue's class), the outcome it had, and the minimised ``case``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from devtools.fuzz.campaign import Worker  # tools/ is on sys.path (conftest.py)

FINDINGS = json.loads((Path(__file__).with_name("fuzz_regressions.json")).read_text())


@pytest.fixture(scope="module")
def worker():
    w = Worker(sys.executable, timeout=60.0)
    yield w
    w.stop()


@pytest.mark.parametrize("finding", FINDINGS, ids=[f["finding"][:60] for f in FINDINGS])
def test_finding_is_fixed(worker, finding) -> None:
    result = worker.run(finding["case"])
    assert result["outcome"] in ("ok", "error"), f"{finding['finding']}: {result['outcome']}: {result['detail'][:500]}"
