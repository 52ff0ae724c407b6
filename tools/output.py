"""Writing a command-line tool's output: to stdout (``-``), or to a file atomically
(a temporary file beside it, then a rename), so that a run that fails or is interrupted
never leaves a partial output file behind. The file gets the mode every tool gives the
files it writes: a new file ``0666`` less the user's umask (``0644`` under ``umask 022``),
a replaced file keeps its mode.

Example::

    >>> write_output("-", "module {\\n}\\n")
    module {
    }
"""

from __future__ import annotations

import os
import stat
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
                os.fchmod(fd, _mode_for(path))  # mkstemp makes 0600: a private file, not an output
                handle.write(text)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        message = f"cannot write output file '{path}': {exc.strerror or exc}"
        raise UsageError(message, SourceLocation(COMMAND_LINE, 1, 1)) from None


def _mode_for(path: str) -> int:
    """The permission bits of an output file written to ``path``: those of the file it
    replaces, else ``0666`` less the process's umask (read by setting it and setting it
    back: the only portable way)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
