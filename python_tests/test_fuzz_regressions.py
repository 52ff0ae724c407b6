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


FAKE_WORKER = """
import json, os, sys
channel = os.fdopen(int(os.environ["HLO_FUZZ_CHANNEL"]), "w")
channel.write(json.dumps({"ready": True}) + "\\n")
channel.flush()
sys.stdin.readline()
with open(os.environ["HLO_FUZZ_NATIVE"], "w") as native:  # what a CLI case's fds 1 and 2 receive
    native.write("free(): unaligned chunk detected in tcache 2\\n")
os.abort()
"""


def test_a_dead_workers_native_output_reaches_the_finding(tmp_path) -> None:
    """A worker killed by native code during a CLI case (whose fds 1 and 2 the worker
    redirects) still has what it printed in the finding's detail, and the campaign
    removes the file afterwards."""
    (tmp_path / "fake_worker.py").write_text(FAKE_WORKER)
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'fake_worker.py'}\n")
    python.chmod(0o755)
    fake = Worker(str(python), timeout=60.0)
    result = fake.run({"kind": "cli", "argv": []})
    assert result["outcome"] == "abort"
    assert "unaligned chunk detected" in result["detail"]
    assert fake.process is None and not Path(fake.native).exists()  # stopped, its file removed
