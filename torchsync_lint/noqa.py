"""Suppression comments in flake8's grammar, plus a file-level switch.

``# noqa`` silences every code on its line; ``# noqa: TSL001,TSL2`` only codes starting with those
(flake8 matches by prefix, case-sensitively). The comment is read exactly as flake8 reads it, so a
line is silenced for ``torchsync-lint`` when and only when it is for ``flake8 --select TSL``.
A line ``# torchsync-lint: noqa`` anywhere silences the whole file; ``# torchsync-lint: noqa: TSL1``
only those codes.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

# flake8's own NOQA_INLINE_REGEXP (flake8/defaults.py, 6.x and 7.x); tests compare the two
NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(r"#\s*torchsync-lint\s*:\s*noqa(?::\s?(?P<codes>[A-Z0-9,\s]+))?\s*$", re.IGNORECASE)
CODE_SEP = re.compile(r"[,\s]+")

ALL: FrozenSet[str] = frozenset({""})  # the empty prefix matches every code


def _codes(text: Optional[str], upper: bool = True) -> FrozenSet[str]:
    if not text:
        return ALL
    return frozenset(c.upper() if upper else c for c in CODE_SEP.split(text.strip()) if c)


def _logical_lines(source: str, lines: List[str]) -> Iterator[Tuple[int, int]]:
    """(first, last) physical line of each logical line, as flake8 groups them for noqa: a comment
    anywhere in a statement over several lines (or after a triple-quoted string) covers all of it.
    Physical lines alone if the file does not tokenize, as flake8 falls back too."""
    try:
        first, last = len(lines) + 2, -1
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            first, last = min(first, tok.start[0]), max(last, tok.end[0])
            if tok.type in (tokenize.NL, tokenize.NEWLINE):
                yield first, last
                first, last = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError):
        for lineno in range(1, len(lines) + 1):
            yield lineno, lineno


class Suppressions:
    def __init__(self, source: str) -> None:
        self.lines: Dict[int, FrozenSet[str]] = {}
        self.file: FrozenSet[str] = frozenset()
        if "noqa" not in source.lower():
            return
        lines = io.StringIO(source).readlines()
        for line in lines:
            m = NOQA_FILE.search(line)
            if m and line.lstrip().startswith("#"):
                self.file = self.file | _codes(m.group("codes"))
        for first, last in _logical_lines(source, lines):
            joined = "".join(lines[first - 1:last])
            if "#" not in joined:
                continue
            m = NOQA_INLINE.search(joined)
            if m:
                codes = _codes(m.group("codes"), upper=False)  # as flake8: "tsl001" is no TSL001
                for lineno in range(first, last + 1):
                    self.lines[lineno] = codes

    def file_only(self) -> "Suppressions":
        """The file-level switch alone (for flake8, which applies line comments itself)."""
        out = Suppressions("")
        out.file = self.file
        return out

    def suppressed(self, code: str, line: int) -> bool:
        if any(code.startswith(p) for p in self.file):
            return True
        codes = self.lines.get(line)
        return codes is not None and any(code.startswith(p) for p in codes)
