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
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from flake8.defaults import NOQA_INLINE_REGEXP

from torchsync_lint.finding import Finding

# flake8's own regular expression (a dependency): a line is silenced here exactly when flake8 would
NOQA_INLINE = NOQA_INLINE_REGEXP
NOQA_FILE = re.compile(r"#\s*torchsync-lint\s*:\s*noqa(?::\s?(?P<codes>[A-Z0-9,\s]+))?\s*$", re.IGNORECASE)
CODE_SEP = re.compile(r"[,\s]+")

ALL: FrozenSet[str] = frozenset({""})  # the empty prefix matches every code


def _codes(text: Optional[str], upper: bool = True) -> FrozenSet[str]:
    if not text:
        return ALL
    return frozenset(c.upper() if upper else c for c in CODE_SEP.split(text.strip()) if c)


def logical_lines(source: str, lines: List[str]) -> Iterator[Tuple[int, int]]:
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
        for first, last in logical_lines(source, lines):
            joined = "".join(lines[first - 1:last])
            if "#" not in joined:
                continue
            m = NOQA_INLINE.search(joined)
            if m:
                codes = _codes(m.group("codes"), upper=False)  # as flake8: "tsl001" is no TSL001
                for lineno in range(first, last + 1):
                    self.lines[lineno] = codes

    def to_data(self) -> dict:
        """Plain data (the report cache keeps it: the table follows from the source alone)."""
        return {"file": sorted(self.file), "lines": [[n, sorted(c)] for n, c in sorted(self.lines.items())]}

    @classmethod
    def from_data(cls, d: dict) -> "Suppressions":
        out = cls("")
        out.file = frozenset(d["file"])
        out.lines = {int(n): frozenset(c) for n, c in d["lines"]}
        return out

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


# -- codes of our own about noqa comments ---------------------------------------------------


@dataclass(frozen=True)
class MetaRule:
    """A code reported about the comments rather than the code (not a rule of the walk)."""

    code: str
    name: str
    message: str
    page: str  # its documentation, under docs/
    default_enabled: bool = True
    hot_only: bool = False


UNUSED_NOQA = MetaRule("TSL901", "unused-noqa",
                       "`# noqa` names a TSL code that silences nothing on this line, or no rule at all",
                       "suppression.md#unused-noqa-codes-tsl901")
META_RULES = (UNUSED_NOQA,)


def comments_by_line(source: str) -> Dict[int, Tuple[int, str]]:
    """line -> (0-based column, text) of each real comment (not ``# noqa`` inside a string)."""
    out: Dict[int, Tuple[int, str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = (tok.start[1], tok.string)
    except (tokenize.TokenError, SyntaxError):
        return {}  # a file that does not tokenize: no comment is trusted as a directive
    return out


def _noqa_units(source: str) -> Iterator[Tuple[int, int, int, int, re.Match]]:
    """(first, last, line, column of the comment, match in it) per logical unit with an inline noqa."""
    comments = comments_by_line(source)
    if not comments:
        return
    lines = io.StringIO(source).readlines()
    for first, last in logical_lines(source, lines):
        for lineno in range(first, last + 1):
            col, text = comments.get(lineno, (0, ""))
            m = NOQA_INLINE.search(text) if text else None
            if m:
                yield first, last, lineno, col, m
                break


def unused_noqa(path: str, source: str, findings: Sequence, known: Sequence[str],
                enabled: Optional[Iterable[str]] = None) -> List[Finding]:
    """TSL901 findings for the ``# noqa: TSL...`` codes in ``source`` that match no finding of
    ``findings`` (this file's findings before noqa filtering) on their line, or no code in ``known``.
    Bare ``# noqa`` and other tools' codes are left alone: they may serve another linter; so are
    codes of rules this run does not check (``enabled``), whose findings it could not see."""
    enabled = None if enabled is None else tuple(enabled)
    out: List[Finding] = []
    for first, last, lineno, offset, m in _noqa_units(source):
        codes = [c for c in CODE_SEP.split((m.group("codes") or "").strip()) if c.upper().startswith("TSL")]
        lines_here = [f for f in findings if first <= f.line <= last]
        for code in codes:
            if not any(k.startswith(code) for k in known):
                why = f"unknown code {code} in `# noqa`: no rule has it"
            elif enabled is not None and not any(e.startswith(code) for e in enabled):
                continue
            elif UNUSED_NOQA.code.startswith(code):
                continue  # it may be there to silence this very report
            elif not any(f.code.startswith(code) for f in lines_here):
                why = f"unused `# noqa` code {code}: nothing on this line to silence"
            else:
                continue
            out.append(Finding(path, lineno, offset + m.start() + 1, lineno, offset + m.end() + 1,
                               UNUSED_NOQA.code, UNUSED_NOQA.name, why))
    return out
