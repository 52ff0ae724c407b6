"""The fuzz worker: a child process that runs cases and reports how each ended.

Protocol: one JSON case per line on stdin; one JSON result per line on the file descriptor
named by ``HLO_FUZZ_CHANNEL`` (stdout and stderr are left to whatever the code under test prints, natively or not).
A result is ``{"outcome": O, "detail": text, "signature": text}`` with ``O`` one of

* ``ok``: the input was accepted and every map checked;
* ``hang`` (also seen from outside): a ``TimeLimitError`` (an isolated HLO parse ran out
  of time: refused cleanly, but a hang for the input all the same);
* ``error``: a located :class:`~hlo_indexing.errors.HloIndexingError` (or, from the CLI,
  exit 1 with ``file:line:col: error:``);
* ``unlocated``: an error without a position (no location, ``<unknown>:0:0``, line 0,
  an internal error at ``<command line>:1:1``, a CLI error line without ``file:line:col``);
* ``foreign``: an exception outside the hierarchy (or the CLI's ``internal error``);
* ``oob``: a per-op or fused map whose results leave the operand's shape (enumerated);
* ``mismatch``: a map whose relation changed through print/parse/simplify/attributes, or
  a layout whose ``logical_index`` does not invert ``linear_index``;
* ``traceback``: a Python traceback in the CLI's output;
* ``partial-output``: a failed CLI run that wrote its ``-o`` file.

The parent (``fuzz_campaign.py``) sees aborts and hangs from outside: the worker dies or
stops answering. Run as ``python fuzz_worker.py`` with the project installed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Iterator

import numpy as np

from hlo_indexing.analysis.fusion import fusion_indexing, fusion_input_to_output_indexing
from hlo_indexing.analysis.per_op import hlo_ops, input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.dialect_glue.locations import location_of
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError, TimeLimitError
from hlo_indexing.frontend import analyze
from hlo_indexing.layout import lowering, tiling
from hlo_indexing.layout.types import Shape
from hlo_indexing.maps.attributes import indexing_map_from_attribute, indexing_map_to_attribute
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.passes.pass_manager import run_pipeline
from hlo_indexing.tools import opt, show_layout

MAX_POINTS = 4096
_LOCATED = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): error: ", re.MULTILINE)


class Finding(Exception):
    """Raised by a check: the case ends with ``outcome``."""

    def __init__(self, outcome: str, detail: str, signature: str = ""):
        super().__init__(detail)
        self.outcome, self.detail, self.signature = outcome, detail, signature or detail[:120]


def _frame(exc: BaseException) -> str:
    """file:function of the innermost frame of the project (or the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "hlo_indexing" in f.filename or "/dialect_glue/" in f.filename or "/passes/" in f.filename]
    chosen = ours or list(frames)
    if not chosen:
        return "?"
    return f"{os.path.basename(chosen[-1].filename)}:{chosen[-1].name}"


def _classify_exception(exc: BaseException) -> Finding:
    if isinstance(exc, Finding):
        return exc
    if isinstance(exc, TimeLimitError):  # the library refused in time, but for a fuzz case this is a hang
        return Finding("hang", f"{type(exc).__name__}: {exc}", "TimeLimitError")
    if isinstance(exc, HloIndexingError):
        location = exc.location
        if location is None or location.line <= 0 or location.filename in ("<unknown>", ""):
            return Finding("unlocated", f"{type(exc).__name__}: {exc}", f"{type(exc).__name__} at {_frame(exc)}")
        return Finding("error", str(exc), type(exc).__name__)
    return Finding("foreign", f"{type(exc).__name__}: {exc}", f"{type(exc).__name__} at {_frame(exc)}")


# ----------------------------------------------------------------------------- maps


def _relation(m: IndexingMap) -> set | None:
    if m.is_undefined:
        return None
    if m.domain_size() > MAX_POINTS:
        return None
    return m.relation(MAX_POINTS)


def run_map(text: str) -> None:
    m = IndexingMap.parse(text)
    before = _relation(m)
    simplified = m.simplify()
    reparsed = IndexingMap.parse(str(simplified))
    through_attr = indexing_map_from_attribute(indexing_map_to_attribute(m))
    for name, other in (("simplify", simplified), ("print/parse", reparsed), ("attribute", through_attr)):
        after = _relation(other)
        if before is not None and after is not None and before != after:
            raise Finding("mismatch", f"{name} changed the relation of {m} -> {other}", f"map {name}")


# ----------------------------------------------------------------------------- layouts


def run_layout(text: str) -> None:
    shape = Shape.parse(text)
    p = tiling.plan(shape)
    if p.element_count > MAX_POINTS or p.padded_size > 16 * MAX_POINTS or any(d > MAX_POINTS for d in shape.dims):
        lowering.logical_index_map(shape)
        return
    seen: dict[int, tuple[int, ...]] = {}
    for index in np.ndindex(*shape.dims):
        offset = tiling.linear_index(shape, index)
        if not 0 <= offset < p.padded_size or offset in seen:
            raise Finding("mismatch", f"{text}: linear_index{index} = {offset} (seen at {seen.get(offset)})", "layout linear_index")
        seen[offset] = index
        back = tiling.logical_index(shape, offset)
        if back is None or tuple(back) != tuple(index):
            raise Finding("mismatch", f"{text}: logical_index({offset}) = {back}, expected {index}", "layout logical_index")
    for mapping in (lowering.linear_offset_map(shape), lowering.logical_index_map(shape)):
        if mapping.domain_size() <= MAX_POINTS:
            mapping.enumerate(MAX_POINTS)
    for bad in ([-1] * len(shape.dims), [d for d in shape.dims]):
        try:
            tiling.linear_index(shape, bad)
        except HloIndexingError:
            pass
        except IndexError as exc:
            raise Finding("foreign", f"linear_index({bad}): IndexError: {exc}", "layout linear_index IndexError") from None
    try:
        tiling.logical_index(shape, p.padded_size)
    except HloIndexingError:
        pass
    except IndexError as exc:
        raise Finding("foreign", f"logical_index: IndexError: {exc}", "layout logical_index IndexError") from None


# ----------------------------------------------------------------------------- modules


def _static_dims(value_type: "ir.Type") -> tuple[int, ...] | None:
    if not isinstance(value_type, ir.RankedTensorType):
        try:
            value_type = ir.RankedTensorType(value_type)
        except (ValueError, TypeError):
            return None
    if not value_type.has_static_shape:
        return None
    return tuple(value_type.shape)


def _check_maps(maps, domain: tuple[int, ...] | None, target: tuple[int, ...] | None, what: str) -> None:
    """Every map's enumerated results lie in ``target``'s shape and its dims in ``domain``'s."""
    if target is None:
        return
    for m in maps:
        if m.is_undefined or m.is_known_empty:
            continue
        if m.num_results != len(target):
            raise Finding("oob", f"{what}: {m} has {m.num_results} results for shape {list(target)}", f"oob rank {what.split(':')[0]}")
        if domain is not None and m.num_dims == len(domain):
            for k, (var, size) in enumerate(zip(m.dim_ranges, domain)):
                if var.lower < 0 or var.upper >= size:
                    raise Finding("oob", f"{what}: {m}: d{k} range outside [0, {size})", f"oob domain {what.split(':')[0]}")
        if m.domain_size() > MAX_POINTS:
            continue
        _points, images = m.enumerate(MAX_POINTS)
        if images.size and ((images < 0).any() or (images >= np.array(target, dtype=np.int64)).any()):
            raise Finding("oob", f"{what}: {m} leaves shape {list(target)}", f"oob {what.split(':')[0]}")


def _functions(module: "ir.Operation") -> Iterator["ir.Operation"]:
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and len(op.regions[0].blocks) > 0:
            yield op.operation


def run_module(text: str, hlo: bool) -> None:
    with make_context():
        module = parse_module(text, filename="fuzz.hlo" if hlo else "fuzz.mlir", input_format="hlo" if hlo else "mlir")
        root = module.operation
        if not root.verify():
            return
        for func in _functions(root):
            block = func.regions[0].blocks[0]
            arg_shapes = [_static_dims(a.type) for a in block.arguments]
            function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
            result_shapes = [_static_dims(t) for t in function_type.results]
            for r, result_shape in enumerate(result_shapes):
                fused = fusion_indexing(func, r)
                for k, maps in enumerate(fused.maps):
                    _check_maps(maps, result_shape, arg_shapes[k] if k < len(arg_shapes) else None, f"fused @{r}->{k}")
            for k, arg_shape in enumerate(arg_shapes):
                fused = fusion_input_to_output_indexing(func, k)
                for r, maps in enumerate(fused.maps):
                    _check_maps(maps, arg_shape, result_shapes[r] if r < len(result_shapes) else None, f"fused arg {k}->{r}")
        analyze(root)
        analyze(root, direction="input-to-output", fused=False)
        _run_passes(root, text)


#: Our passes, run in a PassManager as a user would; a failure must be a failed run.
PIPELINE = (
    "builtin.module(hlo-attach-indexing-maps, hlo-simplify-indexing-maps, "
    "hlo-attach-fused-indexing-maps{analyses=true max-points=4096}, hlo-lower-tiled-layouts)"
)


def _run_passes(root: "ir.Operation", text: str) -> None:
    """The pipeline on a clone; an ``MLIRError`` (a failed pass) must point into the file."""
    clone = root.clone()
    try:
        run_pipeline(clone, PIPELINE)
    except ir.MLIRError as exc:
        for diagnostic in exc.error_diagnostics:
            position = location_of(diagnostic.location)
            written_unknown = "loc(unknown)" in text  # the op has no position to report: @unknown, as in mlir-opt
            if (position is None or position.line <= 0) and not written_unknown:
                raise Finding("unlocated", f"pass error without location: {diagnostic.message}", "pass error unlocated") from None
        raise Finding("error", str(exc)[:300], "pass failed") from None
    finally:
        clone.erase()
        for op in hlo_ops(root):
            results = [_static_dims(v.type) for v in op.results]
            operands = [_static_dims(v.type) for v in op.operands]
            name = op.name
            for r in range(len(op.results)):
                indexing = output_to_input_indexing(op, r)
                for k, maps in enumerate(indexing.maps):
                    _check_maps(maps, results[r], operands[k] if k < len(operands) else None, f"{name}: result {r} -> operand {k}")
            for k in range(len(op.operands)):
                indexing = input_to_output_indexing(op, k)
                for r, maps in enumerate(indexing.maps):
                    _check_maps(maps, operands[k], results[r] if r < len(results) else None, f"{name}: operand {k} -> result {r}")


# ----------------------------------------------------------------------------- CLI


@contextlib.contextmanager
def _captured_fds(path: str) -> Iterator[None]:
    """Native writes to fds 1 and 2 go to ``path`` while the block runs."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def run_cli(case: dict) -> None:
    with tempfile.TemporaryDirectory(prefix="hlo-fuzz-") as folder:
        input_path = os.path.join(folder, "input" + case.get("suffix", ".mlir"))
        out_path = os.path.join(folder, "out.txt")
        with open(input_path, "w", encoding="utf-8") as handle:
            handle.write(case.get("input", ""))
        argv = [a.replace("{input}", input_path).replace("{out}", out_path) for a in case["argv"]]
        stdout, stderr = io.StringIO(), io.StringIO()
        # the campaign names a file that outlives this worker: if native code kills it,
        # what it printed (a CHECK failure, glibc's heap check) reaches the finding
        native = os.environ.get("HLO_FUZZ_NATIVE") or os.path.join(folder, "native.txt")
        entry = show_layout.main if case.get("tool") == "layout" else opt.main
        with _captured_fds(native), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = entry(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        with open(native, encoding="utf-8", errors="replace") as handle:
            native_text = handle.read()
        output = stdout.getvalue() + stderr.getvalue() + native_text
        errors = stderr.getvalue() + native_text
        if "Traceback (most recent call last)" in output:
            raise Finding("traceback", output[-2000:], "traceback " + (argv[1] if len(argv) > 1 else ""))
        if code == 0:
            return
        if os.path.isfile(out_path):
            raise Finding("partial-output", f"exit {code} but -o file written: {argv}", "partial -o")
        if code != 1:
            raise Finding("unlocated", f"exit code {code}: {errors[-500:]}", f"exit code {code}")
        if "took longer than" in errors and "HLO_PARSE_SECONDS" in errors:
            raise Finding("hang", errors[-300:], "cli TimeLimitError")
        if "internal error" in errors:
            line = next(l for l in errors.splitlines() if "internal error" in l)
            raise Finding("foreign", line, re.sub(r"internal error: (\w+).*", r"internal \1", line.split("error: ", 1)[-1])[:80])
        located = _LOCATED.findall(errors)
        if not located:
            raise Finding("unlocated", f"no file:line:col error in: {errors[-500:]}", "cli no location")
        for file, line, col in located:
            if file in ("<unknown>",) or line == "0":
                raise Finding("unlocated", f"error at {file}:{line}:{col}: {errors[-500:]}", f"cli at {file}:{line}")
        raise Finding("error", errors[-300:], "cli error")


# ----------------------------------------------------------------------------- loop


def run_case(case: dict) -> dict:
    try:
        kind = case["kind"]
        if kind == "map":
            run_map(case["text"])
        elif kind == "layout":
            run_layout(case["text"])
        elif kind in ("mlir", "hlo"):
            run_module(case["text"], kind == "hlo")
        else:
            run_cli(case)
        return {"outcome": "ok", "detail": "", "signature": ""}
    except Finding as exc:
        finding = exc
    except RecursionError as exc:
        finding = Finding("foreign", f"RecursionError: {str(exc)[:200]}", f"RecursionError at {_frame(exc)}")
    except Exception as exc:  # noqa: BLE001 - classifying every exception is the point
        finding = _classify_exception(exc)
    return {"outcome": finding.outcome, "detail": finding.detail[:4000], "signature": f"{case['kind']}: {finding.signature}"}


def main() -> int:
    channel = os.fdopen(int(os.environ.get("HLO_FUZZ_CHANNEL", "3")), "w", encoding="utf-8")
    channel.write(json.dumps({"ready": True}) + "\n")
    channel.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        result = run_case(json.loads(line))
        channel.write(json.dumps(result) + "\n")
        channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
