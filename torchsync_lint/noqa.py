"""Suppression comments in flake8's grammar, plus a file-level switch.

``# noqa`` silences every code on its line; ``# noqa: TSL001,TSL2`` only codes starting with those
(flake8 matches by prefix). A line ``# torchsync-lint: noqa`` anywhere silences the whole file;
``# torchsync-lint: noqa: TSL1`` only those codes.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional

# flake8's inline regex (flake8/defaults.py), codes separated by commas and/or spaces
NOQA_INLINE = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][0-9]+(?:[,\s]+[A-Z]+[0-9]*)*|[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?",
    re.IGNORECASE,
)
NOQA_FILE = re.compile(r"#\s*torchsync-lint\s*:\s*noqa(?::\s?(?P<codes>[A-Z0-9,\s]+))?\s*$", re.IGNORECASE)
CODE_SEP = re.compile(r"[,\s]+")

ALL: FrozenSet[str] = frozenset({""})  # the empty prefix matches every code


def _codes(text: Optional[str]) -> FrozenSet[str]:
    if not text:
        return ALL
    return frozenset(c.upper() for c in CODE_SEP.split(text.strip()) if c)


class Suppressions:
    def __init__(self, source: str) -> None:
        self.lines: Dict[int, FrozenSet[str]] = {}
        self.file: FrozenSet[str] = frozenset()
        if "noqa" not in source and "NOQA" not in source.upper():
            return
        for lineno, line in enumerate(source.splitlines(), 1):
            if "#" not in line:
                continue
            m = NOQA_FILE.search(line)
            if m and line.lstrip().startswith("#"):
                self.file = self.file | _codes(m.group("codes"))
                continue
            m = NOQA_INLINE.search(line)
            if m:
                self.lines[lineno] = _codes(m.group("codes"))

    def suppressed(self, code: str, line: int) -> bool:
        if any(code.startswith(p) for p in self.file):
            return True
        codes = self.lines.get(line)
        return codes is not None and any(code.startswith(p) for p in codes)
