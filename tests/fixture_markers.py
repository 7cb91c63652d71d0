"""Inline expectations in fixture files, flake8-bugbear style.

``y = x.item()  # error: TSL001`` expects exactly TSL001 on that line (several codes: comma
separated). ``# ok`` marks a negative case: a line that must stay clean (any unmarked line must
stay clean too; ``# ok`` documents that the case is deliberate). A fixture may start with
``# config: include-cold`` or ``# config: hot-functions=a,b`` to lint with those settings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Set, Tuple

from torchsync_lint.config import Config

MARKER = re.compile(r"#\s*error:\s*(?P<codes>TSL\d{3}(?:\s*,\s*TSL\d{3})*)")
OK = re.compile(r"#\s*ok\b")
CONFIG = re.compile(r"^#\s*config:\s*(?P<body>.+)$")

FIXTURES = Path(__file__).parent / "fixtures"


def expected(source: str) -> Set[Tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        m = MARKER.search(line)
        if m:
            for code in m.group("codes").split(","):
                out.add((lineno, code.strip()))
    return out


def ok_lines(source: str) -> Set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if OK.search(line)}


def fixture_config(source: str) -> Config:
    cfg = Config(hot_tests=True)  # fixtures live under tests/, which is cold by default
    for line in source.splitlines()[:5]:
        m = CONFIG.match(line.strip())
        if not m:
            continue
        for item in m.group("body").split(";"):
            key, _, value = item.strip().partition("=")
            if key == "include-cold":
                cfg.include_cold = True
            elif key == "hot-functions":
                cfg.hot_functions = [v.strip() for v in value.split(",") if v.strip()]
            elif key == "cold-functions":
                cfg.cold_functions = [v.strip() for v in value.split(",") if v.strip()]
            elif key == "select":
                cfg.select = [v.strip() for v in value.split(",") if v.strip()]
    return cfg


def fixture_files() -> Dict[str, Path]:
    return {p.name: p for p in sorted(FIXTURES.glob("*.py"))}
