"""The ``progressive`` command: ``main`` is its group, each command group in a module of its
own registers on it when imported here."""

from app.cli import db, export, ledger, links, processes, retention, software, users
from app.cli.common import main

__all__ = [
    "db",
    "export",
    "ledger",
    "links",
    "main",
    "processes",
    "retention",
    "software",
    "users",
]
