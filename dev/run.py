#!/usr/bin/env python3
"""Developer bootstrap: one command to set up and test hlo-indexing on a fresh machine.

Standard library only, so it runs before anything is installed::

    python3 dev/run.py test       # lit over lit_tests/, pytest over python_tests/, then mypy
    python3 dev/run.py test -k interval   # the tests whose names match, as pytest's -k (lit too; no mypy)
    python3 dev/run.py test --quick       # lit and pytest without the tests marked slow; no mypy
    python3 dev/run.py example    # run hlo-indexing-opt on a bundled example (installs the package alone)
    python3 dev/run.py bench [--quick] [--sizes N,N]   # benchmarks/run.py (tables + JSON)
    python3 dev/run.py fuzz --minutes N --seed S [--out DIR]   # fuzz campaign (dev/fuzz_campaign.py)
    python3 dev/run.py conformance [FILE.jsonl ...]   # every corpus under ../shared/conformance (dev/tiling_conformance.py)
    python3 dev/run.py docs       # API reference from the docstrings (pdoc) in build/docs
    python3 dev/run.py --help     # this list

Each creates ``.venv`` in the repository when it is missing and installs the project
into it: ``example`` the package alone, the others with ``pip install -e '.[test,crosscheck]'`` (the ``crosscheck`` extra brings the
C++ ``iree-opt`` that the lit tests marked ``REQUIRES: crosscheck`` compare against). The
install is skipped when a stamp file
(``.venv/.hlo-indexing-stamp``) holds the SHA-256 of the current ``pyproject.toml`` and the extras.

Tests always run against the installed package, from the repository root but without it
on the import path: some of the package's folders are not laid out as its subpackages
(pyproject's ``package-dir``) and must never be importable by their bare names. ``dev/`` itself is not installed: its modules import each other by their
names (a script's folder is on its import path; pytest's ``pythonpath`` adds ``dev/``).

The type check runs mypy (configured in ``pyproject.toml``) over the package
``hlo_indexing``. mypy cannot follow the editable install's import hook, so the check
runs in ``.venv/mypy-tree``: a tree of symbolic links laid out as the installed package,
derived from pyproject (:mod:`package_layout`); error paths are printed as repository
paths.

Exit status: 0 when every stage succeeds, otherwise non-zero. ``test`` runs every stage
even when one fails, and ends by naming what was skipped and why (pytest skips, lit
tests UNSUPPORTED for a missing feature such as ``crosscheck``). pytest's exit code 5 ("no tests collected") counts as a failure only
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

from package_layout import installed_modules, package_folders

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
STAMP = VENV / ".hlo-indexing-stamp"
EXAMPLE = ROOT / "examples" / "softmax.mlir"
EXAMPLE_PIPELINE = "builtin.module(hlo-print-fused-indexing-maps, hlo-attach-fused-indexing-maps)"
PYTEST_NO_TESTS = 5
EXTRAS = "test,crosscheck"
MYPY_TREE = VENV / "mypy-tree"


def venv_bin(name: str) -> Path:
    """Path of an executable installed in the repository's virtual environment."""
    folder = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return VENV / folder / f"{name}{suffix}"


def pyproject_hash() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_environment(extras: str = EXTRAS) -> None:
    """Create ``.venv`` and install the project with ``extras`` (comma-separated; empty:
    the package alone, as ``example`` needs), unless the stamp says the current
    ``pyproject.toml`` is installed with those extras or more."""
    python = venv_bin("python")
    if not python.exists():
        print(f"dev: creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = {extra for extra in extras.split(",") if extra}
    installed: set[str] = set()
    if STAMP.exists():
        digest, _, names = STAMP.read_text().strip().partition(" ")
        if digest == pyproject_hash():
            installed = {extra for extra in names.split(",") if extra}
            if wanted <= installed:
                return
    union = sorted(wanted | installed)
    what = f"with its {' and '.join(union)} extras" if union else "(the package and its dependencies)"
    print(f"dev: installing hlo-indexing {what}", flush=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    target = f"{ROOT}[{','.join(union)}]" if union else str(ROOT)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", target], check=True, env=install_env())
    STAMP.write_text(f"{pyproject_hash()} {','.join(union)}\n")


def install_env() -> dict[str, str]:
    """The environment of ``pip install -e``: setuptools' "Editable installation"
    notice (information only, printed for every editable install of a package laid out
    with ``package-dir``, as this one is) silenced, so that an install prints nothing."""
    env = dict(os.environ)
    env["PYTHONWARNINGS"] = ",".join(filter(None, [env.get("PYTHONWARNINGS"), "ignore:Editable installation"]))
    return env


def clean_env() -> dict[str, str]:
    """The environment for child processes: the venv first on PATH, no PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PATH"] = str(venv_bin("python").parent) + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def run_lit(env: dict[str, str], skipped: list[str] | None = None, keywords: str | None = None) -> tuple[int, int]:
    """Run lit over ``lit_tests/`` (only the tests whose names match the pytest ``-k``
    expression ``keywords``, see :func:`keyword_filter`); return (exit code, number of
    tests that ran). The UNSUPPORTED tests are appended to ``skipped``."""
    command = [str(venv_bin("lit")), "-sv", str(ROOT / "lit_tests")]
    if keywords is not None:
        # a name only pytest has selects no lit test: not a failure (pytest's count decides)
        command += ["--filter", keyword_filter(keywords), "--allow-empty-runs"]
    print("dev: " + " ".join(command), flush=True)
    completed = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(completed.stdout)
    sys.stdout.flush()
    if skipped is not None:
        skipped.extend(lit_skips(completed.stdout))
    return completed.returncode, count_lit_tests(completed.stdout)


_KEYWORD_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def keyword_filter(expression: str) -> str:
    """lit's ``--filter`` (a regular expression searched in each test's name) for a
    pytest ``-k`` expression: names (case-insensitive substrings) combined with ``and``,
    ``or``, ``not`` and parentheses, as pytest reads them. Example: ``interval and not
    layout`` gives ``(?i)^(?=.*interval)(?!(?=.*layout))``."""
    tokens = _KEYWORD_TOKEN.findall(expression)
    position = 0

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def either() -> str:
        alternatives = [both()]
        while position < len(tokens) and tokens[position] == "or":
            take()
            alternatives.append(both())
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"

    def both() -> str:
        parts = [single()]
        while position < len(tokens) and tokens[position] == "and":
            take()
            parts.append(single())
        return "".join(parts)

    def single() -> str:
        if position >= len(tokens):
            raise ValueError(f"-k {expression!r}: expected a name at its end")
        token = take()
        if token == "not":
            return f"(?!{single()})"
        if token == "(":
            inner = either()
            if position >= len(tokens) or take() != ")":
                raise ValueError(f"-k {expression!r}: missing ')'")
            return inner
        return f"(?=.*{re.escape(token)})"

    pattern = either()
    if position != len(tokens):
        raise ValueError(f"-k {expression!r}: unexpected {tokens[position]!r}")
    return f"(?i)^{pattern}"


def lit_skips(output: str) -> list[str]:
    """``lit: NAME (unsupported: a REQUIRES feature is missing)`` per UNSUPPORTED test."""
    names = re.findall(r"^UNSUPPORTED: (.+?) \(\d+ of \d+\)", output, re.MULTILINE)
    return [f"lit: {name} (unsupported: a REQUIRES feature is missing)" for name in names]


def pytest_skips(output: str) -> list[str]:
    """``pytest: [N] path:line: reason`` per line of pytest's short skip summary."""
    return [f"pytest: {line.removeprefix('SKIPPED ')}" for line in output.splitlines() if line.startswith("SKIPPED [")]


def count_lit_tests(output: str) -> int:
    """Number of tests lit executed, from its summary lines (``Passed: 12`` ...)."""
    pattern = r"^\s*(?:Passed|Failed|Expectedly Failed|Unexpectedly Passed|Timed Out)\s*:\s*(\d+)"
    return sum(int(number) for number in re.findall(pattern, output, re.MULTILINE))


def run_pytest(env: dict[str, str], skipped: list[str] | None = None, options: tuple[str, ...] = ()) -> int:
    """Run pytest over ``python_tests/`` with ``options`` (``-k EXPR``, ``-m "not
    slow"``; output shown as it comes); its skips (the ``-rs`` summary) are appended to
    ``skipped``."""
    command = [str(venv_bin("python")), "-m", "pytest", "-q", "-rs", *options, str(ROOT / "python_tests")]
    print("dev: " + " ".join(command), flush=True)
    lines: list[str] = []
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line)
    sys.stdout.flush()
    if skipped is not None:
        skipped.extend(pytest_skips("".join(lines)))
    return process.returncode


def make_mypy_tree() -> None:
    """Lay out ``MYPY_TREE/hlo_indexing`` as the installed package, with symbolic links
    to the repository's modules (made anew on each run, from pyproject's layout)."""
    shutil.rmtree(MYPY_TREE, ignore_errors=True)
    for name, source in installed_modules(ROOT).items():
        parts = name.split(".")
        link = MYPY_TREE.joinpath(*parts, "__init__.py") if source.stem == "__init__" else MYPY_TREE.joinpath(*parts[:-1], source.name)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(source)


def repository_paths(text: str) -> str:
    """mypy's output with paths of the link tree (``hlo_indexing/passes/x.py``) replaced
    by repository paths (``passes/x.py``)."""
    for package, folder in sorted(package_folders(ROOT).items(), key=lambda item: -len(item[0])):
        linked = package.replace(".", "/")
        relative = folder.relative_to(ROOT).as_posix()
        text = re.sub(rf"^{re.escape(linked)}/(?=[^/]+\.py\b)", f"{relative}/", text, flags=re.MULTILINE)
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


#: The marker of the tests ``test --quick`` leaves out (declared in pyproject's pytest options).
SLOW = "slow"


def command_test(*arguments: str) -> int:
    """Run lit, pytest and mypy (all three, even after a failure); 0 when all pass.
    ``-k EXPR``: as pytest's ``-k``, for the edit-test loop: the pytest and lit tests
    whose names match (lit's by :func:`keyword_filter`), no mypy. ``--quick``: every lit
    test and the pytest tests not marked slow, no mypy. What is left out is said."""
    keywords, quick = _test_options(arguments)
    ensure_environment()
    env = clean_env()
    skipped: list[str] = []
    options = (("-k", keywords) if keywords is not None else ()) + (("-m", f"not {SLOW}") if quick else ())
    lit_code, lit_count = run_lit(env, skipped, keywords)
    pytest_code = run_pytest(env, skipped, options)
    if pytest_code == PYTEST_NO_TESTS and lit_count > 0:
        pytest_code = 0
    if keywords is not None or quick:
        skipped.append("mypy: not run with -k or --quick (it checks the whole package)")
        if quick:
            skipped.append(f"pytest: the tests marked {SLOW} (--quick)")
        mypy_code = 0
    else:
        mypy_code = run_mypy(env)
    stages = (("lit", lit_code), ("pytest", pytest_code), ("mypy", mypy_code))
    failed = [name for name, code in stages if code != 0]
    if skipped:
        print(f"dev: skipped {len(skipped)}:", flush=True)
        for line in skipped:
            print(f"dev:   {line}", flush=True)
    if failed:
        print(f"dev: FAILED: {', '.join(failed)}", flush=True)
        return 1
    print("dev: all tests passed" + (f" ({len(skipped)} skipped, listed above)" if skipped else ""), flush=True)
    return 0


def _test_options(arguments: tuple[str, ...]) -> tuple[str | None, bool]:
    """(``-k`` expression or None, ``--quick``) of ``test``'s arguments; ValueError
    for anything else."""
    keywords, quick, rest = None, False, list(arguments)
    while rest:
        argument = rest.pop(0)
        if argument == "--quick":
            quick = True
        elif argument == "-k" and rest:
            keywords = rest.pop(0)
        elif argument.startswith("-k") and len(argument) > 2:
            keywords = argument[2:]
        else:
            raise ValueError(f"test: unknown argument {argument!r} (test [-k EXPR] [--quick])")
    if keywords is not None:
        keyword_filter(keywords)  # a malformed expression is refused before anything runs
    return keywords, quick


def command_example() -> int:
    """Run ``hlo-indexing-opt`` on the bundled softmax; installs the package alone (the
    test extras come with ``test``)."""
    ensure_environment("")
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
    """Run a fuzz campaign (``dev/fuzz_campaign.py --help``) with the venv's Python."""
    ensure_environment()
    command = [str(venv_bin("python")), str(ROOT / "dev" / "fuzz_campaign.py"), *options]
    print("dev: " + " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=clean_env()).returncode


#: Runs pdoc on argv[2:] into argv[1]. The packages' lazy public names (PEP 562
#: ``__getattr__``) are loaded first: pdoc reads a module's ``__dict__``.
PDOC_SCRIPT = """
import importlib, sys
from pathlib import Path
import pdoc
for name in sys.argv[2:]:
    module = importlib.import_module(name)
    for public in getattr(module, "__all__", ()):
        setattr(module, public, getattr(module, public))
pdoc.render.configure(docformat="restructuredtext")
pdoc.pdoc(*sys.argv[2:], output_directory=Path(sys.argv[1]))
"""


def command_docs() -> int:
    """Build the API reference from the docstrings with pdoc (the ``docs`` extra,
    installed on first use) into ``build/docs``; open ``build/docs/index.html``."""
    ensure_environment()
    python = str(venv_bin("python"))
    if subprocess.run([python, "-c", "import pdoc"], env=clean_env(), capture_output=True).returncode != 0:
        print("dev: installing the docs extra (pdoc)", flush=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "-e", f"{ROOT}[{EXTRAS},docs]"], check=True, env=install_env())
    output = ROOT / "build" / "docs"
    command = [python, "-c", PDOC_SCRIPT, str(output), *installed_modules(ROOT)]
    print(f"dev: pdoc -o {output} hlo_indexing (and its {len(command) - 4} modules)", flush=True)
    code = subprocess.run(command, cwd=ROOT, env=clean_env()).returncode
    if code == 0:
        print(f"dev: API reference in {output / 'index.html'}", flush=True)
    return code


def command_conformance(*files: str) -> int:
    """Run ``dev/tiling_conformance.py`` in the venv on ``files`` (default: every
    ``*.jsonl`` in the folders of ``../shared/conformance``); its exit code."""
    ensure_environment()
    command = [str(venv_bin("python")), str(ROOT / "dev" / "tiling_conformance.py"), *files]
    print("dev: " + " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=clean_env()).returncode


COMMANDS = {
    "test": command_test,
    "example": command_example,
    "bench": command_bench,
    "conformance": command_conformance,
    "fuzz": command_fuzz,
    "docs": command_docs,
}
#: Commands that take options after their name.
PASS_THROUGH = {"bench", "conformance", "fuzz", "test"}
#: One line per command for ``--help``.
SUMMARIES = {
    "test": "lit over lit_tests/, pytest over python_tests/, then mypy; names what was skipped;"
    " [-k EXPR] as pytest's -k (lit too, no mypy), [--quick] without the slow tests and mypy",
    "example": "run hlo-indexing-opt on examples/softmax.mlir",
    "bench": "benchmarks/run.py [--quick] [--sizes N,N] (tables + JSON)",
    "conformance": "dev/tiling_conformance.py [FILE.jsonl ...] (default: every corpus in ../shared)",
    "docs": "API reference from the docstrings (pdoc, the docs extra) in build/docs",
    "fuzz": "fuzz campaign: dev/fuzz_campaign.py --minutes N --seed S [--out DIR]",
}


def usage() -> str:
    """The ``--help`` text: the commands, one per line."""
    lines = ["usage: python3 dev/run.py COMMAND [OPTIONS]", "", "Set up .venv (first run) and:"]
    lines += [f"  {name:<12} {SUMMARIES[name]}" for name in COMMANDS]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if not argv or argv[0] not in COMMANDS or (len(argv) > 1 and argv[0] not in PASS_THROUGH):
        print(usage(), file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](*argv[1:])
    except ValueError as exc:
        print(f"dev: error: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(f"dev: error: command failed with exit code {exc.returncode}: {' '.join(map(str, exc.cmd))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
