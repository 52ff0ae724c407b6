"""The package is layered: no import cycle between modules, no module importing a layer
above its own (imports inside functions and under ``if TYPE_CHECKING:`` included: they
are edges of the graph too), and no import inside a function except the deferred imports
listed here with their reason. Reads the source files (AST), so it needs no dependency
and imports nothing it checks; where they are comes from pyproject (``package_layout``
in ``dev/``).

Layers, bottom to top (a module may import its own package and any layer below)::

    errors, limits, lazy, version, direction, schema < devices < dialect_glue < maps < ops < layout < analysis < symbolic_tiling
    < cost_model < pallas < passes < frontend < tools

``hlo_indexing/__init__.py`` and the layout package's ``__init__`` re-export names
lazily (``__getattr__`` + ``importlib``), which is not an import statement.
"""

from __future__ import annotations

import ast
from pathlib import Path

from package_layout import installed_modules

ROOT = Path(__file__).resolve().parents[1]

#: Bottom to top; a module's layer is the longest prefix of its name listed here.
LAYERS = (
    ("hlo_indexing.errors", "hlo_indexing.limits", "hlo_indexing.lazy", "hlo_indexing.version", "hlo_indexing.direction",
     "hlo_indexing.schema"),
    ("hlo_indexing.devices",),
    ("hlo_indexing.dialect_glue",),
    ("hlo_indexing.maps",),
    ("hlo_indexing.ops",),
    ("hlo_indexing.layout",),
    ("hlo_indexing.analysis",),
    ("hlo_indexing.symbolic_tiling",),
    ("hlo_indexing.cost_model",),
    ("hlo_indexing.pallas",),
    ("hlo_indexing.passes",),
    ("hlo_indexing.frontend",),
    ("hlo_indexing.tools",),
)

#: (importing module, imported module) -> why the import is inside a function: an optional
#: dependency or a start-up cost. At most MAX_DEFERRED_IMPORTS (issue #25).
DEFERRED_IMPORTS = {
    ("hlo_indexing.dialect_glue.hlo_import", "jaxlib"): "optional: only the jaxlib bindings provider has HLO import",
    ("hlo_indexing.tools.opt", "hlo_indexing.tools.opt_work"): "start-up: --help/--version/--list-passes load no bindings",
    ("hlo_indexing.tools.batch", "multiprocessing"): "start-up: process pools (~15 ms) only for -j > 1",
    ("hlo_indexing.symbolic_tiling.pallas", "jax.experimental.pallas"): "optional: only the pl.BlockSpec objects need jax",
    ("hlo_indexing.version", "importlib"): "start-up: importlib.metadata (~25 ms) only for the version",
}
MAX_DEFERRED_IMPORTS = 5


MODULES = installed_modules(ROOT)


def _imports(module: str, path: Path) -> tuple[set[str], list[tuple[int, str]], set[str]]:
    """(modules of ours imported at module level, (line, name) of imports inside
    functions, modules of ours imported under ``if TYPE_CHECKING:``)."""
    top: set[str] = set()
    deferred: list[tuple[int, str]] = []
    typing_only: set[str] = set()
    is_package = path.name == "__init__.py"

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            base = ".".join(anchor + ([node.module] if node.module else []))
        submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
        return submodules if len(submodules) == len(node.names) else [base, *submodules]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                names = targets(child)
                if in_function:
                    deferred.extend((child.lineno, name) for name in names)
                else:
                    top.update(name for name in names if name in MODULES)
            elif isinstance(child, ast.If) and not in_function and "TYPE_CHECKING" in ast.unparse(child.test):
                for statement in ast.walk(child):
                    if isinstance(statement, (ast.Import, ast.ImportFrom)):
                        typing_only.update(name for name in targets(statement) if name in MODULES)
            else:
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(), str(path)), False)
    return top - {module}, deferred, typing_only - {module}


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _edges() -> dict[str, set[str]]:
    """Every import of ours, wherever it is: module level, inside functions, for the
    type checker only."""
    return {
        module: top | typing_only | {name for _, name in deferred if name in MODULES}
        for module, (top, deferred, typing_only) in GRAPH.items()
    }


EDGES = _edges()


def _layer(module: str) -> int:
    if module == "hlo_indexing":  # the top package re-exports the API (lazily): above everything
        return len(LAYERS)
    best, rank = -1, None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    assert rank is not None, f"{module} is in no layer: add its package to LAYERS"
    return rank


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def test_the_walk_sees_the_whole_package():
    assert {"hlo_indexing.maps.indexing_map", "hlo_indexing.passes.base", "hlo_indexing.tools.opt"} <= set(MODULES)
    assert not any(path.is_relative_to(ROOT / "dev") for path in MODULES.values())
    assert "hlo_indexing.maps.interval" in GRAPH["hlo_indexing.maps.indexing_map"][0]


def test_the_walk_sees_deferred_and_type_checking_imports(tmp_path):
    source = """
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from hlo_indexing.maps import indexing_map
def f():
    import hlo_indexing.errors
"""
    path = tmp_path / "probe.py"
    path.write_text(source)
    top, deferred, typing_only = _imports("probe", path)
    assert (top, typing_only) == (set(), {"hlo_indexing.maps.indexing_map"})
    assert deferred == [(6, "hlo_indexing.errors")]


def test_no_import_cycles():
    assert _cycles(EDGES) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_a_layer_above_its_own():
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)})"
        for module, imports in EDGES.items()
        for target in imports
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_imports_inside_functions_are_the_listed_deferred_ones():
    unlisted = [
        f"{MODULES[module].relative_to(ROOT)}:{line}: {name}"
        for module, (_, deferred, _) in GRAPH.items()
        for line, name in deferred
        if (module, name) not in DEFERRED_IMPORTS
    ]
    assert unlisted == []


def test_few_imports_inside_functions():
    statements = {(module, line) for module, (_, deferred, _) in GRAPH.items() for line, _ in deferred}
    assert len(statements) <= MAX_DEFERRED_IMPORTS, sorted(statements)


def test_every_listed_deferred_import_still_exists():
    present = {(module, name) for module, (_, deferred, _) in GRAPH.items() for _, name in deferred}
    assert set(DEFERRED_IMPORTS) <= present
