"""``python -m tests.controller.permissive_cli ARGS``: the ``progressive`` command in a process
that knows the test jurisdiction allowing every shape (``permissive_law``), for tests of
shapes Indiana forbids run through the command line (``PROGRESSIVE_JURISDICTION=test-permissive``).
"""

from __future__ import annotations

import tests.controller.permissive_law  # noqa: F401  (registers the test jurisdiction)
from app.cli import main

if __name__ == "__main__":
    main()
