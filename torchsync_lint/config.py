"""The settings of a run, as a plain record: defaults, the keys ``[tool.torchsync-lint]`` may
hold, and the error a bad one raises. Reading a pyproject.toml and resolving rule selection is
``run.settings``'s job; which files a run checks is ``run.files``'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional

CACHE_NAME = ".torchsync_cache"
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "__pycache__", "build", "dist",
                   "node_modules", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache")
TABLE = "[tool.torchsync-lint]"


class ConfigError(Exception):
    """A bad setting; the message names the file and the key."""


@dataclass
class RuleSelection:
    """One layer of selectors (the pyproject's, then the command line's), as Ruff layers them."""

    select: Optional[List[str]] = None  # None: keep what the layers before chose
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)


@dataclass
class Config:
    select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    hot_functions: List[str] = field(default_factory=list)
    cold_functions: List[str] = field(default_factory=list)
    include_cold: bool = False
    hot_tests: bool = False  # test files (tests/, test_*.py, conftest.py) reported as every-step code
    cache: bool = True  # keep per-file results and interfaces between runs (the CLI; see run.cache)
    cache_dir: Optional[str] = None  # default: <root>/.torchsync_cache

    exclude: List[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: List[str] = field(default_factory=list)
    respect_gitignore: bool = True
    force_exclude: bool = False
    source: Optional[str] = None  # the pyproject.toml read, if any
    root: str = "."
    layers: List[RuleSelection] = field(default_factory=list)
    # The codes that run, once resolved from ``layers``; None: resolve from select/ignore prefixes.
    enabled: Optional[FrozenSet[str]] = None
    # Qualified names of the user's own syncing callables, flagged by TSL110 (``extra-sync-calls``).
    extra_sync_calls: List[str] = field(default_factory=list)

    # a repository's ``cache-dir`` that leads outside its project: why it is refused (no cache is
    # kept; the CLI stops with this message unless ``--cache-dir`` is given)
    cache_dir_refused: Optional[str] = None

    def cache_path(self) -> Optional[str]:
        """Where the CLI keeps its cache, or None with caching off."""
        if not self.cache or self.cache_dir_refused:
            return None
        if self.cache_dir:
            return self.cache_dir if os.path.isabs(self.cache_dir) else os.path.join(self.root, self.cache_dir)
        return os.path.join(self.root, CACHE_NAME)


# key in pyproject -> (attribute, expected type)
KEYS = {
    "select": ("select", list),
    "ignore": ("ignore", list),
    "extend-select": ("extend_select", list),
    "per-file-ignores": ("per_file_ignores", dict),
    "hot-functions": ("hot_functions", list),
    "hot": ("hot_functions", list),  # public entry points of a library (``mylib.solve``): same list
    "cold-functions": ("cold_functions", list),
    "include-cold": ("include_cold", bool),
    "hot-tests": ("hot_tests", bool),
    "cache": ("cache", bool),
    "cache-dir": ("cache_dir", str),
    "exclude": ("exclude", list),
    "extend-exclude": ("extend_exclude", list),
    "respect-gitignore": ("respect_gitignore", bool),
    "force-exclude": ("force_exclude", bool),
    "extra-sync-calls": ("extra_sync_calls", list),
}
CODE_KEYS = ("select", "ignore", "extend-select")
TYPE_NAMES = {list: "list", dict: "table", bool: "boolean (true or false)", str: "string"}
