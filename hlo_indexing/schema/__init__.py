"""The JSON Schemas of the package's documents, shipped as package data beside this
file: ``indexing.schema.json`` (the module analysis, :mod:`hlo_indexing.analysis.results`),
``tilings.schema.json`` (ranked tilings, :mod:`hlo_indexing.symbolic_tiling.tilings_report`)
and ``tiling-audit.schema.json`` (XLA's block-level tilings audited,
:mod:`hlo_indexing.cost_model.audit`). Each document's module names its schema and loads
it with :func:`load_schema`.

Example::

    >>> load_schema("tilings.schema.json")["title"]
    'hlo-indexing ranked tilings of one module'
"""

from __future__ import annotations

import json
from importlib import resources


def load_schema(file_name: str) -> dict[str, object]:
    """The JSON Schema in ``file_name`` (a file of this package, e.g.
    ``"tilings.schema.json"``), parsed."""
    text = resources.files(__name__).joinpath(file_name).read_text(encoding="utf-8")
    loaded: dict[str, object] = json.loads(text)
    return loaded
