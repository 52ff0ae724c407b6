"""Every public function, method and class of the installed package has a docstring
(the contract: what it takes, returns or raises). Reads the source files (AST), so it
imports nothing it checks.

Public: a name not starting with ``_``, at module level or in a public class (a class
nested in a public class counts as well). Exempt: dunder methods (``__init__`` says its
contract in the class docstring), functions nested in functions, property setters and
deleters (the getter documents the property), and members of private classes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from package_layout import installed_modules

ROOT = Path(__file__).resolve().parents[1]


def _installed_files() -> list[Path]:
    """The source files of the installed package (where pyproject's layout says)."""
    return sorted(installed_modules(ROOT).values())


def _is_setter_or_deleter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in node.decorator_list)


def _undocumented(body: list[ast.stmt], prefix: str) -> list[str]:
    """Qualified names (with line numbers) of public defs/classes in ``body`` without a
    docstring, descending into public classes only."""
    missing = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
            if name.startswith("_") or _is_setter_or_deleter(node):
                continue
            if ast.get_docstring(node) is None:
                missing.append(f"{node.lineno}: {prefix}{name}")
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            if ast.get_docstring(node) is None:
                missing.append(f"{node.lineno}: {prefix}{node.name}")
            missing += _undocumented(node.body, f"{prefix}{node.name}.")
    return missing


def test_the_walk_sees_the_package() -> None:
    files = {path.relative_to(ROOT).as_posix() for path in _installed_files()}
    assert "hlo_indexing/maps/indexing_map.py" in files
    assert "passes/base.py" in files
    assert "tools/opt.py" in files
    assert "dev/run.py" not in files and not any(f.startswith("dev/") for f in files)


def test_the_walk_finds_undocumented_definitions() -> None:
    source = '''
def documented():
    """Yes."""

def missing():
    pass

def _private():
    pass

class Public:
    def method(self):
        pass

    def __init__(self):
        pass

    @property
    def value(self):
        """The value."""

    @value.setter
    def value(self, new):
        pass

class _Private:
    def method(self):
        pass

def outer():
    """Yes."""
    def nested():
        pass
'''
    assert _undocumented(ast.parse(source).body, "") == ["5: missing", "11: Public", "12: Public.method"]


def test_every_public_definition_has_a_docstring() -> None:
    missing = []
    for path in _installed_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        relative = path.relative_to(ROOT).as_posix()
        missing += [f"{relative}:{entry}" for entry in _undocumented(tree.body, "")]
    assert not missing, f"{len(missing)} public definitions without a docstring:\n" + "\n".join(missing)
