"""Settings: defaults, ``[tool.torchsync-lint]`` in the nearest pyproject.toml, then the CLI."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "__pycache__", "build", "dist",
                   "node_modules", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache")


class ConfigError(Exception):
    """A bad setting; the message names the file and the key."""


@dataclass
class Config:
    select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    hot_functions: List[str] = field(default_factory=list)
    cold_functions: List[str] = field(default_factory=list)
    include_cold: bool = False
    exclude: List[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: List[str] = field(default_factory=list)
    source: Optional[str] = None  # the pyproject.toml read, if any
    root: str = "."

    def ignored_for(self, path: str) -> List[str]:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        out: List[str] = []
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern) or fnmatch.fnmatch(path, pattern):
                out.extend(codes)
        return out

    def is_excluded(self, path: str) -> bool:
        name = os.path.basename(os.path.normpath(path))
        return any(fnmatch.fnmatch(name, p) for p in self.exclude + self.extend_exclude)


# key in pyproject -> (attribute, expected type)
KEYS = {
    "select": ("select", list),
    "ignore": ("ignore", list),
    "extend-select": ("select", list),
    "per-file-ignores": ("per_file_ignores", dict),
    "hot-functions": ("hot_functions", list),
    "cold-functions": ("cold_functions", list),
    "include-cold": ("include_cold", bool),
    "exclude": ("exclude", list),
    "extend-exclude": ("extend_exclude", list),
}


def _has_our_table(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return False
    if b"torchsync-lint" not in raw:
        return False
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return True  # it means to configure us: let load() report the error
    return "torchsync-lint" in data.get("tool", {})


def find_pyproject(start: str) -> Optional[str]:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.torchsync-lint]`` table."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate) and _has_our_table(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _check_codes(path: str, key: str, values: Sequence) -> List[str]:
    out = []
    for v in values:
        if not isinstance(v, str) or not v.upper().startswith("TSL") or not v[3:].isdigit() and v[3:] != "":
            raise ConfigError(f"{path}: [tool.torchsync-lint] {key}: {v!r} is not a code prefix like 'TSL' or 'TSL101'")
        out.append(v.upper())
    return out


def load(pyproject: Optional[str]) -> Config:
    cfg = Config()
    if pyproject is None:
        return cfg
    cfg.source = pyproject
    cfg.root = os.path.dirname(os.path.abspath(pyproject))
    try:
        with open(pyproject, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror}") from None
    section = data.get("tool", {}).get("torchsync-lint")
    if section is None:
        return cfg
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.torchsync-lint] must be a table")
    extend_select: List[str] = []
    for key, value in section.items():
        if key not in KEYS:
            raise ConfigError(f"{pyproject}: [tool.torchsync-lint] unknown key {key!r} (known: {', '.join(sorted(KEYS))})")
        attr, typ = KEYS[key]
        if not isinstance(value, typ):
            raise ConfigError(f"{pyproject}: [tool.torchsync-lint] {key}: expected a {typ.__name__}, got {type(value).__name__} {value!r}")
        if key in ("select", "ignore", "extend-select"):
            value = _check_codes(pyproject, key, value)
            if key == "extend-select":
                extend_select = value
                continue
        elif key == "per-file-ignores":
            checked = {}
            for pattern, codes in value.items():
                if isinstance(codes, str):
                    codes = [c for c in codes.replace(",", " ").split() if c]
                if not isinstance(codes, list):
                    raise ConfigError(f"{pyproject}: [tool.torchsync-lint] per-file-ignores.{pattern}: expected a list of codes")
                checked[pattern] = _check_codes(pyproject, f"per-file-ignores.{pattern}", codes)
            value = checked
        elif typ is list and not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{pyproject}: [tool.torchsync-lint] {key}: expected a list of strings")
        setattr(cfg, attr, value)
    if extend_select:
        cfg.select = (cfg.select or ["TSL"]) + extend_select
    return cfg
