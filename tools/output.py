"""Writing a command-line tool's output: to stdout (``-``), or to a file atomically
(a temporary file beside it, then a rename), so that a run that fails never leaves a
partial output file behind.

Example::

    >>> write_output("-", "module {\\n}\\n")
    module {
    }
"""

from __future__ import annotations

import os
import sys
import tempfile

from hlo_indexing.errors import SourceLocation
from hlo_indexing.tools.options import COMMAND_LINE, UsageError


def write_output(path: str, text: str) -> None:
    """Write ``text`` to stdout when ``path`` is ``-``, else atomically to the file
    ``path`` (a device or pipe such as ``/dev/null`` is written directly: it cannot be
    renamed over). :class:`~hlo_indexing.tools.options.UsageError` at the command line
    when the file cannot be written."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            return
        fd, temporary = tempfile.mkstemp(prefix=".hlo-indexing-", dir=os.path.dirname(os.path.abspath(path)))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        message = f"cannot write output file '{path}': {exc.strerror or exc}"
        raise UsageError(message, SourceLocation(COMMAND_LINE, 1, 1)) from None
