"""``python -m app.cli``: the ``progressive`` command."""

from app.cli import main

main()
