"""Run the conformance corpora (``../shared/conformance/*/*.jsonl``: XLA's tiling and
indexing expectations, the tiled-layout vectors) through hlo-indexing.

Usage::

    python3 dev/tiling_conformance.py [FILE.jsonl ...] [--only SUBSTRING]

Without files, every ``*.jsonl`` in the folders of ``../shared/conformance`` (beside the
repository) is run. Each record is dispatched by its kind (:func:`record_kind`) to a
checker: a function ``record -> (status, detail)`` with status ``"pass"``, ``"fail"`` or
``"skip"``, found in the ``CHECKERS`` tables of ``tiling_conformance_symbolic.py``,
``tiling_conformance_propagation.py`` and ``corpus_checkers.py`` (indexing corpus and
layout vectors). Checkers compare numerically (through each record's ``evaluations``, or
by enumerating relations), never map texts.

Prints one row per record, ``PASS|FAIL|SKIP id: detail``, and ends with
``conformance: P passed, F failed, S skipped``. A record whose kind has no checker is a
failure; a checker that raises is a failure naming the exception (the run goes on).
Exits 1 when a record failed (or a file could not be read).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

Checker = Callable[[dict], tuple[str, str]]
DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"
#: Checker modules (next to this file, imported by name: dev/ is on the path of a script
#: run from it and of the tests).
CHECKER_MODULES = (
    "tiling_conformance_symbolic", "tiling_conformance_propagation", "corpus_checkers", "gpu_model_conformance"
)


def load_checkers() -> dict[str, Checker]:
    """The union of the ``CHECKERS`` tables of the checker modules.

    A module that fails to import is reported on stderr; its record kinds then fail as
    unknown."""
    table: dict[str, Checker] = {}
    for name in CHECKER_MODULES:
        try:
            module = importlib.import_module(name)
            table.update(module.CHECKERS)
        except Exception as exc:  # a broken checker module must not stop the run: its kinds then fail as unknown
            print(f"tiling_conformance: cannot load {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return table


def record_kind(record: dict) -> str | None:
    """The record's ``kind``; ``layout_vector`` for a tiled-layout vector (which has none)."""
    kind = record.get("kind")
    if kind is None and "layout" in record and "samples" in record:
        return "layout_vector"
    return kind if isinstance(kind, str) else None


def check_record(record: dict, checkers: dict[str, Checker]) -> tuple[str, str]:
    """Run the checker of ``record['kind']``; never raises."""
    kind = record_kind(record)
    checker = checkers.get(kind) if kind is not None else None
    if checker is None:
        return "fail", f"no checker for record kind {kind!r}"
    try:
        status, detail = checker(record)
    except Exception as exc:  # a checker must never stop the run: report the crash as a failure
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return "fail", f"checker raised {type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
    if status not in ("pass", "fail", "skip"):
        return "fail", f"checker returned the unknown status {status!r}"
    if status == "skip" and not detail:
        return "fail", "checker skipped without a reason"
    return status, detail


def run_files(paths: Sequence[Path], only: str | None = None) -> list[tuple[str, str, str]]:
    """``(status, id, detail)`` for every record of the files, in order."""
    checkers = load_checkers()
    rows = []
    for path in paths:
        with open(path) as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    rows.append(("fail", f"{path.name}:{number}", f"not JSON: {exc}"))
                    continue
                record_id = str(record.get("id", f"{path.name}:{number}"))
                if only and only not in record_id:
                    continue
                status, detail = check_record(record, checkers)
                rows.append((status, record_id, detail))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tiling_conformance.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help=f"corpus files (default: {DEFAULT_DIR}/*/*.jsonl)")
    parser.add_argument("--only", help="run only the records whose id contains this text")
    args = parser.parse_args(argv)
    files = list(args.files) or sorted(DEFAULT_DIR.glob("*/*.jsonl"))
    if not files:
        print(f"tiling_conformance: no corpus files (looked in {DEFAULT_DIR})", file=sys.stderr)
        return 1
    try:
        rows = run_files(files, args.only)
    except OSError as exc:
        print(f"tiling_conformance: error: {exc}", file=sys.stderr)
        return 1
    counts = {"pass": 0, "fail": 0, "skip": 0}
    for status, record_id, detail in rows:
        counts[status] += 1
        print(f"{status.upper()} {record_id}: {detail}")
    print(f"conformance: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
