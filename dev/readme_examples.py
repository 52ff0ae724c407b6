"""Run the examples of a Markdown file (the README) and compare their output, so the
documentation cannot rot.

Two kinds of fenced blocks are examples:

* ```` ```sh ```` / ```` ```console ```` blocks with ``$ command`` lines: each command runs
  from the repository root (``hlo-indexing-opt``, ``hlo-indexing-layout``, ``hlo-indexing-tile-view``, ``python``/
  ``python3``, the latter replaced by this interpreter; no shell: no pipes or
  redirections, ``# comments`` allowed) and its stdout+stderr must equal the lines shown
  under it, up to the next ``$`` line (a command shown without output must just succeed).
  Lines ending in ``...`` match any text from there to the end of the line. The exit code
  must be 0 unless the shown output has an ``error:`` line.
* ```` ```python ```` blocks: run as doctests (``>>>`` prompts, ``ELLIPSIS`` and
  ``NORMALIZE_WHITESPACE`` on) when they have prompts, else executed, from the
  repository root; each block has its own namespace.

Other blocks (plain text, ``sh`` blocks without ``$``) are documentation only.

Usage: ``python3 dev/readme_examples.py README.md [--root DIR]``; prints one
line per example and ``N examples, M failed``; a failure is reported as
``README.md:LINE: error: ...`` with the difference, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import doctest
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

_FENCE = re.compile(r"^```(\w*)\s*$")
_SHELL_LANGUAGES = {"sh", "console", "shell", "bash"}
_ALLOWED_PROGRAMS = {"hlo-indexing-opt", "hlo-indexing-layout", "hlo-indexing-tile-view", "python", "python3"}


@dataclass(frozen=True)
class Example:
    """One ``$`` command (``kind="command"``) or one Python block (``kind="python"``);
    ``line`` is its 1-based line in the Markdown file."""

    kind: str
    line: int
    source: str
    expected: tuple[str, ...] = ()


def extract(markdown: str) -> list[Example]:
    """The examples of ``markdown`` in order (see the module docstring)."""
    examples: list[Example] = []
    lines = markdown.split("\n")
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        language, start = fence.group(1), index + 1
        end = start
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = lines[start:end]
        if language == "python":
            examples.append(Example("python", start + 1, "\n".join(body) + "\n"))
        elif language in _SHELL_LANGUAGES:
            examples += _commands(body, start + 1)
        index = end + 1
    return examples


def _commands(body: list[str], first_line: int) -> list[Example]:
    commands: list[Example] = []
    current: tuple[int, str] | None = None
    output: list[str] = []
    for offset, line in enumerate(body):
        if line.startswith("$ "):
            if current is not None:
                commands.append(Example("command", current[0], current[1], tuple(output)))
            current, output = (first_line + offset, line[2:]), []
        elif current is not None:
            output.append(line)
    if current is not None:
        commands.append(Example("command", current[0], current[1], tuple(output)))
    return commands


def run_command(example: Example, root: str) -> str | None:
    """None if the command's output matches, else a description of the difference."""
    argv = shlex.split(example.source, comments=True)
    if not argv or argv[0] not in _ALLOWED_PROGRAMS:
        return f"unsupported command '{argv[0] if argv else ''}' (allowed: {', '.join(sorted(_ALLOWED_PROGRAMS))})"
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    else:  # the console scripts installed next to this interpreter, else on PATH
        search = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
        found = shutil.which(argv[0], path=search)
        if found is None:
            return f"program '{argv[0]}' not found next to {sys.executable} or on PATH"
        argv[0] = found
    done = subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    actual = done.stdout.rstrip("\n").split("\n") if done.stdout.strip() else []
    expected = list(example.expected)
    while expected and not expected[-1].strip():
        expected.pop()
    shows_error = any("error:" in line for line in expected)
    if done.returncode != 0 and not shows_error:
        return f"exit code {done.returncode}\n" + done.stdout
    if expected and not _lines_match(expected, actual):
        diff = difflib.unified_diff(expected, actual, "shown in the README", "actual output", lineterm="")
        return "output differs:\n" + "\n".join(diff)
    return None


def _lines_match(expected: list[str], actual: list[str]) -> bool:
    if len(expected) != len(actual):
        return False
    for shown, got in zip(expected, actual):
        if shown.endswith("...") and got.startswith(shown[:-3]):
            continue
        if shown.rstrip() != got.rstrip():
            return False
    return True


def run_python(example: Example, root: str, name: str) -> str | None:
    """None if the block runs (and its doctest output matches), else the report."""
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    report = io.StringIO()
    with _working_directory(root), contextlib.redirect_stdout(report):
        if ">>>" in example.source:
            test = doctest.DocTestParser().get_doctest(example.source, {}, name, name, example.line - 1)
            runner = doctest.DocTestRunner(optionflags=flags)
            runner.run(test, out=report.write)
            return report.getvalue() if runner.failures else None
        try:
            exec(compile(example.source, f"{name}:{example.line}", "exec"), {"__name__": "__readme__"})
        except Exception as exc:  # the report names the block; the traceback is not needed
            return f"{type(exc).__name__}: {exc}"
    return None


@contextlib.contextmanager
def _working_directory(path: str):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the examples of a Markdown file.")
    parser.add_argument("markdown")
    parser.add_argument("--root", help="directory the examples run from (default: the file's directory)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root or os.path.dirname(os.path.abspath(args.markdown)))
    with open(args.markdown, encoding="utf-8") as handle:
        examples = extract(handle.read())
    name = os.path.basename(args.markdown)
    failed = 0
    for example in examples:
        if example.kind == "command":
            problem = run_command(example, root)
            title = f"$ {example.source}"
        else:
            problem = run_python(example, root, name)
            title = "python block"
        if problem is None:
            print(f"PASS {name}:{example.line}: {title}")
        else:
            failed += 1
            print(f"{name}:{example.line}: error: {title}\n{problem}".rstrip())
    print(f"{len(examples)} examples, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
