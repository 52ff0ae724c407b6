"""The package is layered: no import cycle between modules, no module importing a layer
above its own, and no import inside a function except the deferred imports listed here
with their reason. Reads the source files (AST), so it needs no dependency and imports
nothing it checks.

Layers, bottom to top (a module may import its own package and any layer below)::

    errors, limits, delegates < dialect_glue < maps < ops < layout < analysis < symbolic_tiling
    < passes < frontend < tools

``hlo_indexing/__init__.py`` and the layout package's ``__init__`` re-export names
lazily (``__getattr__`` + ``importlib``), which is not an import statement.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Installed package name -> folder of the repository (as pyproject's package-dir says).
PACKAGE_DIRS = {
    "hlo_indexing": ROOT / "hlo_indexing",
    "hlo_indexing.passes": ROOT / "passes",
    "hlo_indexing.dialect_glue": ROOT / "dialect_glue",
    "hlo_indexing.tools": ROOT / "tools",
}

#: Bottom to top; a module's layer is the longest prefix of its name listed here.
LAYERS = (
    ("hlo_indexing.errors", "hlo_indexing.limits", "hlo_indexing.delegates", "hlo_indexing.lazy"),
    ("hlo_indexing.dialect_glue",),
    ("hlo_indexing.maps",),
    ("hlo_indexing.ops",),
    ("hlo_indexing.layout",),
    ("hlo_indexing.analysis",),
    ("hlo_indexing.symbolic_tiling",),
    ("hlo_indexing.passes",),
    ("hlo_indexing.frontend",),
    ("hlo_indexing.tools",),
)

#: (importing module, imported module) -> why the import is inside a function.
DEFERRED_IMPORTS = {
    ("hlo_indexing.dialect_glue.hlo_import", "jaxlib"): "optional: only the jaxlib bindings provider has it",
    ("hlo_indexing.dialect_glue.context", "jaxlib.mlir._mlir_libs"): "optional: only the jaxlib bindings provider",
    ("hlo_indexing.maps.isl_decision", "islpy"): "optional: the 'exact' extra (proofs say they were not run without it)",
    ("hlo_indexing.tools.opt", "hlo_indexing.tools.driver"): "start-up: --help/--version/--list-passes load no bindings",
    ("hlo_indexing.tools.opt", "hlo_indexing.tools.batch"): "start-up: as for the driver",
    ("hlo_indexing.tools.opt", "hlo_indexing.tools.show_layout"): "start-up: loaded only for --show-layout",
    ("hlo_indexing.tools.batch", "concurrent.futures"): "start-up: process pools (~15 ms) only for -j > 1",
    ("hlo_indexing.tools.batch", "multiprocessing"): "start-up: as for concurrent.futures",
    ("hlo_indexing.dialect_glue.parsing", "hlo_indexing.dialect_glue.hlo_import"): "start-up: the HLO importer only for HLO input",
    ("hlo_indexing.dialect_glue.parsing", "hlo_indexing.dialect_glue.isolation"): "start-up: the isolation server only for Shardy region ops",
    ("hlo_indexing.frontend", "hlo_indexing.passes.pass_manager"): "start-up: the passes only for analyze(annotate=True)",
    ("hlo_indexing.analysis.module_analysis", "hlo_indexing.analysis.serialize"): "start-up: only for to_dict/to_json",
    ("hlo_indexing", "importlib"): "start-up: importlib.metadata (~25 ms) only for __version__",
    ("hlo_indexing.tools.options", "importlib.metadata"): "start-up: importlib.metadata (~25 ms) only for --version",
}


def _modules() -> dict[str, Path]:
    """Installed module name -> source file (developer tools under tools/devtools and
    tools/dev.py are not installed)."""
    found = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            relative = path.relative_to(folder)
            if package == "hlo_indexing.tools" and (relative.parts[0] == "devtools" or relative.name == "dev.py"):
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> tuple[set[str], list[tuple[int, str]]]:
    """(modules of ours imported at module level, (line, name) of imports inside
    functions). Imports under ``if TYPE_CHECKING:`` never run and are skipped."""
    top: set[str] = set()
    deferred: list[tuple[int, str]] = []
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
                continue
            else:
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(), str(path)), False)
    return top - {module}, deferred


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


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
    assert "hlo_indexing.maps.indexing_map" in GRAPH["hlo_indexing.maps.simplifier"][0]


def test_no_import_cycles():
    assert _cycles({module: imports for module, (imports, _) in GRAPH.items()}) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_a_layer_above_its_own():
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)})"
        for module, (imports, _) in GRAPH.items()
        for target in imports
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_imports_inside_functions_are_the_listed_deferred_ones():
    unlisted = [
        f"{MODULES[module].relative_to(ROOT)}:{line}: {name}"
        for module, (_, deferred) in GRAPH.items()
        for line, name in deferred
        if (module, name) not in DEFERRED_IMPORTS
    ]
    assert unlisted == []


def test_every_listed_deferred_import_still_exists():
    present = {(module, name) for module, (_, deferred) in GRAPH.items() for _, name in deferred}
    assert set(DEFERRED_IMPORTS) <= present
