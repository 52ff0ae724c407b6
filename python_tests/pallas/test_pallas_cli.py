"""``python -m hlo_indexing.pallas FILE.py:FUNC --arg TYPE ...`` on the README's kernel
(examples/pallas_buggy_add.py): its three bugs as text and JSON, exit code 1; the fixed
kernel exits 0; bad input exits 2 with one ``error:`` line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("jax")
pytest.importorskip("jax.experimental.pallas")

from hlo_indexing.errors import InvalidArgumentError  # noqa: E402
from hlo_indexing.maps import IndexingMap  # noqa: E402
from hlo_indexing.pallas.cli import parse_argument  # noqa: E402
from helpers import REPO_ROOT  # noqa: E402

EXAMPLE = "examples/pallas_buggy_add.py"
ARGS = ["--arg", "f32[64,256]", "--arg", "f32[64,256]"]


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hlo_indexing.pallas", *argv], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


def test_the_readme_kernel_reports_its_three_bugs():
    done = run(f"{EXAMPLE}:add", *ARGS, "--device", "tpu-v5e")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "pallas_call add_kernel at examples/pallas_buggy_add.py:17: grid (8, 2), dimension_semantics ('parallel', 'parallel')"
    kinds = [line.split("]")[0].split("[")[1] for line in lines if line.startswith("  error:")]
    assert kinds == ["block-index-out-of-range", "uncovered-output", "race"]
    assert lines[-1] == "3 error(s), 0 warning(s) on tpu-v5e"


def test_json_output_carries_the_maps_and_findings():
    done = run(f"{EXAMPLE}:add", *ARGS, "--format", "json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["device"] is None and data["errors"] == 3
    (call,) = data["calls"]
    assert call["grid"] == [8, 2] and call["parallel_axes"] == [0, 1]
    y = call["operands"][1]
    assert y["block_index_maps"] == ["(i, j) -> (i, j + 1), domain: i in [0, 7], j in [0, 1]"]
    (text,) = y["element_maps"]
    # Grid point (i, j) reads rows i*8 .. i*8+7, columns (j+1)*128 .. (j+1)*128+127.
    expected = {
        ((i, j), (i * 8 + r, (j + 1) * 128 + c)) for i in range(8) for j in range(2) for r in range(8) for c in range(128)
    }
    assert IndexingMap.parse(text).relation() == expected
    race = next(f for f in call["findings"] if f["kind"] == "race")
    assert race["severity"] == "error" and race["operand"] == "output 0 (o_ref)" and race["grid_point"] == [0, 0]


def test_the_fixed_kernel_exits_0():
    done = run(f"{EXAMPLE}:add_fixed", *ARGS, "--device", "tpu-v5e")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 error(s), 0 warning(s) on tpu-v5e"


@pytest.mark.parametrize(
    "argv, message",
    [
        ([f"{EXAMPLE}:nothing", *ARGS], "no attribute 'nothing'"),
        (["missing.py:add", *ARGS], "missing.py: no such file"),
        ([EXAMPLE, *ARGS], "expected FILE.py:FUNCTION"),
        ([f"{EXAMPLE}:add", "--arg", "f32(64)"], "expected TYPE[D0,D1,...]"),
        ([f"{EXAMPLE}:add", "--arg", "q7[4]", "--arg", "f32[4]"], "unknown element type 'q7'"),
        ([f"{EXAMPLE}:add", "--arg", "f32[64,256]"], "tracing add failed: TypeError"),
        ([f"{EXAMPLE}:add", *ARGS, "--device", "tpu-v9"], "unknown device 'tpu-v9'"),
    ],
)
def test_bad_input_exits_2_with_one_error_line(argv, message):
    done = run(*argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], done.stderr
    assert "Traceback" not in done.stderr


def test_argument_types_take_numpy_and_xla_names():
    assert parse_argument("bf16[8,128]").dtype.name == "bfloat16"
    assert parse_argument("float32[]").shape == ()
    assert parse_argument(" s32 [ 4 , 2 ] ").shape == (4, 2)
    with pytest.raises(InvalidArgumentError):
        parse_argument("f32")


def test_without_jax_the_checker_says_how_to_install_it():
    code = (
        "import sys; sys.modules['jax'] = None\n"
        "import hlo_indexing\n"
        "try:\n"
        "    hlo_indexing.check_pallas(lambda: None)\n"
        "except hlo_indexing.UnsupportedError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "checking Pallas kernels needs jax" in done.stdout and "pip install jax" in done.stdout


def test_bad_arguments_of_check_pallas_are_invalid_argument_errors():
    import hlo_indexing

    with pytest.raises(InvalidArgumentError, match="expects a function"):
        hlo_indexing.check_pallas(42)
    with pytest.raises(InvalidArgumentError, match="device must be"):
        hlo_indexing.check_pallas(lambda: None, device=3)
    with pytest.raises(InvalidArgumentError, match="max_points"):
        hlo_indexing.check_pallas(lambda: None, max_points=0)
    report = hlo_indexing.check_pallas(lambda: None)
    assert report.calls == () and str(report).startswith("no pallas_call found")


def test_modules_beside_the_file_are_found_from_its_folder(tmp_path):
    # FILE.py is loaded as a module, not run as a script: what it imports is found as
    # `python -m` finds it (current directory, PYTHONPATH), and the error says so.
    (tmp_path / "kernels.py").write_text((REPO_ROOT / EXAMPLE).read_text())
    (tmp_path / "entry.py").write_text("from kernels import add_fixed\n")
    argv = [sys.executable, "-m", "hlo_indexing.pallas", "entry.py:add_fixed", *ARGS, "--device", "tpu-v5e"]
    beside = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert beside.returncode == 0, beside.stderr
    argv[3] = str(tmp_path / "entry.py") + ":add_fixed"
    elsewhere = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert elsewhere.returncode == 2
    assert "No module named 'kernels'" in elsewhere.stderr and f"run from {tmp_path.resolve()}" in elsewhere.stderr
