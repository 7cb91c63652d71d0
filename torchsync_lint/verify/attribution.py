"""Join runtime sync events to static findings by file and position (pure Python, no torch).

A sync event carries the full Python stack at the moment torch reported it. The stack is walked
from the innermost frame outwards, past torch's own frames, the standard library and this package,
to the first frame in a file that was linted: that frame's line (and, on Python 3.11+, its column
range) is where the user's code asked for the sync. Frames in other third-party files are walked
out of too, so a sync inside a library helper lands on the user's line that called it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Frame:
    path: str  # real path
    line: int
    end_line: Optional[int] = None
    col: Optional[int] = None  # 0-based, as Python's code positions give them
    end_col: Optional[int] = None
    function: str = ""

    @classmethod
    def from_json(cls, raw: Sequence) -> "Frame":
        path, line = raw[0], raw[1]
        end_line = raw[2] if len(raw) > 2 else None
        col = raw[3] if len(raw) > 3 else None
        end_col = raw[4] if len(raw) > 4 else None
        func = raw[5] if len(raw) > 5 else ""
        return cls(norm(path), int(line or 0), end_line, col, end_col, func or "")


@dataclass
class Span:
    """Where a finding sits: its node, and the statement (or compound-statement header) around it."""

    path: str
    line: int
    col: int  # 0-based
    end_line: int
    end_col: int
    stmt_line: int
    stmt_end_line: int

    def contains_line(self, line: int) -> bool:
        return self.stmt_line <= line <= self.stmt_end_line


@dataclass
class Location:
    """The user-visible place of a sync: the frame attributed, and whether a linted file holds it."""

    frame: Optional[Frame]
    linted: bool


@dataclass
class SyncEvent:
    oracles: List[str]
    frames: List[Frame]  # innermost first
    op: str = ""
    count: int = 1
    stall_us: Optional[float] = None
    detail: str = ""

    @classmethod
    def from_json(cls, raw: dict) -> "SyncEvent":
        frames = [Frame.from_json(f) for f in raw.get("frames", [])]
        return cls(list(raw.get("oracles", [])), frames, raw.get("op", ""), int(raw.get("count", 1)),
                   raw.get("stall_us"), raw.get("detail", ""))


def norm(path: str) -> str:
    if not path or path.startswith("<"):
        return path or ""
    return os.path.realpath(path)


def is_library(path: str, library_roots: Iterable[str]) -> bool:
    """Frames of torch, the standard library, this package or synthetic code are not the user's."""
    if not path or path.startswith("<"):
        return True
    for root in library_roots:
        if root and (path == root or path.startswith(root.rstrip(os.sep) + os.sep)):
            return True
    return False


def locate(frames: Sequence[Frame], linted: Iterable[str], library_roots: Sequence[str]) -> Location:
    """The frame a sync is attributed to: innermost frame in a linted file, else innermost user frame."""
    linted = linted if isinstance(linted, (set, frozenset)) else set(linted)
    first_user: Optional[Frame] = None
    for fr in frames:
        if fr.path in linted:
            return Location(fr, True)
        if first_user is None and not is_library(fr.path, library_roots):
            first_user = fr
    return Location(first_user, False)


def _overlap(fr: Frame, span: Span) -> Tuple[int, int]:
    """(containment score, negative span size): larger is a better match of an instruction to a node."""
    if fr.col is None or fr.end_col is None or fr.end_line is None:
        return (0, 0)
    start, end = (fr.line, fr.col), (fr.end_line, fr.end_col)
    node_start, node_end = (span.line, span.col), (span.end_line, span.end_col)
    if node_start <= start and end <= node_end:
        score = 3  # the instruction lies inside the flagged node (`.item()` inside `int(x.item())`)
    elif start <= node_start and node_end <= end:
        score = 2  # the node lies inside the instruction (`assert` test containing the flagged call)
    elif start < node_end and node_start < end:
        score = 1
    else:
        score = 0
    size = (span.end_line - span.line) * 10_000 + (span.end_col - span.col)
    return (score, -size)


def match(fr: Frame, spans: Dict[int, Span]) -> Optional[int]:
    """The finding (key of ``spans``) whose statement holds the frame's line; the best by columns."""
    best, best_score = None, None
    for key, span in spans.items():
        if span.path != fr.path or not span.contains_line(fr.line):
            continue
        score = _overlap(fr, span) + (-abs(span.line - fr.line),)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


@dataclass
class Attribution:
    by_finding: Dict[int, List[SyncEvent]] = field(default_factory=dict)
    unflagged: Dict[Tuple[str, int], List[SyncEvent]] = field(default_factory=dict)
    unlocated: List[SyncEvent] = field(default_factory=list)


def attribute(events: Iterable[SyncEvent], spans: Dict[int, Span], linted: Iterable[str],
              library_roots: Sequence[str]) -> Attribution:
    """Split events into those of each finding, those on unflagged lines, and those with no user frame."""
    linted = set(linted) | {s.path for s in spans.values()}
    out = Attribution()
    for ev in events:
        loc = locate(ev.frames, linted, library_roots)
        if loc.frame is None:
            out.unlocated.append(ev)
            continue
        key = match(loc.frame, spans) if loc.linted else None
        if key is None:
            out.unflagged.setdefault((loc.frame.path, loc.frame.line), []).append(ev)
            continue
        out.by_finding.setdefault(key, []).append(ev)
    return out


def line_keys(span: Span) -> List[Tuple[str, int]]:
    return [(span.path, ln) for ln in range(span.stmt_line, span.stmt_end_line + 1)]
