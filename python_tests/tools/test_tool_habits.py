"""Issue #30: the habits of mlir-opt / iree-opt users, each retried the way a user meets
it: the installed commands run in a subprocess, with the user's umask, a real SIGINT, a
batch of two files.

* a batch's ``format=json`` reports are JSON Lines on stdout (or ``--report-file``),
  the summary apart on stderr;
* output files get ``0666`` less the umask (a replaced file keeps its mode);
* a function pass given as a flag is nested under ``func.func``, as mlir-opt nests it;
* ``--show-layout`` refuses the flags it does not take;
* Ctrl-C ends a run quietly (the process dies by SIGINT: status 130 in a shell), with no
  partial output file and no worker left behind.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hlo_indexing

BIN = Path(sys.executable).parent
OPT = BIN / "hlo-indexing-opt"
LAYOUT = BIN / "hlo-indexing-layout"

TRANSPOSE = """func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
"""
REDUCE = """func.func @main(%a: tensor<4x6xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
BAD = "func.func @bad() {\n  retur\n}\n"
CHLO = """func.func @f(%a: tensor<4xf32>, %b: tensor<1xf32>) -> tensor<4xf32> {
  %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _run(*argv: str, umask: int | None = None, tool: Path = OPT) -> subprocess.CompletedProcess:
    """``tool argv...``; with ``umask``, from a shell that sets it first, as a user's does."""
    command = [str(tool), *argv]
    if umask is not None:
        command = ["sh", "-c", f'umask {umask:03o} && exec "$0" "$@"', *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def _inputs(tmp_path: Path, **texts: str) -> list[Path]:
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{name}.mlir"
        path.write_text(text)
        paths.append(path)
    return paths


# --- a batch's JSON reports -------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_batch_json_reports_are_json_lines_on_stdout_and_the_summary_apart(tmp_path, jobs):
    a, b = _inputs(tmp_path, a=TRANSPOSE, b=REDUCE)
    done = _run(str(a), str(b), "--hlo-print-indexing-maps=format=json", "-j", jobs, "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == "2 files, 0 failed\n"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(line["input"], line["chunk"]) for line in lines] == [(str(a), 0), (str(b), 0)]
    for line, path in zip(lines, (a, b)):
        assert line["report"] == hlo_indexing.analyze(path, fused=False).to_dict()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.mlir", "b.mlir"]


def test_batch_reports_in_a_named_file_leave_out_failed_files(tmp_path):
    a, bad, b = _inputs(tmp_path, a=TRANSPOSE, bad=BAD, b=REDUCE)
    report = tmp_path / "maps.jsonl"
    done = _run(str(a), str(bad), str(b), "--hlo-print-fused-indexing-maps=format=json", f"--report-file={report}")
    assert done.returncode == 1
    assert done.stdout.count("// -----") == 1  # the IR of the two good files, on stdout as before
    assert done.stderr.splitlines()[-2:] == ["3 files, 1 failed", f"  {bad}:2:3: error: custom op 'retur' is unknown (tried 'func.retur' as well)"]
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["input"] for line in lines] == [str(a), str(b)]
    assert lines[1]["report"] == hlo_indexing.analyze(b, per_op=False).to_dict()


def test_one_input_one_report_is_one_document_and_report_file_needs_o(tmp_path):
    (a,) = _inputs(tmp_path, a=REDUCE)
    done = _run(str(a), "--hlo-print-fused-indexing-maps=format=json", "-o", "/dev/null")
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout) == hlo_indexing.analyze(a, per_op=False).to_dict()
    # two reporting passes on one input: JSON Lines, one line each
    done = _run(str(a), "--hlo-print-fused-indexing-maps=format=json", "--hlo-print-indexing-maps=format=json", "-o", "/dev/null")
    assert [sorted(json.loads(line)["report"]) for line in done.stdout.splitlines()] == [
        ["computations", "direction", "ops", "schema"]
    ] * 2
    # without -o the IR is on stdout: the reports stay on stderr, as mlir-opt's print passes
    done = _run(str(a), "--hlo-print-fused-indexing-maps=format=json")
    assert done.stdout.startswith("module {") and json.loads(done.stderr)["schema"] == "hlo-indexing/indexing/1"
    done = _run(str(a), "--hlo-print-fused-indexing-maps=format=json", "--report-file=-")
    assert done.returncode == 1 and "--report-file=- needs -o: the IR goes to stdout" in done.stderr


# --- output files and the umask -------------------------------------------------------------


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_get_the_users_umask(tmp_path, umask, mode):
    a, b = _inputs(tmp_path, a=TRANSPOSE, b=REDUCE)
    assert _run(str(a), "-o", str(tmp_path / "single.mlir"), umask=umask).returncode == 0
    assert _run(str(a), str(b), "-o", str(tmp_path / "dir"), "--report-file", str(tmp_path / "r.jsonl"), umask=umask).returncode == 0
    assert _run("f32[4,4]{1,0:T(2,2)}", "-o", str(tmp_path / "layout.txt"), umask=umask, tool=LAYOUT).returncode == 0
    written = [tmp_path / "single.mlir", tmp_path / "dir" / "a.mlir", tmp_path / "dir" / "b.mlir", tmp_path / "r.jsonl", tmp_path / "layout.txt"]
    assert {str(p): oct(p.stat().st_mode & 0o777) for p in written} == {str(p): oct(mode) for p in written}


def test_a_replaced_output_file_keeps_its_mode(tmp_path):
    (a,) = _inputs(tmp_path, a=TRANSPOSE)
    target = tmp_path / "out.mlir"
    target.write_text("old")
    target.chmod(0o640)
    assert _run(str(a), "-o", str(target), umask=0o022).returncode == 0
    assert target.read_text().startswith("module {") and target.stat().st_mode & 0o777 == 0o640


# --- implicit nesting of function passes ----------------------------------------------------


def test_function_pass_given_as_a_flag_is_nested_under_func(tmp_path):
    (source,) = _inputs(tmp_path, chlo=CHLO)
    done = _run(str(source), "--chlo-legalize-to-stablehlo", "--dump-pass-pipeline")
    assert done.returncode == 0, done.stderr
    assert "builtin.module(func.func(chlo-legalize-to-stablehlo))" in done.stderr
    explicit = _run(str(source), "--pass-pipeline=builtin.module(func.func(chlo-legalize-to-stablehlo))")
    assert done.stdout == explicit.stdout and "chlo." not in done.stdout and "stablehlo.add" in done.stdout
    # in a pipeline too, between module passes, as mlir-opt's implicit nesting does
    done = _run(str(source), "--pass-pipeline=builtin.module(cse, chlo-legalize-to-stablehlo, hlo-print-fused-indexing-maps)", "-o", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert "@f result 0 -> arg 1: (d0) -> (0), domain: d0 in [0, 3]" in done.stderr  # the legalized broadcast


def test_module_pass_nested_under_func_is_still_an_error(tmp_path):
    (source,) = _inputs(tmp_path, chlo=CHLO)
    done = _run(str(source), "--pass-pipeline=builtin.module(func.func(hlo-legalize-to-stablehlo))")
    assert done.returncode == 1 and "restricted to 'builtin.module'" in done.stderr


# --- --show-layout takes only its flags -------------------------------------------------------


@pytest.mark.parametrize(
    "extra, message",
    [
        ("--bogus-flag", "Unknown command line argument '--bogus-flag'.  Try: 'hlo-indexing-opt --help'"),
        ("--fromat=svg", "Did you mean '--format'?"),
        ("--cse", "'--cse' is a pass: --show-layout runs no pipeline"),
        ("-split-input-file", "--split-input-file cannot be used with --show-layout"),
        ("in.mlir", "--show-layout takes no input file, got 'in.mlir'"),
    ],
)
def test_show_layout_refuses_what_it_does_not_take(extra, message):
    command = f"--show-layout=f32[4,4]{{1,0}} {extra}"
    done = _run(*command.split())
    assert done.returncode == 1 and done.stdout == ""
    first, source, caret = done.stderr.splitlines()
    assert first.startswith(f"<command line>:1:{command.index(extra) + 1}: error: ") and message in first
    assert source == command and caret == " " * command.index(extra) + "^"


# --- Ctrl-C ---------------------------------------------------------------------------------


def _long_module(functions: int) -> str:
    """Functions of a softmax over 64 rows each, each of its own row length (a body of
    its own: the memo shares nothing): minutes of --hlo-print-tilings."""
    body = """func.func @f{k}(%x: tensor<64x{n}xf32>) -> tensor<64x{n}xf32> {{
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<64x{n}xf32>, tensor<f32>) -> tensor<64xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<64xf32>) -> tensor<64x{n}xf32>
  %2 = stablehlo.subtract %x, %1 : tensor<64x{n}xf32>
  %3 = stablehlo.exponential %2 : tensor<64x{n}xf32>
  return %3 : tensor<64x{n}xf32>
}}
"""
    return "".join(body.format(k=k, n=128 + k) for k in range(functions))


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux ``/proc``)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        return (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ctrl_c_is_a_quiet_end_without_partial_output(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    target = work / "out.mlir"
    with open(tmp_path / "stdout", "w") as stdout, open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen(
            [str(OPT), "-", "--hlo-print-tilings", "-o", str(target)], stdin=subprocess.PIPE, stdout=stdout, stderr=stderr, text=True
        )
        assert process.stdin is not None
        process.stdin.write(_long_module(2000))  # returns once the driver has read most of it: past start-up
        process.stdin.close()
        time.sleep(1.0)
        assert process.poll() is None, "the run ended before the interrupt"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == -signal.SIGINT  # a shell shows 128 + 2 = 130
    assert (tmp_path / "stdout").read_text() == "" and (tmp_path / "stderr").read_text() == ""
    assert list(work.iterdir()) == []  # no output, no temporary file


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to follow the workers")
def test_ctrl_c_in_a_batch_keeps_finished_outputs_and_ends_the_workers(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.mlir").write_text(TRANSPOSE)
    for name in ("b", "c", "d"):
        (inputs / f"{name}.mlir").write_text(_long_module(600))
    out = tmp_path / "out"
    process = subprocess.Popen(
        [str(OPT), str(inputs), "--hlo-print-tilings", "-j", "2", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (out / "a.mlir").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(process.pid)
    assert process.poll() is None and workers, "the batch ended before the interrupt"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGINT
    assert stdout == "" and "Traceback" not in stderr and "error" not in stderr and "leaked" not in stderr
    assert sorted(p.name for p in out.iterdir()) == ["a.mlir"]
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in workers)


# --- remarks show their source line ---------------------------------------------------------


def test_remarks_show_their_source_line_and_a_caret_as_errors_do(tmp_path):
    (source,) = _inputs(tmp_path, t=TRANSPOSE)
    done = _run(str(source), "--hlo-print-indexing-maps", "-o", "/dev/null")
    assert done.returncode == 0, done.stderr
    head, *message, line, caret = done.stderr.splitlines()
    assert head == f"{source}:2:8: remark: output-to-input indexing of result #0 (stablehlo.transpose):"
    assert message == ["operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]"]
    assert line == TRANSPOSE.splitlines()[1] and caret == " " * 7 + "^"
