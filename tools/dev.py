#!/usr/bin/env python3
"""Developer bootstrap: one command to set up and test hlo-indexing on a fresh machine.

Standard library only, so it runs before anything is installed::

    python3 tools/dev.py test       # lit over lit_tests/, pytest over python_tests/, then mypy
    python3 tools/dev.py example    # run hlo-indexing-opt on a bundled example
    python3 tools/dev.py bench [--quick] [--sizes N,N]   # benchmarks/run.py (tables + JSON)
    python3 tools/dev.py fuzz --minutes N --seed S [--out DIR]   # fuzz campaign (tools/devtools/fuzz/)
    python3 tools/dev.py conformance [FILE.jsonl ...]   # every corpus under ../shared/conformance (tools/devtools/tiling_conformance.py)

Both create ``.venv`` in the repository when it is missing and install the project
into it with ``pip install -e '.[test,crosscheck]'`` (the ``crosscheck`` extra brings the
C++ ``iree-opt`` that the lit tests marked ``REQUIRES: crosscheck`` compare against). The
install is skipped when a stamp file
(``.venv/.hlo-indexing-stamp``) holds the SHA-256 of the current ``pyproject.toml`` and the extras.

Tests always run against the installed package, from the repository root but without it
on ``sys.path`` (pytest uses ``--import-mode=importlib``): ``import passes`` would
otherwise load the bare folder instead of ``hlo_indexing.passes``.

The type check runs mypy (configured in ``pyproject.toml``) over the installed package
``hlo_indexing``. Its folders are spread over the repository (``passes/``,
``dialect_glue/`` and ``tools/`` are its subpackages, see pyproject's ``package-dir``) and
mypy cannot follow the editable install's import hook, so the check runs in
``.venv/mypy-tree``: a tree of symbolic links laid out as the installed package; error
paths are printed as repository paths.

Exit status: 0 when every stage succeeds, otherwise non-zero. ``test`` runs every stage
even when one fails. pytest's exit code 5 ("no tests collected") counts as a failure only
when lit ran no test either.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
STAMP = VENV / ".hlo-indexing-stamp"
EXAMPLE = ROOT / "examples" / "softmax.mlir"
EXAMPLE_PIPELINE = "builtin.module(hlo-print-fusion-indexing, hlo-fuse-indexing-maps)"
PYTEST_NO_TESTS = 5
EXTRAS = "test,crosscheck"
#: Installed package name -> repository folder (as pyproject's ``package-dir`` says).
PACKAGE_DIRS = {
    "hlo_indexing": ROOT / "hlo_indexing",
    "hlo_indexing/passes": ROOT / "passes",
    "hlo_indexing/dialect_glue": ROOT / "dialect_glue",
    "hlo_indexing/tools": ROOT / "tools",
}
MYPY_TREE = VENV / "mypy-tree"


def venv_bin(name: str) -> Path:
    """Path of an executable installed in the repository's virtual environment."""
    folder = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return VENV / folder / f"{name}{suffix}"


def pyproject_hash() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_environment() -> None:
    """Create ``.venv`` and install the project with its test extra, unless up to date."""
    python = venv_bin("python")
    if not python.exists():
        print(f"dev: creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = f"{pyproject_hash()} {EXTRAS}"
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    print("dev: installing hlo-indexing with its test and crosscheck extras (first run takes a minute or two)", flush=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", f"{ROOT}[{EXTRAS}]"], check=True)
    STAMP.write_text(wanted + "\n")


def clean_env() -> dict[str, str]:
    """The environment for child processes: the venv first on PATH, no PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PATH"] = str(venv_bin("python").parent) + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def run_lit(env: dict[str, str]) -> tuple[int, int]:
    """Run lit over ``lit_tests/``; return (exit code, number of tests that ran)."""
    command = [str(venv_bin("lit")), "-sv", str(ROOT / "lit_tests")]
    print("dev: " + " ".join(command), flush=True)
    completed = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(completed.stdout)
    sys.stdout.flush()
    return completed.returncode, count_lit_tests(completed.stdout)


def count_lit_tests(output: str) -> int:
    """Number of tests lit executed, from its summary lines (``Passed: 12`` ...)."""
    pattern = r"^\s*(?:Passed|Failed|Expectedly Failed|Unexpectedly Passed|Timed Out)\s*:\s*(\d+)"
    return sum(int(number) for number in re.findall(pattern, output, re.MULTILINE))


def run_pytest(env: dict[str, str]) -> int:
    command = [str(venv_bin("python")), "-m", "pytest", "-q", str(ROOT / "python_tests")]
    print("dev: " + " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def make_mypy_tree() -> None:
    """Lay out ``MYPY_TREE/hlo_indexing`` as the installed package, with symbolic links
    to the repository's files and folders (made anew on each run)."""
    shutil.rmtree(MYPY_TREE, ignore_errors=True)
    for package, folder in PACKAGE_DIRS.items():
        target = MYPY_TREE / package
        target.mkdir(parents=True, exist_ok=True)
        for entry in folder.iterdir():
            link = target / entry.name
            if entry.name != "__pycache__" and not link.exists():
                link.symlink_to(entry)


def repository_paths(text: str) -> str:
    """mypy's output with paths of the link tree (``hlo_indexing/passes/x.py``) replaced
    by repository paths (``passes/x.py``)."""
    for package, folder in sorted(PACKAGE_DIRS.items(), key=lambda item: -len(item[0])):
        relative = folder.relative_to(ROOT).as_posix()
        text = re.sub(rf"^{re.escape(package)}/", f"{relative}/", text, flags=re.MULTILINE)
    return text


def run_mypy(env: dict[str, str]) -> int:
    """Type-check the package with mypy (its summary line is the last line printed)."""
    make_mypy_tree()
    command = [
        str(venv_bin("mypy")),
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(VENV / "mypy-cache"),
        "-p",
        "hlo_indexing",
    ]
    print("dev: " + " ".join(command), flush=True)
    completed = subprocess.run(command, cwd=MYPY_TREE, env=env, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(repository_paths(completed.stdout))
    sys.stdout.flush()
    return completed.returncode


def command_test() -> int:
    """Run lit, pytest and mypy (all three, even after a failure); 0 when all pass."""
    ensure_environment()
    env = clean_env()
    lit_code, lit_count = run_lit(env)
    pytest_code = run_pytest(env)
    if pytest_code == PYTEST_NO_TESTS and lit_count > 0:
        pytest_code = 0
    mypy_code = run_mypy(env)
    stages = (("lit", lit_code), ("pytest", pytest_code), ("mypy", mypy_code))
    failed = [name for name, code in stages if code != 0]
    if failed:
        print(f"dev: FAILED: {', '.join(failed)}", flush=True)
        return 1
    print("dev: all tests passed", flush=True)
    return 0


def command_example() -> int:
    ensure_environment()
    command = [
        str(venv_bin("hlo-indexing-opt")),
        str(EXAMPLE),
        f"--pass-pipeline={EXAMPLE_PIPELINE}",
        "--mlir-print-local-scope",
    ]
    print(f"dev: {' '.join(command[:1] + [os.path.relpath(EXAMPLE, ROOT)] + command[2:])}", flush=True)
    print(f"dev: input:\n{EXAMPLE.read_text()}", flush=True)
    print("dev: output:", flush=True)
    return subprocess.run(command, cwd=ROOT, env=clean_env()).returncode


def command_bench(*options: str) -> int:
    """Run ``benchmarks/run.py`` with the venv's Python, passing ``options`` through."""
    ensure_environment()
    command = [str(venv_bin("python")), str(ROOT / "benchmarks" / "run.py"), *options]
    print("dev: " + " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=clean_env()).returncode


def command_fuzz(*options: str) -> int:
    """Run a fuzz campaign (``tools/devtools/fuzz/campaign.py --help``) with the venv's Python."""
    ensure_environment()
    command = [str(venv_bin("python")), str(ROOT / "tools" / "devtools" / "fuzz" / "campaign.py"), *options]
    print("dev: " + " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=clean_env()).returncode


def command_conformance(*files: str) -> int:
    """Run ``tools/devtools/tiling_conformance.py`` in the venv on ``files`` (default: every
    ``*.jsonl`` in the folders of ``../shared/conformance``); its exit code."""
    ensure_environment()
    command = [str(venv_bin("python")), str(ROOT / "tools" / "devtools" / "tiling_conformance.py"), *files]
    print("dev: " + " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=clean_env()).returncode


COMMANDS = {
    "test": command_test,
    "example": command_example,
    "bench": command_bench,
    "conformance": command_conformance,
    "fuzz": command_fuzz,
}
#: Commands that take options after their name.
PASS_THROUGH = {"bench", "conformance", "fuzz"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS or (len(argv) > 1 and argv[0] not in PASS_THROUGH):
        print(f"usage: python3 tools/dev.py {{{'|'.join(COMMANDS)}}}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](*argv[1:])
    except subprocess.CalledProcessError as exc:
        print(f"dev: error: command failed with exit code {exc.returncode}: {' '.join(map(str, exc.cmd))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
