"""An install of the software under test, copied where a test may change it: the packages, the
migrations and ``alembic.ini``, without the bytecode Python wrote beside them."""

from __future__ import annotations

import shutil
from pathlib import Path

from controller.manifest import FILES, PACKAGES, ROOT


def copy_install(dest: Path) -> Path:
    """The tree under test copied to ``dest``, as an install lies on disk; ``dest``."""
    dest.mkdir(parents=True)
    for name in FILES:
        shutil.copy2(ROOT / name, dest / name)
    for top in PACKAGES:
        shutil.copytree(ROOT / top, dest / top, ignore=shutil.ignore_patterns("__pycache__"))
    return dest
