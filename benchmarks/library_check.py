"""Measure the analysis on the library programs of a corpus (issue #31).

The corpus is what ``library_programs.py OUT`` writes: one folder per program with
``stablehlo.mlir``, ``compiled_cpu.hlo``, ``exported.bin``, ``args.npz`` and
``manifest.json``. For each program, in a subprocess of its own (``ulimit -v``, timeout):

- ``hlo_indexing.analyze(text)`` of the StableHLO, CPU time against MLIR's C++
  parse + print of the same text in the same process (best of 7), analysis best of 3
  (1 when a run takes over 5 s), every cache cleared before each run;
- computations with an error, unknown fused maps of ``@main`` (and their reasons);
- soundness of ``@main``'s fused maps against reverse-mode rows of the jacobian: for a few
  output elements of each float result, the vector-Jacobian product of the deserialised
  ``jax.export`` program with a one-hot cotangent; every input element with a non-zero
  (not NaN) entry must be an image of that output element under the maps (no library
  needed);

- tile soundness of the compiled HLO (``compiled_cpu.hlo``): for the best tilings of
  each fusion at sampled tile ids, every element the fused maps say an output tile needs
  lies in one of its operand boxes (``tile_soundness.check_module_tiles``, within
  :data:`TILES_SECONDS` CPU seconds);

and the CLI on the compiled HLO (``--hlo-print-fusion-indexing`` and
``--hlo-print-tilings=format=json``): exit status and time. ``python
benchmarks/library_check.py CORPUS [NAME ...]`` writes ``CORPUS/BASELINE.md`` and
``CORPUS/baseline.json`` (``--output`` changes the stem; ``--python`` measures the tree
installed for another interpreter; ``--timeout`` the wall-clock limit of each subprocess,
which a loaded machine may need raised for the soundness check of the largest programs);
``--part analysis|soundness|tiles FOLDER`` measures one part of one program in this
process and writes ``FOLDER/<part>_record.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


#: Address-space limit (KiB, ``ulimit -v``) and wall-clock limit (s) of each subprocess.
MEMORY_KIB = 6_000_000
TIMEOUT_S = 300
#: Output elements checked per float result, and results checked per program.
POINTS_PER_RESULT = 2
MAX_RESULTS = 24
#: Enumeration cap of one map restricted to one output element.
MAX_POINTS = 4_000_000
#: CPU seconds of the tile soundness check per program (below :data:`TIMEOUT_S`), and
#: the failures a record lists.
TILES_SECONDS = 150.0
TILE_FAILURES_LISTED = 5


def timed_analysis(text: str) -> dict[str, Any]:
    """Parse+print and analysis CPU times of ``text``, and the last analysis result."""
    import bench_analysis

    import hlo_indexing
    from hlo_indexing.dialect_glue.bindings import ir
    from hlo_indexing.dialect_glue.context import make_context

    context = make_context()
    _, baseline = bench_analysis.best_of_clocks(lambda: str(ir.Module.parse(text, context)), 7)
    results: list = []

    def run() -> None:
        bench_analysis.clear_caches()
        results.append(hlo_indexing.analyze(text))

    start = time.process_time()
    run()
    first = time.process_time() - start
    best = first
    if first < 5.0:
        best = min(first, bench_analysis.best_of_clocks(run, 2)[1])
    return {"parse_print_cpu_s": baseline, "analysis_cpu_s": best, "ratio": best / baseline, "result": results[-1]}


def image_of_point(maps: frozenset, point: tuple[int, ...], shape: tuple[int, ...]) -> tuple[Any, str | None]:
    """Linear (row-major) indices of the input elements the maps give for one output
    element: (sorted array, None), or (None, why) when a map is unknown, too large to
    enumerate, or points outside the input (a wrong map)."""
    from hlo_indexing.dialect_glue.bindings import ir
    from hlo_indexing.errors import DomainTooLargeError

    found: list = [np.zeros(0, np.int64)]
    for m in maps:
        if m.is_undefined:
            return None, f"unknown: {m.reason}"
        with m.context:
            restricted = m
            for i, value in enumerate(point):
                restricted = restricted.add_constraint(ir.AffineDimExpr.get(i), (value, value))
        try:
            _, images = restricted.enumerate(MAX_POINTS)
        except DomainTooLargeError:
            return None, "too many points"
        if len(images) and ((images < 0) | (images >= np.array(shape, np.int64))).any():
            return None, "out of bounds"
        found.append(np.ravel_multi_index(images.T, shape) if shape else np.zeros(len(images), np.int64))
    return np.unique(np.concatenate(found)), None


def soundness(folder: Path, main_maps: tuple) -> dict[str, Any]:
    """Check ``@main``'s fused maps against one-hot VJPs of the exported program."""
    import jax
    import jax.numpy as jnp

    manifest = json.loads((folder / "manifest.json").read_text())
    if manifest.get("export_vjp_order", 1) < 1:
        return {"status": "n/a", "why": "the export has no VJP"}
    exported = jax.export.deserialize(bytearray((folder / "exported.bin").read_bytes()))
    with np.load(folder / "args.npz") as data:
        args = [jnp.asarray(data[f"arr_{i}"]) for i in range(len(data.files))]
    outputs = [jax.ShapeDtypeStruct(r["shape"], r["dtype"]) for r in manifest["results"]]
    return check_soundness(exported.call, args, outputs, main_maps)


def check_soundness(fn: Any, args: list, outputs: list, main_maps: tuple, max_results: int = MAX_RESULTS,
                    points_per_result: int = POINTS_PER_RESULT) -> dict[str, Any]:
    """Check ``@main``'s fused maps (one :class:`FusionIndexing` per result of ``fn``)
    against one-hot VJPs of ``fn`` at ``args`` (``outputs``: its result shapes), for
    ``points_per_result`` random elements of at most ``max_results`` float results."""
    import jax
    import jax.numpy as jnp

    floating = [i for i, r in enumerate(outputs) if jnp.issubdtype(r.dtype, jnp.floating)]
    differentiable = [k for k, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.floating)]
    rng = np.random.default_rng(0)
    if len(floating) > max_results:
        floating = sorted(rng.choice(floating, max_results, replace=False).tolist())

    def zero(r: Any) -> Any:
        return jnp.zeros(r.shape, r.dtype if jnp.issubdtype(r.dtype, jnp.floating) else jax.dtypes.float0)

    @jax.jit
    def pullback(args: list, cotangents: list) -> Any:
        return jax.vjp(fn, *args)[1](tuple(cotangents))

    checked = missed = unchecked = 0
    examples: list[str] = []
    reasons: set = set()
    for r in floating:
        shape = outputs[r].shape
        for _ in range(points_per_result):
            point = tuple(int(rng.integers(0, n)) for n in shape)
            cotangents = [zero(o) for o in outputs]
            cotangents[r] = cotangents[r].at[point].set(1.0)
            grads = pullback(args, cotangents)
            for k in differentiable:
                # NaN entries are 0 * inf of an unrelated path (sqrt of Adam's zero second
                # moments), not dependences: left out
                reference = np.flatnonzero(np.nan_to_num(np.asarray(grads[k]), nan=0.0))
                if not len(reference):
                    continue
                ours, why = image_of_point(main_maps[r].maps[k], point, tuple(args[k].shape))
                if ours is None:
                    if why == "out of bounds":
                        missed += 1
                        examples.append(f"result {r}{list(point)} arg {k}: a map points out of bounds")
                        continue
                    unchecked += 1
                    reasons.add(why)
                    continue
                checked += 1
                lost = np.setdiff1d(reference, ours, assume_unique=True)
                if len(lost):
                    missed += 1
                    if len(examples) < 5:
                        first = np.unravel_index(lost[:2], args[k].shape)
                        examples.append(f"result {r}{list(point)} arg {k}: {len(lost)} missed, e.g. "
                                        f"{[tuple(int(c[i]) for c in first) for i in range(len(lost[:2]))]}")
    status = "wrong" if missed else ("sound" if checked else "unchecked")
    return {"status": status, "checked": checked, "missed": missed, "unchecked": unchecked,
            "unchecked_reasons": sorted(reasons)[:5], "examples": examples[:5]}


def measure_analysis(folder: Path) -> dict[str, Any]:
    """Timing, errors and unknown maps of one program (run in a subprocess by :func:`main`)."""
    text = (folder / "stablehlo.mlir").read_text()
    record: dict[str, Any] = {}
    timing = timed_analysis(text)
    result = timing.pop("result")
    record.update(timing)
    record["errors"] = [f"{c.name}: {c.error}" for c in result.computations if c.error][:5]
    main = result.computation("main")
    unknown = sorted({m.reason for f in main.maps for maps in f.maps for m in maps if m.is_undefined})
    record["unknown_main_maps"] = sum(m.is_undefined for f in main.maps for maps in f.maps for m in maps)
    record["unknown_reasons"] = unknown[:5]
    record["unknown_op_maps"] = sum(i.is_unknown for op in result.ops for i in op.indexing)
    record["over_approximated_results"] = sum(bool(f.over_approximated) for f in main.maps)
    return record


def measure_soundness(folder: Path) -> dict[str, Any]:
    """The soundness check of one program (run in a subprocess by :func:`main`)."""
    import hlo_indexing

    main = hlo_indexing.analyze((folder / "stablehlo.mlir").read_text(), per_op=False).computation("main")
    if main.error:
        return {"soundness": {"status": "n/a", "why": f"@main: {main.error}"[:200]}}
    return {"soundness": soundness(folder, main.maps)}


def measure_tiles(folder: Path) -> dict[str, Any]:
    """The tile soundness check of one program's compiled HLO (run in a subprocess by
    :func:`main`): counts, failures (a few listed), skips by reason, CPU seconds."""
    import tile_soundness

    path = folder / "compiled_cpu.hlo"
    report = tile_soundness.check_module_tiles(path.read_text(), time_budget_s=TILES_SECONDS, filename=str(path))
    record = report.to_json()
    record["failures"] = [str(f) for f in report.failures[:TILE_FAILURES_LISTED]]
    record["one_value"] = [str(f) for f in report.one_value[:TILE_FAILURES_LISTED]]
    record["skips"] = sum(report.skip_reasons.values())
    return {"tiles": record}


PARTS = {"analysis": measure_analysis, "soundness": measure_soundness, "tiles": measure_tiles}


def limited(command: list[str], timeout: int = TIMEOUT_S) -> tuple[int | str, float, str]:
    """Run under ``ulimit -v MEMORY_KIB`` and ``timeout``: (exit status or 'timeout', s, stderr tail)."""
    shell = f"ulimit -v {MEMORY_KIB}; exec " + " ".join(f"'{c}'" for c in command)
    start = time.perf_counter()
    try:
        done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, ""
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    return done.returncode, time.perf_counter() - start, (errors[0] if errors else done.stderr[-300:])[:300]


def measure(folder: Path, python: str, cli: bool = True, timeout: int = TIMEOUT_S) -> dict[str, Any]:
    """One program's record: the analysis and the soundness check in subprocesses of
    ``python`` (an interpreter with hlo_indexing and jax), then the CLI runs (the
    ``hlo-indexing-opt`` beside that interpreter); each subprocess stopped after
    ``timeout`` seconds."""
    manifest = json.loads((folder / "manifest.json").read_text())
    record: dict[str, Any] = {"name": folder.name, "library": manifest["library"], "ops": manifest["stablehlo_ops"],
                              "hlo_instructions": manifest["compiled_instructions"]}
    for part in PARTS:
        output = folder / f"{part}_record.json"
        output.unlink(missing_ok=True)
        status, seconds, tail = limited([python, str(Path(__file__).resolve()), "--part", part, str(folder)], timeout)
        record[f"{part}_wall_s"] = round(seconds, 1)
        if status == 0:
            record.update(json.loads(output.read_text()))
        else:
            record[f"{part}_failure"] = f"{status}: {tail}"
    opt = str(Path(python).parent / "hlo-indexing-opt")
    hlo = str(folder / "compiled_cpu.hlo")
    runs = (("cli_fusion", "--hlo-print-fusion-indexing"), ("cli_tilings", "--hlo-print-tilings=format=json"))
    for key, flag in runs if cli else ():
        status, seconds, tail = limited([opt, hlo, flag, "-o", "/dev/null"], timeout)
        record[key] = {"status": status, "s": round(seconds, 1), "message": tail if status != 0 else ""}
    return record


def markdown(records: list[dict[str, Any]]) -> str:
    lines = [
        "| program | library | ops | HLO instr. | parse+print ms | analysis s | ratio | errors / unknown | soundness "
        "| tiles checked | tile failures | tiles s | CLI fusion | CLI tilings |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        if "analysis_failure" in r:
            analysis = ["-", f"FAILED ({r['analysis_failure'][:90]})", "-", "-"]
        else:
            trouble = (f"{len(r['errors'])} errors ({r['errors'][0][:90]}); " if r["errors"] else "")
            trouble += f"{r['unknown_main_maps']} unknown fused"
            trouble += f" ({r['unknown_reasons'][0][:80]})" if r["unknown_reasons"] else ""
            analysis = [f"{1000 * r['parse_print_cpu_s']:.1f}", f"{r['analysis_cpu_s']:.2f}", f"{r['ratio']:.1f}x", trouble]
        if "soundness_failure" in r:
            sound = f"FAILED ({r['soundness_failure'][:60]})"
        else:
            s = r["soundness"]
            sound = s["status"] + (f" ({s['checked']} checked, {s['missed']} missed, {s['unchecked']} unchecked)"
                                   if "checked" in s else f" ({s.get('why', '')})")

        if "tiles_failure" in r:
            tiles = ["-", f"FAILED ({r['tiles_failure'][:60]})", "-"]
        elif "tiles" in r:
            t = r["tiles"]
            tiles = [f"{t['tiles']} ({t['elements']} elements, {t['skips']} skips)",
                     str(t["failed"]) + (f" ({t['failures'][0][:80]})" if t["failures"] else ""), f"{t['seconds']:.1f}"]
        else:
            tiles = ["not run", "-", "-"]

        def cli(c: dict | None) -> str:
            if c is None:
                return "not run"
            return f"{c['status']} {c['s']}s" + (f" ({c['message'][:70]})" if c["message"] else "")

        lines.append("| " + " | ".join([r["name"], r["library"], str(r["ops"]), str(r["hlo_instructions"]), *analysis,
                                         sound, *tiles, cli(r.get("cli_fusion")), cli(r.get("cli_tilings"))]) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the corpus folder (or, with --part, one program's folder)")
    parser.add_argument("names", nargs="*", help="programs to measure (default: every one)")
    parser.add_argument("--part", choices=sorted(PARTS), help="measure one part of one program in this process")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the tree to measure")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI runs on the compiled HLO")
    parser.add_argument("--output", default="BASELINE", help="stem of the table and record written in the corpus")
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help="wall-clock limit (s) of each subprocess")
    options = parser.parse_args(argv)
    if options.part:
        record = PARTS[options.part](options.corpus)
        (options.corpus / f"{options.part}_record.json").write_text(json.dumps(record, indent=2))
        return 0
    folders = [options.corpus / n for n in options.names] if options.names else sorted(
        p.parent for p in options.corpus.glob("*/manifest.json"))
    records = []
    for folder in folders:
        records.append(measure(folder, options.python, cli=not options.no_cli, timeout=options.timeout))
        print(markdown(records[-1:]).splitlines()[-1], flush=True)
        (options.corpus / f"{options.output.lower()}.json").write_text(json.dumps(records, indent=2) + "\n")
        (options.corpus / f"{options.output}.md").write_text(markdown(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
