"""Every minimised finding of the fuzz campaign (``python3 dev/run.py fuzz``), and the
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
from fuzz_campaign import Worker, heap_check_env, replay  # dev/ is on the tests' path (pyproject)

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


def _fake_python(folder: Path, worker: str) -> str:
    """An interpreter path that runs the fake ``worker`` script whatever it is given."""
    (folder / "fake_worker.py").write_text(worker)
    python = folder / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {folder / 'fake_worker.py'}\n")
    python.chmod(0o755)
    return str(python)


def test_a_dead_workers_native_output_reaches_the_finding(tmp_path) -> None:
    """A worker killed by native code during a CLI case (whose fds 1 and 2 the worker
    redirects) still has what it printed in the finding's detail, and the campaign
    removes the file afterwards."""
    fake = Worker(_fake_python(tmp_path, FAKE_WORKER), timeout=60.0)
    result = fake.run({"kind": "cli", "argv": []})
    assert result["outcome"] == "abort"
    assert "unaligned chunk detected" in result["detail"]
    assert fake.process is None and not Path(fake.native).exists()  # stopped, its file removed


#: A worker that answers ``ok`` twice and aborts on its third case.
ABORTS_ON_THIRD = """
import json, os, sys
channel = os.fdopen(int(os.environ["HLO_FUZZ_CHANNEL"]), "w")
channel.write(json.dumps({"ready": True}) + "\\n")
channel.flush()
for number, line in enumerate(sys.stdin, 1):
    if number == 3:
        os.abort()
    channel.write(json.dumps({"outcome": "ok", "detail": "", "signature": ""}) + "\\n")
    channel.flush()
"""


def test_an_abort_carries_the_cases_its_worker_had_run(tmp_path) -> None:
    """Heap damage done by one case may kill the worker cases later (the seed-20261130
    abort, after ~45,000 CLI cases): the abort names every case of that worker, in order."""
    fake = Worker(_fake_python(tmp_path, ABORTS_ON_THIRD), timeout=60.0)
    results = [fake.run({"kind": "map", "text": "", "id": case_id}) for case_id in (7, 8, 9, 10)]
    fake.stop()
    assert [r["outcome"] for r in results] == ["ok", "ok", "abort", "ok"]
    assert results[2]["history"] == [7, 8, 9]
    assert "at its case 3" in results[2]["detail"]
    assert fake.history == [10]  # the replacement worker's own


def test_replay_runs_the_history_in_its_order(tmp_path) -> None:
    """``--replay`` regenerates the cases of an abort's history from the seed and runs
    them in the recorded order in one worker (here the third one, case 1, kills it)."""
    finding = {"seed": 5, "kinds": ["map"], "worker_history": [4, 0, 1, 3]}
    outcome = replay(finding, _fake_python(tmp_path, ABORTS_ON_THIRD), 60.0)
    assert (outcome["cases"], outcome["died_at"]) == (3, 1)
    assert outcome["result"]["history"] == [4, 0, 1]


#: A worker that answers its first case with the MALLOC_CHECK_ it was started with.
REPORTS_MALLOC_CHECK = """
import json, os, sys
channel = os.fdopen(int(os.environ["HLO_FUZZ_CHANNEL"]), "w")
channel.write(json.dumps({"ready": True}) + "\\n")
channel.flush()
sys.stdin.readline()
channel.write(json.dumps({"outcome": "ok", "detail": os.environ.get("MALLOC_CHECK_", ""), "signature": ""}) + "\\n")
channel.flush()
"""


def test_heap_checks_reach_the_workers(tmp_path) -> None:
    """``--heap-checks``: the workers run with glibc's heap checks."""
    fake = Worker(_fake_python(tmp_path, REPORTS_MALLOC_CHECK), timeout=60.0, env=heap_check_env())
    assert fake.run({"kind": "map", "text": "", "id": 0})["detail"] == "3"
    fake.stop()
