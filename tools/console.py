"""How the console scripts (``hlo-indexing-opt``, ``hlo-indexing-layout``,
``hlo-indexing-tile-view``) end: with the status their ``main`` returns, and on Ctrl-C
quietly, as a shell expects of any tool: no traceback, no partial output file (outputs
are written atomically, :mod:`hlo_indexing.tools.output`), and the process ends by the
SIGINT itself, so that the shell reports status 130 (128 + SIGINT) and a shell loop
running the tool over many files stops too (bash stops a loop whose command died by
SIGINT, not one whose command exited normally).

Example (``pyproject.toml`` names ``cli_main`` functions built this way)::

    def cli_main() -> None:
        console.run(lambda: main(sys.argv[1:]))
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

#: The exit status of a tool interrupted by Ctrl-C, where a process cannot die by SIGINT.
INTERRUPTED = 128 + signal.SIGINT


def run(main: Callable[[], int]) -> NoReturn:
    """Exit with ``main()``'s status; on ``KeyboardInterrupt`` end by SIGINT, printing
    nothing more."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        pass
    _die_by_sigint()  # out of the handler: the interrupted frames and what they held are gone


def _die_by_sigint() -> NoReturn:
    gc.collect()  # finalizers of what the frames held (e.g. a worker pool's semaphores) run now, not never
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say
            pass
    if hasattr(signal, "pthread_kill"):  # POSIX: die by the signal itself
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(INTERRUPTED)
