"""Build configuration that pyproject.toml cannot express: ``tools/`` installs as
``hlo_indexing.tools`` (the command-line tools), but ``tools/dev.py``, the developer
entry point, stays out of the wheel (``tools/devtools/`` is not a listed package)."""

from setuptools import setup
from setuptools.command.build_py import build_py

#: (package, module) pairs that live in installed folders but are not installed.
DEVELOPER_MODULES = {("hlo_indexing.tools", "dev")}


class BuildWithoutDeveloperTools(build_py):
    """``build_py`` without :data:`DEVELOPER_MODULES`."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [entry for entry in modules if (entry[0], entry[1]) not in DEVELOPER_MODULES]


setup(cmdclass={"build_py": BuildWithoutDeveloperTools})
