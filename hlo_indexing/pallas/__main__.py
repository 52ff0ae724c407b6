"""``python -m hlo_indexing.pallas FILE.py:FUNC --arg TYPE ...`` (see :mod:`.cli`)."""

import sys

from hlo_indexing.pallas.cli import main

sys.exit(main())
