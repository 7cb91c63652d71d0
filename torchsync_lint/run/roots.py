"""Where a project starts: the nearest folder above a file holding ``pyproject.toml``,
``setup.py``, ``setup.cfg`` or ``.git``, else the top of its package. Apart from ``ondemand`` (the
project seen from one file) so that the command finds a root without loading a project."""

from __future__ import annotations

import os
from typing import Optional

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(path: str) -> Optional[str]:
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in ROOT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def package_top(path: str) -> str:
    d = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(d, "__init__.py")) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    return d
