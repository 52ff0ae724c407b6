"""Run every benchmark, print Markdown tables and write a JSON record.

Usage (``python3 dev/run.py bench [options]`` runs this with the repository's venv)::

    python benchmarks/run.py                     # 1k/10k/50k ops, 64M-element layouts
    python benchmarks/run.py --quick             # small sizes (a smoke run, ~1 min)
    python benchmarks/run.py --sizes 1000,4000   # chosen module sizes
    python benchmarks/run.py --update-readme     # also refresh README.md's table
    python benchmarks/run.py --training-only     # only the JAX training steps (issue #17)
    python benchmarks/run.py --tiling-only       # only the tiling of the compiled steps (issues #19, #28)
    python benchmarks/run.py --tiling-only --device h100   # ... both shapes ranked by a device's cost model (issue #26)
    python benchmarks/run.py --library-only      # only the programs of JAX's libraries (issue #31)

Every figure is a ratio against a baseline measured in the same process on the same
input (see each ``bench_*`` module). The record goes to ``benchmarks/results/latest.json``
(``quick.json`` with ``--quick``; ``--output`` overrides). The targets of issue #8 are
checked at the end; the exit status is 0 whether or not they are met.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_analysis  # noqa: E402
import bench_cli  # noqa: E402
import bench_generate as generate  # noqa: E402
import bench_hlo_import  # noqa: E402
import bench_layout_pack  # noqa: E402
import bench_library  # noqa: E402
import bench_simplifier  # noqa: E402
import bench_tiling  # noqa: E402
import bench_training  # noqa: E402

from hlo_indexing.devices import device as select_device  # noqa: E402

from hlo_indexing.analysis.fusion import fusion_indexing  # noqa: E402
from hlo_indexing.dialect_glue.bindings import ir  # noqa: E402
from hlo_indexing.dialect_glue.context import make_context  # noqa: E402
from hlo_indexing.maps import affine_expr as ax  # noqa: E402

README = HERE.parent / "README.md"
README_START, README_END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"
FULL_SIZES = (1000, 10000, 50000)
QUICK_SIZES = (250, 1000)
TARGET_SIZE = 10000  # the size the "within 10x" target is about


def table(header: list[str], rows: list[list[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def run_analysis(sizes: list[int], memory: bool) -> tuple[list[dict], list[str]]:
    records, shapes = [], []
    for family in generate.FAMILIES:
        if family == "transformer" and not generate.jax_available():
            print("bench: jax is not installed: skipping the transformer family", flush=True)
            continue
        for n in sizes:
            gen = generate.generate(family, n)
            if n == sizes[-1]:
                shapes.append(gen.describe())
            print(f"bench: analysis of {gen.describe()}", flush=True)
            records.append(bench_analysis.measure(gen, repeat=3 if n <= 10000 else 2, memory=memory))
    return records, shapes


def scaling_rows(records: list[dict]) -> list[dict]:
    rows = []
    for family in dict.fromkeys(r["family"] for r in records):
        mine = [r for r in records if r["family"] == family]
        if len(mine) < 2:
            continue
        steps = [bench_analysis.growth_per_doubling(a, b) for a, b in zip(mine, mine[1:])]
        row = {
            "family": family,
            "sizes": [r["n_ops"] for r in mine],
            "growth_per_doubling_steps": steps,
            "growth_per_doubling": bench_analysis.growth_per_doubling(mine[0], mine[-1]),
        }
        if all(r["peak_python_bytes"] for r in mine):
            row["memory_growth_per_doubling"] = bench_analysis.growth_per_doubling(mine[0], mine[-1], "peak_python_bytes")
        rows.append(row)
    return rows


def run_deep_fusion(gen: "generate.Generated", description: str) -> dict:
    context = make_context()
    module = ir.Module.parse(gen.text, context)
    baseline = bench_analysis.best_of(lambda: str(ir.Module.parse(gen.text, context)), 3)
    fused: list = []

    def run() -> None:
        bench_analysis.clear_caches()
        fused.append(fusion_indexing(module.body.operations[0]))

    seconds = bench_analysis.best_of(run, 3)
    result = fused[-1]
    sizes = [sum(ax.node_count(e) for e in m.results) for maps in result.maps for m in maps if not m.is_undefined]
    return {
        "chain": description,
        "n_ops": gen.n_ops,
        "fusion_s": seconds,
        "parse_print_s": baseline,
        "ratio": seconds / baseline,
        "maps_per_argument": [len(maps) for maps in result.maps],
        "largest_expr_nodes": max(sizes, default=0),
        "over_approximated": bool(result.over_approximated),
        "maps": [str(m) for maps in result.maps for m in maps],
    }


def run_simplifier(quick: bool) -> list[dict]:
    records = []
    corpus = bench_simplifier.corpus_map_texts()
    if corpus:
        records.append({"inputs": "conformance corpus (kind simplify)", **bench_simplifier.measure(corpus, repeat=5)})
    else:
        print(f"bench: {bench_simplifier.CORPUS} not found: skipping the corpus", flush=True)
    texts = bench_simplifier.random_map_texts(200 if quick else 2000, seed=0)
    records.append({"inputs": "random maps (seed 0)", **bench_simplifier.measure(texts)})
    return records


def run_training(quick: bool) -> list[dict]:
    if not generate.jax_available():
        print("bench: jax is not installed: skipping the training steps", flush=True)
        return []
    print("bench: JAX training steps", flush=True)
    layers = [1, 2] if quick else list(bench_training.jax_training_step.LAYERS)
    return bench_training.measure(layers, repeat=2 if quick else 3)


def run_library(quick: bool) -> list[dict]:
    if not generate.jax_available():
        print("bench: jax is not installed: skipping the library programs", flush=True)
        return []
    print("bench: programs of JAX's libraries (the 'programs' extra)", flush=True)
    import library_programs  # imports jax, present here

    names = list(bench_library.QUICK) if quick else list(library_programs.PROGRAMS)
    return bench_library.measure(names, repeat=2 if quick else 3)


def library_table(rows: list[dict]) -> str:
    measured = [r for r in rows if "skipped" not in r]
    lines = [table(["program", "ops", "CPU: parse+print ms", "analysis s", "ratio"],
                   [[r["program"], r["ops"], 1000 * r["parse_print_cpu_s"], r["analysis_cpu_s"], r["cpu_ratio"]]
                    for r in measured])]
    lines += [f"skipped: {r['program']} ({r['skipped']})" for r in rows if "skipped" in r]
    return "\n".join(lines)


def library_targets(rows: list[dict]) -> list[dict]:
    measured = [r for r in rows if "skipped" not in r]
    if not measured:
        return []
    worst = max(measured, key=lambda r: r["cpu_ratio"])
    return [{"target": "library programs <= 10x parse+print (issue #31; CPU time)",
             "value": f"{worst['cpu_ratio']:.1f}x (worst: {worst['program']})", "met": worst["cpu_ratio"] <= 10}]


#: The device of the cost-model line of the tiling benchmark (issue #26).
TILING_DEVICE = "h100"


def run_tiling(quick: bool, device: str | None = None) -> list[dict]:
    if not generate.jax_available():
        print("bench: jax is not installed: skipping the tiling of the compiled training steps", flush=True)
        return []
    target = select_device(device) if device else None
    print("bench: tiling of the compiled JAX training steps" + (f", ranked on {target.name}" if target else ""), flush=True)
    layers = [1, 2] if quick else list(bench_training.jax_training_step.LAYERS)
    return bench_tiling.measure(layers, repeat=2 if quick else 7, device=target)  # best of 7, as its baseline


def run_tiling_issue28(quick: bool, device: str | None = None) -> list[dict]:
    """The steps of issue #28's shape (batched: layer-norm backward fusions whose root
    bitcasts a transposed f32[2,16,32] into f32[32,32]), ranked on ``device`` when given."""
    if not generate.jax_available():
        return []
    target = select_device(device) if device else None
    print("bench: tiling of the compiled JAX training steps of issue #28's shape" + (f", ranked on {target.name}" if target else ""),
          flush=True)
    layers = [1, 2] if quick else list(bench_training.jax_training_step.LAYERS)
    return bench_tiling.measure(layers, repeat=2 if quick else 7, shape=bench_training.jax_training_step.ISSUE_28, device=target)


def tiling_targets(rows: list[dict], what: str = "compiled training steps", issue: str = "#19") -> list[dict]:
    if not rows:
        return []
    worst = max(r["ratio"] for r in rows)
    worst_cpu = max(r["cpu_ratio"] for r in rows)
    # CPU time, as for the training steps: on a shared machine the wall-clock steps swing by 2x.
    growth = [r["cpu_growth_per_doubling_of_ops"] for r in rows if "cpu_growth_per_doubling_of_ops" in r]
    device = rows[0].get("device")
    if device:
        what, issue = f"{what} ranked by the {device} cost model", "#26"
    out = [{"target": f"tiling of {what} up to {rows[-1]['layers']} layers <= 10x parse+print "
                      f"(CPU time, issue {issue})",
            "value": f"{worst_cpu:.1f}x (worst; wall clock {worst:.1f}x)", "met": worst_cpu <= 10}]
    if growth:
        out.append({"target": f"tiling of {what}: linear in the fusions' ops, growth per doubling of the ops in "
                              "fusion bodies (CPU time) <= 2.3x",
                    "value": f"{max(growth):.2f}x (worst step)", "met": max(growth) <= 2.3})
    return out


#: The words for the steps of issue #28's shape in the targets.
ISSUE_28_STEPS = "compiled steps of issue #28's shape (layer-norm backward fusions)"


def tiling_table(rows: list[dict]) -> str:
    main = table(
        ["layers", "fusions", "ops in fusion bodies", "tiled", "not tileable", "valid tilings (max per fusion)",
         "ranked tiling by tiling", "capped", "import ms", "parse+print ms", "tiling ms (analysis + ranking)", "ratio",
         "+ best 5 footprints ms", "growth per doubling", "CPU ratio", "CPU growth", "CPU growth per doubling of ops"],
        [[r["layers"], r["fusions"], r["body_ops"], r["tiled"], r["not_tileable"],
          f"{r['valid_tilings']} ({r['most_valid_tilings']})",
          r["per_tiling_fusions"], r["capped_fusions"], r["import_s"] * 1e3, r["parse_print_s"] * 1e3,
          f"{r['tiling_s'] * 1e3:.0f} ({r['analysis_s'] * 1e3:.0f} + {r['ranking_s'] * 1e3:.0f})", f"{r['ratio']:.1f}x",
          r["footprints_s"] * 1e3,
          "-" if r["growth_per_doubling"] is None else f"{r['growth_per_doubling']:.2f}x", f"{r['cpu_ratio']:.1f}x",
          f"{r['cpu_growth_per_doubling']:.2f}x" if "cpu_growth_per_doubling" in r else "-",
          f"{r['cpu_growth_per_doubling_of_ops']:.2f}x" if "cpu_growth_per_doubling_of_ops" in r else "-"] for r in rows],
    )
    reasons = rows[-1]["reasons"] if rows else {}
    if rows and rows[0].get("device"):
        rejected = rows[-1].get("rejected") or {}
        main += (f"\n\nOn {rows[0]['device']}: {rows[-1]['ranked_tilings']} of {rows[-1]['valid_tilings']} valid tilings "
                 "legal at the largest step" + (" (rejected: " + ", ".join(f"{k} {v}" for k, v in rejected.items()) + ")"
                                                if rejected else "") + ".")
    if not reasons:
        return main
    top = table(["why not tileable (largest step)", "fusions"], [[k.replace("|", "\\|"), v] for k, v in list(reasons.items())[:5]])
    return main + "\n\n" + top


def training_targets(rows: list[dict]) -> list[dict]:
    if not rows:
        return []
    worst = max(r["cpu_ratio"] for r in rows)
    worst_wall = max(r["ratio"] for r in rows)
    growth = [r["cpu_growth_per_doubling"] for r in rows if r["cpu_growth_per_doubling"] is not None]
    out = [{"target": f"training steps up to {rows[-1]['layers']} layers <= 10x parse+print (CPU time)",
            "value": f"{worst:.1f}x (worst; wall clock {worst_wall:.1f}x)", "met": worst <= 10}]
    if growth:
        out.append({"target": "training steps: growth per doubling of layers <= 2.3x (CPU time)",
                    "value": f"{max(growth):.2f}x (worst step)", "met": max(growth) <= 2.3})
    return out


def training_table(rows: list[dict]) -> str:
    def growth(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}x"

    return table(
        ["layers", "ops", "results", "parse+print ms", "analysis ms", "ratio", "growth per doubling",
         "CPU: parse+print ms", "analysis ms", "ratio", "growth per doubling"],
        [[r["layers"], r["ops"], r["results"], r["parse_print_s"] * 1e3, r["analysis_s"] * 1e3, f"{r['ratio']:.1f}x",
          growth(r["growth_per_doubling"]), r["parse_print_cpu_s"] * 1e3, r["analysis_cpu_s"] * 1e3,
          f"{r['cpu_ratio']:.1f}x", growth(r["cpu_growth_per_doubling"])] for r in rows],
    )


def targets(record: dict) -> list[dict]:
    out = (
        training_targets(record["training"]) + tiling_targets(record["tiling"])
        + tiling_targets(record.get("tiling_issue28", []), ISSUE_28_STEPS, "#28")
        + tiling_targets(record.get("device_tiling", []))
        + tiling_targets(record.get("device_tiling_issue28", []), ISSUE_28_STEPS)
        + library_targets(record.get("library", []))
    )
    at_target = [r for r in record["analysis"] if r["n_ops"] == TARGET_SIZE]
    if at_target:
        worst = max(r["cpu_ratio"] for r in at_target)
        worst_wall = max(r["ratio"] for r in at_target)
        out.append({"target": "analysis of a 10k-op module <= 3x parse+print (issue #17; CPU time)",
                    "value": f"{worst:.1f}x (worst family; wall clock {worst_wall:.1f}x)", "met": worst <= 3})
    if record["scaling"]:
        worst = max(r["growth_per_doubling"] for r in record["scaling"])
        out.append({"target": "growth per doubling <= 2.2x", "value": f"{worst:.2f}x (worst family)", "met": worst <= 2.2})
    for deep in record["deep_fusion"]:
        maps = max(deep["maps_per_argument"], default=0)
        out.append(
            {
                "target": f"{deep['n_ops']}-op {deep['chain']} < 2 s, bounded map count",
                "value": f"{deep['fusion_s']:.2f} s, {maps} map(s)"
                + (", over-approximated" if deep["over_approximated"] else ", exact"),
                "met": deep["fusion_s"] < 2 and maps <= 16,
            }
        )
    worst = max(max(r["pack_ratio"], r["unpack_ratio"]) for r in record["layouts"])
    out.append({"target": "pack/unpack <= 1.25x numpy", "value": f"{worst:.2f}x (worst)", "met": worst <= 1.25})
    cli = record["cli"]
    out.append({"target": "hlo-indexing-opt --help < 0.5 s", "value": f"{cli['help_s']:.2f} s", "met": cli["help_s"] < 0.5})
    growth = record["hlo_scan"]["growth_per_doubling"]
    out.append({"target": "HLO text scan: CPU growth per doubling of the instructions <= 2.3x",
                "value": f"{growth:.2f}x", "met": growth <= 2.3})
    growth = cli["remarks"]["growth_per_doubling"]
    out.append({"target": "hlo-indexing-opt --hlo-print-indexing-maps: CPU growth per doubling of the ops <= 2.3x",
                "value": f"{growth:.2f}x", "met": growth <= 2.3})
    return out


def markdown(record: dict) -> str:
    parts = ["Module shapes (largest size): " + "; ".join(record["module_shapes"]) + "."]
    if record["training"]:
        parts.append("JAX training steps (`benchmarks/jax_training_step.py`: L-layer transformer, MSE loss, "
                     "`jax.grad`, Adam; `hlo_indexing.analyze(text)` against parse+print):")
        parts.append(training_table(record["training"]))
    if record.get("library"):
        parts.append("Programs of JAX's libraries (`benchmarks/library_programs.py`, the `programs` extra; "
                     "`hlo_indexing.analyze(text)` against parse+print, CPU time):")
        parts.append(library_table(record["library"]))
    if record["tiling"]:
        parts.append("Tiling of the compiled steps (`.lower(...).compile().as_text()`; every `mhlo.fusion` analysed "
                     "and its valid tilings ranked under 48KiB, as `hlo-print-tilings`, against parse+print of the "
                     "StableHLO text; import of the HLO text not included; XLA's fusion bodies grow faster than "
                     "the layers, so growth is also given per doubling of the ops in fusion bodies):")
        parts.append(tiling_table(record["tiling"]))
    if record.get("tiling_issue28"):
        parts.append("The same for the steps of issue #28's shape (`jax_training_step.ISSUE_28`: a batch of 2 "
                     "sequences of 16, width 32, MLP 128; XLA fuses their layer-norm backward passes into fusions "
                     "whose root bitcasts a transposed `f32[2,16,32]` into `f32[32,32]`):")
        parts.append(tiling_table(record["tiling_issue28"]))
    if record.get("device_tiling"):
        parts.append(f"The same, every fusion's tilings judged by the {record['device_tiling'][0]['device']} cost model "
                     "(`rank_tilings(fusion, device=...)`, as `hlo-print-tilings{device=}`: Triton's constraints, "
                     "XLA's register rule and time estimate per candidate):")
        parts.append(tiling_table(record["device_tiling"]))
    if record.get("device_tiling_issue28"):
        parts.append(f"And the steps of issue #28's shape on the {record['device_tiling_issue28'][0]['device']} cost model:")
        parts.append(tiling_table(record["device_tiling_issue28"]))
    parts.append(
        table(
            ["family", "ops", "functions", "parse+print s", "analysis s", "ratio", "CPU: parse+print s", "analysis s",
             "ratio", "peak MiB (tracemalloc)"],
            [
                [
                    r["family"], r["n_ops"], r["n_functions"], r["parse_s"] + r["print_s"], r["analysis_s"], r["ratio"],
                    r["parse_print_cpu_s"], r["analysis_cpu_s"], r["cpu_ratio"],
                    "-" if r["peak_python_bytes"] is None else r["peak_python_bytes"] / 2**20,
                ]
                for r in record["analysis"]
            ],
        )
    )
    if record["scaling"]:
        parts.append(
            table(
                ["family", "sizes", "time growth per doubling (each step)", "overall", "memory growth per doubling"],
                [
                    [
                        r["family"], "/".join(map(str, r["sizes"])),
                        ", ".join(f"{g:.2f}" for g in r["growth_per_doubling_steps"]), r["growth_per_doubling"],
                        r.get("memory_growth_per_doubling", "-"),
                    ]
                    for r in record["scaling"]
                ],
            )
        )
    parts.append(
        table(
            ["deep fusion", "fused s", "parse+print s", "ratio", "maps per argument", "largest expr nodes", "over-approximated"],
            [[f"{deep['n_ops']}-op {deep['chain']}", deep["fusion_s"], deep["parse_print_s"], deep["ratio"],
              deep["maps_per_argument"], deep["largest_expr_nodes"], deep["over_approximated"]]
             for deep in record["deep_fusion"]],
        )
    )
    parts.append(
        table(
            ["simplifier inputs", "maps", "maps simplified / s", "parse s", "simplify s", "ratio simplify/parse",
             "isl proof ms / map", "ratio proof/parse", "proven"],
            [[r["inputs"], r["maps"], r["maps_per_s"], r["parse_s"], r["simplify_s"], r["ratio"],
              *("-" if r.get(k) is None else r[k] for k in ("prove_ms_per_map", "prove_ratio", "proven"))]
             for r in record["simplifier"]],
        )
    )
    parts.append(
        table(
            ["layout", "pack s", "numpy s", "ratio", "unpack s", "numpy s", "ratio"],
            [[r["shape"], r["pack_s"], r["numpy_pack_s"], r["pack_ratio"], r["unpack_s"], r["numpy_unpack_s"], r["unpack_ratio"]]
             for r in record["layouts"]],
        )
    )
    parts.append(
        table(
            ["HLO import", "isolated s", "in-process s", "fork + child overhead s"],
            [[r["input"], r["isolated_s"], r["in_process_s"], r["overhead_s"]] for r in record["hlo_import"]],
        )
    )
    parts.append(
        table(
            ["HLO text scan (before XLA's parser)", "CPU s"],
            [[f"{r['n_ops']}-instruction chain", r["cpu_s"]] for r in record["hlo_scan"]["rows"]],
        )
    )
    cli = record["cli"]
    parts.append(
        table(
            ["CLI", f"s (best of {cli['repeat']})", "python -c pass s", "ratio", "jax imported", "import ms by package"],
            [["hlo-indexing-opt --help", cli["help_s"], cli["python_s"], cli["ratio"], cli["jax_imported"],
              ", ".join(f"{k} {v}" for k, v in cli["import_ms_by_package"].items())]],
        )
    )
    cpu = cli["cpu_s"]
    parts.append(
        table(
            ["start-up", f"wall s (best of {cli['repeat']})", "CPU s"],
            [["python -c pass", cli["python_s"], cpu["python"]],
             ['python -c "import jaxlib.mlir.ir"', cli["bindings_s"], cpu["bindings"]],
             ["hlo-indexing-opt --help", cli["help_s"], cpu["help"]],
             ["hlo-indexing-opt tiny.mlir --hlo-attach-indexing-maps", cli["tiny_s"], cpu["tiny"]]]
            + [[f"hlo-indexing-opt ({row['n_ops']} ops) --hlo-print-indexing-maps", row["s"], row["cpu_s"]]
               for row in cli["remarks"]["rows"]],
        )
    )
    parts.append(table(["target", "reached", "met"], [[t["target"], t["value"], "yes" if t["met"] else "**no**"] for t in record["targets"]]))
    meta = record["meta"]
    parts.append(f"Measured {meta['date']} on {meta['machine']} ({meta['cpus']} CPUs), Python {meta['python']}, "
                 f"{'quick' if meta['quick'] else 'full'} run.")
    return "\n\n".join(parts)


def update_readme(text: str) -> None:
    readme = README.read_text()
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"bench: {README} has no {README_START} ... {README_END} block")
    README.write_text(readme[: start + len(README_START)] + "\n\n" + text + "\n\n" + readme[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--sizes", help="comma-separated module sizes in ops (default 1000,10000,50000)")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--output", type=Path, help="JSON record path")
    parser.add_argument("--update-readme", action="store_true", help="replace README.md's benchmark table")
    parser.add_argument("--training-only", action="store_true", help="only the JAX training steps (no JSON, no README)")
    parser.add_argument("--library-only", action="store_true",
                        help="only the programs of JAX's libraries (no JSON, no README)")
    parser.add_argument("--tiling-only", action="store_true",
                        help="only the tiling of the compiled training steps (no JSON, no README)")
    parser.add_argument("--device", help="with --tiling-only: rank by this device's cost model (e.g. h100); a full "
                                         f"run measures both, the cost model on {TILING_DEVICE}")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(QUICK_SIZES if args.quick else FULL_SIZES)
    output = args.output or HERE / "results" / ("quick.json" if args.quick else "latest.json")

    record: dict[str, Any] = {
        "meta": {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "machine": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "quick": args.quick,
            "sizes": sizes,
            "memory": "tracemalloc peak of Python allocations during the analysis (MLIR's C++ heap not included)",
            "growth_per_doubling": "(t_large / t_small) ** (1 / log2(n_large / n_small)); 2.0 is linear",
        }
    }
    if args.training_only:
        rows = run_training(args.quick)
        print("\n" + training_table(rows) + "\n")
        print(table(["target", "reached", "met"], [[t["target"], t["value"], "yes" if t["met"] else "**no**"] for t in training_targets(rows)]))
        return 0
    if args.library_only:
        rows = run_library(args.quick)
        print("\n" + library_table(rows) + "\n")
        print(table(["target", "reached", "met"], [[t["target"], t["value"], "yes" if t["met"] else "**no**"] for t in library_targets(rows)]))
        return 0
    if args.tiling_only:
        rows, issue_rows = run_tiling(args.quick, args.device), run_tiling_issue28(args.quick, args.device)
        print("\n" + tiling_table(rows) + "\n\n" + tiling_table(issue_rows) + "\n")
        found = tiling_targets(rows) + tiling_targets(issue_rows, ISSUE_28_STEPS, "#28")
        print(table(["target", "reached", "met"], [[t["target"], t["value"], "yes" if t["met"] else "**no**"] for t in found]))
        return 0
    record["training"] = run_training(args.quick)
    record["tiling"] = run_tiling(args.quick)
    record["tiling_issue28"] = run_tiling_issue28(args.quick)
    record["device_tiling"] = run_tiling(args.quick, TILING_DEVICE)
    record["device_tiling_issue28"] = run_tiling_issue28(args.quick, TILING_DEVICE)
    record["library"] = run_library(args.quick)
    record["analysis"], record["module_shapes"] = run_analysis(sizes, memory=not args.no_memory)
    record["scaling"] = scaling_rows(record["analysis"])
    print("bench: deep fusion chain", flush=True)
    record["deep_fusion"] = [
        run_deep_fusion(generate.deep_chain(1000), "reshape/transpose/broadcast chain"),
        run_deep_fusion(generate.irregular_chain(1000), "alternating reshape 4x6->6x4/transpose chain"),
    ]
    print("bench: simplifier", flush=True)
    record["simplifier"] = run_simplifier(args.quick)
    print("bench: layouts", flush=True)
    record["layouts"] = bench_layout_pack.measure(2**22 if args.quick else 64 * 2**20)
    print("bench: HLO import (isolated child vs in-process)", flush=True)
    record["hlo_import"] = bench_hlo_import.measure(2 if args.quick else 5, (100,) if args.quick else (100, 2000))
    record["hlo_scan"] = bench_hlo_import.scan_scaling(2 if args.quick else 3)
    print("bench: CLI start-up", flush=True)
    record["cli"] = bench_cli.measure(2 if args.quick else 5)
    record["targets"] = targets(record)

    text = markdown(record)
    print("\n" + text)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, indent=1) + "\n")
    print(f"\nbench: wrote {output}")
    if args.update_readme:
        update_readme(text)
        print(f"bench: updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
