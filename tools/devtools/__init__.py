"""Developer tools that are not part of the installed package: the XLA conformance
runner (with its map comparison) and the README example runner. Tests reach them through ``python_tests/conftest.py``
(which puts ``tools/`` on ``sys.path``); as scripts they run from the repository root,
e.g. ``python3 tools/devtools/conformance.py FILE.jsonl``."""
