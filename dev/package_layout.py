"""Where each module of the installed package ``hlo_indexing`` lives in the repository,
read from ``pyproject.toml`` (``[tool.setuptools] packages`` and ``package-dir``, the one
place that states it). Standard library only: ``dev/run.py`` uses it before anything is
installed (the type checker's package tree, the API reference), and the tests that read
the package's sources (import layers, docstrings, the wheel's contents) use it too.

Example::

    >>> folders = package_folders(ROOT)
    >>> folders["hlo_indexing.passes"].relative_to(ROOT).as_posix()
    'passes'
"""

from __future__ import annotations

import tomllib
from pathlib import Path

#: The repository (this file is ``dev/package_layout.py``).
ROOT = Path(__file__).resolve().parent.parent


def package_folders(root: Path = ROOT) -> dict[str, Path]:
    """Installed package name -> its folder in the repository, for every package that
    pyproject lists: a package's folder is its nearest ``package-dir`` entry's folder
    followed by the rest of its dotted name."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = setuptools.get("package-dir", {})
    folders = {}
    for package in setuptools["packages"]:
        parts = package.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in mapping:
                folders[package] = root.joinpath(mapping[prefix], *parts[cut:])
                break
        else:
            folders[package] = root.joinpath(*parts)
    return folders


def installed_modules(root: Path = ROOT) -> dict[str, Path]:
    """Installed module name -> source file: the ``*.py`` files directly in each listed
    package's folder (what the wheel holds; a folder pyproject does not list is not
    installed). A package's ``__init__.py`` is named as the package."""
    modules = {}
    for package, folder in package_folders(root).items():
        for path in sorted(folder.glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules
