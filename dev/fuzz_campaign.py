"""A fuzz campaign: generate cases of five kinds, run them in child workers, classify,
minimise the findings and write them to a folder.

    python3 dev/run.py fuzz --minutes 15 --seed 1 [--out DIR] [--kinds mlir,hlo,...]

Each case runs in a worker process (``fuzz_worker.py``) that stays alive across cases; at most
``--jobs`` (default 2) workers run at once. A worker that dies (a native abort, a CHECK
failure, an out-of-memory kill) or does not answer within ``--timeout`` seconds is
recorded as ``abort`` or ``hang`` for that case and replaced, so the campaign observes
these failures instead of suffering them. Other outcomes come from the worker (see its
docstring). Findings are grouped by signature (kind, outcome, exception and frame); the
first case of each group is minimised by delta debugging (lines, then tokens) while it
keeps its signature, and written as ``DIR/<outcome>-<n>.json`` with the original case,
the minimised case and the detail. The summary table is printed and written to
``DIR/summary.json``. An ``abort`` finding also holds the ids of every case its worker
had run (``worker_history``): heap damage done by one case may kill the worker many
cases later, so ``--replay DIR/abort-<n>.json`` runs that sequence again in one worker.
``--heap-checks`` runs the workers with glibc's heap checks, which abort at the damage
instead (how the seed-20261130 abort was found: a failing parse of a Shardy op).

Standard library only; the workers run with the interpreter given by ``--python``
(default: this one).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from fuzz_generate import KINDS, generate, load_corpus

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

FAILURES = ("abort", "hang", "foreign", "oob", "traceback", "unlocated", "mismatch", "partial-output")
OUTCOMES = ("ok", "error") + FAILURES
_TOKEN = re.compile(r"\s+|[A-Za-z_%@#!^][\w.$-]*|-?\d+|\S")


class Worker:
    """One child worker; ``run`` sends a case and waits for its result or its death.

    ``history`` holds the ids of the cases the current process has run, in order: an
    ``abort`` result carries it, as heap damage done by earlier cases may only kill the
    worker much later (``--replay`` runs the same sequence again)."""

    def __init__(self, python: str, timeout: float, env: dict[str, str] | None = None):
        self.python, self.timeout, self.env = python, timeout, env or {}
        self.process: subprocess.Popen[str] | None = None
        self.started = 0
        self.history: list[int] = []

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        self.stderr = tempfile.TemporaryFile()
        fd, self.native = tempfile.mkstemp(prefix="hlo-fuzz-native-")
        os.close(fd)
        env = dict(os.environ, **self.env, PYTHONFAULTHANDLER="1", HLO_FUZZ_CHANNEL=str(write_fd), HLO_FUZZ_NATIVE=self.native)
        self.process = subprocess.Popen(
            [self.python, str(HERE / "fuzz_worker.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
            pass_fds=(write_fd,),
            env=env,
            text=True,
        )
        os.close(write_fd)
        self.channel = os.fdopen(read_fd, "r", encoding="utf-8")
        self.started += 1
        self.history = []
        ready, _, _ = select.select([self.channel], [], [], 120)
        if not ready or not self.channel.readline():
            raise RuntimeError(f"fuzz worker did not start: {self._stderr_tail()}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.channel.close()
            self.stderr.close()
            os.unlink(self.native)
            self.process = None

    def _stderr_tail(self) -> str:
        """The start and end of what the worker printed on stderr and, during a CLI
        case (whose fds 1 and 2 it redirects), in its native output file."""
        self.stderr.seek(0)
        text = self.stderr.read().decode("utf-8", "replace")
        with open(self.native, encoding="utf-8", errors="replace") as handle:
            text += handle.read()
        lines = [l for l in text.splitlines() if l.strip()]
        return "\n".join(lines[:4] + ["..."] + lines[-8:] if len(lines) > 12 else lines)

    def run(self, case: dict, timeout: float | None = None) -> dict:
        if self.process is None or self.process.poll() is not None:
            self.stop()
            self._start()
        process = self.process
        assert process is not None and process.stdin is not None
        self.history.append(case.get("id", -1))
        self.stderr.seek(0)
        self.stderr.truncate()
        open(self.native, "w").close()  # noqa: SIM115 - emptied: a death shows this case's output only
        try:
            process.stdin.write(json.dumps(case) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                return {"outcome": "hang", "detail": f"no answer within {timeout or self.timeout} s", "signature": f"{case['kind']}: hang"}
            ready, _, _ = select.select([self.channel], [], [], min(remaining, 1.0))
            if ready:
                line = self.channel.readline()
                if line:
                    return json.loads(line)
                code = process.wait()
                tail = self._stderr_tail()
                self.stop()
                last = tail.splitlines()[-1] if tail else ""
                first_native = next(
                    (l for l in tail.splitlines() if re.search(r"Check failed|^F\d{4}|Fatal Python error|RET_CHECK|LOG\(FATAL\)", l)), last
                )
                return {
                    "outcome": "abort",
                    "detail": f"worker died (exit {code}) at its case {len(self.history)}: {tail}",
                    "history": list(self.history),
                    "signature": f"{case['kind']}: abort {re.sub(r'[0-9]+', 'N', first_native)[:100]}",
                }


def case_text_field(case: dict) -> str:
    return "input" if case["kind"] == "cli" else "text"


def ddmin(items: list[str], still_fails, budget: list[int]) -> list[str]:
    """Delta debugging (Zeller): a smaller list for which ``still_fails`` holds."""
    n = 2
    while len(items) >= 2 and budget[0] > 0:
        chunk = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), chunk):
            if budget[0] <= 0:
                break
            candidate = items[:start] + items[start + chunk :]
            budget[0] -= 1
            if candidate and still_fails(candidate):
                items, n, reduced = candidate, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), n * 2)
    return items


def minimise(worker: Worker, case: dict, signature: str, runs: int, timeout: float, end: float) -> tuple[dict, int]:
    """The case with as few lines, then tokens, of its text as keep ``signature`` (at most
    ``runs`` runs, until the monotonic time ``end``)."""
    field = case_text_field(case)
    budget = [runs]
    used = [0]

    def keeps(text: str) -> bool:
        used[0] += 1
        if time.monotonic() >= end:
            budget[0] = 0
            return False
        result = worker.run(dict(case, **{field: text}), timeout)
        return result["signature"] == signature

    text = case.get(field, "")
    if text:
        lines = ddmin(text.split("\n"), lambda ls: keeps("\n".join(ls)), budget)
        text = "\n".join(lines)
        tokens = ddmin(_TOKEN.findall(text), lambda ts: keeps("".join(ts)), budget)
        text = "".join(tokens)
    minimal = dict(case, **{field: text})
    if case["kind"] == "cli" and len(case["argv"]) > 1:
        argv = list(case["argv"])
        for flag in list(argv[1:]):
            if budget[0] <= 0:
                break
            trial = [a for a in argv if a is not flag]
            budget[0] -= 1
            used[0] += 1
            if worker.run(dict(minimal, argv=trial), timeout)["signature"] == signature:
                argv = trial
        minimal["argv"] = argv
    return minimal, used[0]


def run_campaign(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    corpus = load_corpus(ROOT)
    kinds = [k for k in args.kinds.split(",") if k]
    end = time.monotonic() + args.minutes * 60
    counts: dict[str, Counter] = {k: Counter() for k in kinds}
    groups: dict[str, list] = {}
    cases: queue.Queue = queue.Queue(maxsize=64)
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    generated = [0]
    limit = args.max_cases or 10**12

    def producer() -> None:
        i = 0
        while not stop.is_set() and time.monotonic() < end and i < limit:
            case = generate(rng, corpus, kinds[i % len(kinds)])
            case["id"] = i
            i += 1
            while not stop.is_set():
                try:
                    cases.put(case, timeout=0.5)
                    break
                except queue.Full:
                    if time.monotonic() >= end:
                        return
        generated[0] = i

    env = heap_check_env() if args.heap_checks else None
    workers = [Worker(args.python, args.timeout, env) for _ in range(args.jobs)]

    def consume(worker: Worker) -> None:
        while True:
            try:
                case = cases.get(timeout=0.5)
            except queue.Empty:
                if not producer_thread.is_alive():
                    return
                continue
            if time.monotonic() >= end + args.timeout:
                return
            results.put((case, worker.run(case)))

    producer_thread = threading.Thread(target=producer, daemon=True)
    producer_thread.start()
    threads = [threading.Thread(target=consume, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    started = time.monotonic()
    total = 0
    last_report = started
    while any(t.is_alive() for t in threads) or not results.empty():
        try:
            case, result = results.get(timeout=0.5)
        except queue.Empty:
            continue
        total += 1
        counts[case["kind"]][result["outcome"]] += 1
        if result["outcome"] in FAILURES:
            groups.setdefault(result["signature"], []).append((case, result))
        if time.monotonic() - last_report > 30:
            last_report = time.monotonic()
            found = sum(len(v) for v in groups.values())
            print(f"fuzz: {total} cases, {found} findings in {len(groups)} groups, {last_report - started:.0f} s", flush=True)
    stop.set()
    elapsed = time.monotonic() - started

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    findings = []
    for n, (signature, members) in enumerate(sorted(groups.items())):
        case, result = members[0]
        record = {
            "signature": signature,
            "outcome": result["outcome"],
            "count": len(members),
            "detail": result["detail"],
            "case": case,
            "minimised": None,
            "minimise_runs": 0,
            "seed": args.seed,
            "kinds": kinds,
        }
        if "history" in result:
            record["worker_history"] = result["history"]
        record["path"] = str(out / f"{result['outcome']}-{n:03d}.json")
        Path(record["path"]).write_text(json.dumps(record, indent=1) + "\n")
        findings.append(record)
    minimise_end = time.monotonic() + args.minimise_seconds
    for record in findings[: args.minimise_groups]:
        if time.monotonic() >= minimise_end:
            break
        runs_budget = args.minimise_runs if record["outcome"] != "hang" else 4
        minimal, runs = minimise(workers[0], record["case"], record["signature"], runs_budget, args.timeout, minimise_end)
        record["minimised"], record["minimise_runs"] = minimal, runs
        Path(record["path"]).write_text(json.dumps(record, indent=1) + "\n")
    for w in workers:
        w.stop()
    summary = {
        "seed": args.seed,
        "minutes": args.minutes,
        "elapsed_seconds": round(elapsed, 1),
        "cases": total,
        "per_kind": {k: dict(v) for k, v in counts.items()},
        "groups": {f["signature"]: f["count"] for f in findings},
        "worker_starts": sum(w.started for w in workers),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def heap_check_env() -> dict[str, str]:
    """The environment of glibc's heap checks: ``MALLOC_CHECK_=3`` (with glibc's checking
    malloc preloaded, which glibc 2.34 and later need for it) and ``MALLOC_PERTURB_``, so
    that damage to the heap aborts the worker at the free that finds it, mostly in the
    case that did it, instead of thousands of cases later."""
    env = {"MALLOC_CHECK_": "3", "MALLOC_PERTURB_": "165"}
    found = sorted(Path("/usr/lib").glob("*/libc_malloc_debug.so.0")) + sorted(Path("/lib").glob("*/libc_malloc_debug.so.0"))
    if found:
        env["LD_PRELOAD"] = " ".join(filter(None, [os.environ.get("LD_PRELOAD", ""), str(found[0])]))
    return env


def replay(finding: dict, python: str, timeout: float, env: dict[str, str] | None = None) -> dict:
    """Run the cases an aborted worker had run (``worker_history`` of an ``abort``
    finding), in their order, in one new worker: regenerated from the finding's seed and
    kinds, as the campaign made them (same checkout, so the same corpus). Returns
    ``{"cases": run, "died_at": id or None, "result": the last result}``."""
    wanted = [case_id for case_id in finding["worker_history"] if case_id >= 0]
    needed = set(wanted)
    rng = random.Random(finding["seed"])
    corpus = load_corpus(ROOT)
    kinds = finding["kinds"]
    made: dict[int, dict] = {}
    for i in range(max(wanted) + 1):
        case = generate(rng, corpus, kinds[i % len(kinds)])
        if i in needed:
            made[i] = dict(case, id=i)
    worker = Worker(python, timeout, env)
    result: dict = {}
    try:
        for run, case in enumerate((made[case_id] for case_id in wanted), 1):
            result = worker.run(case)
            if result["outcome"] == "abort":
                return {"cases": run, "died_at": case["id"], "result": result}
        return {"cases": len(wanted), "died_at": None, "result": result}
    finally:
        worker.stop()


def print_table(summary: dict) -> None:
    columns = OUTCOMES
    width = max(10, *(len(c) + 1 for c in columns))
    print(f"{'kind':8}" + "".join(f"{c:>{width}}" for c in columns) + f"{'total':>{width}}")
    totals: Counter = Counter()
    for kind, counts in summary["per_kind"].items():
        totals.update(counts)
        print(f"{kind:8}" + "".join(f"{counts.get(c, 0):>{width}}" for c in columns) + f"{sum(counts.values()):>{width}}")
    print(f"{'all':8}" + "".join(f"{totals.get(c, 0):>{width}}" for c in columns) + f"{sum(totals.values()):>{width}}")
    print(
        f"seed {summary['seed']}: {summary['cases']} cases in {summary['elapsed_seconds']} s "
        f"({summary['cases'] / max(summary['elapsed_seconds'], 1e-9):.1f}/s), {summary['worker_starts']} worker starts"
    )
    for signature, count in sorted(summary["groups"].items(), key=lambda kv: -kv[1]):
        print(f"  {count:5d}  {signature}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dev/run.py fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock, printed)")
    parser.add_argument("--out", default=None, help="findings folder (default: fuzz-findings/seed-S)")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--timeout", type=float, default=30.0,
        help="seconds before a case counts as a hang (above limits.HLO_PARSE_SECONDS, so that a runaway HLO parse is "
        "seen as the library's TimeLimitError)",
    )
    parser.add_argument("--max-cases", type=int, default=0, help="stop after this many cases (0: no limit)")
    parser.add_argument("--minimise-groups", type=int, default=40, help="minimise the first N finding groups")
    parser.add_argument("--minimise-runs", type=int, default=150, help="runs per minimised finding")
    parser.add_argument("--minimise-seconds", type=float, default=120.0, help="time for all minimisation")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--heap-checks", action="store_true",
        help="run the workers with glibc's heap checks (MALLOC_CHECK_=3): heap damage aborts the case that does it",
    )
    parser.add_argument(
        "--replay", metavar="FINDING",
        help="run again, in one worker, the cases the worker of this abort finding had run (its worker_history)",
    )
    args = parser.parse_args(argv)
    if args.replay:
        finding = json.loads(Path(args.replay).read_text())
        if "worker_history" not in finding:
            parser.error(f"{args.replay} is not an abort finding with a worker_history")
        outcome = replay(finding, args.python, args.timeout, heap_check_env() if args.heap_checks else None)
        died = outcome["died_at"]
        print(f"replayed {outcome['cases']} of {len(finding['worker_history'])} cases: " + (
            f"the worker died at case {died} (the campaign's died at {finding['worker_history'][-1]}): "
            f"{outcome['result']['detail'][:2000]}" if died is not None else "no abort"
        ))
        return 1 if died is not None else 0
    if args.seed is None:
        args.seed = int(time.time()) % 100000
    if args.out is None:
        args.out = str(ROOT / "fuzz-findings" / f"seed-{args.seed}")
    unknown = set(args.kinds.split(",")) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {','.join(KINDS)}")
    print(f"fuzz: seed {args.seed}, {args.minutes} min, kinds {args.kinds}, findings to {args.out}", flush=True)
    summary = run_campaign(args)
    print_table(summary)
    failures = sum(v for counts in summary["per_kind"].values() for k, v in counts.items() if k in FAILURES)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
