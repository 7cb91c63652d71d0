"""``--add-noqa``'s edit: write ``# noqa: CODE`` comments into a file's text."""

from __future__ import annotations

import io
from typing import Dict, Iterable, List, Tuple

from torchsync_lint.check.noqa import CODE_SEP, NOQA_INLINE, logical_lines
from torchsync_lint.check.noqa import comments_by_line as noqa_comments


def add_noqa(source: str, lines_codes: Dict[int, Iterable[str]]) -> Tuple[str, int]:
    """``source`` with ``# noqa: CODE`` added for each (line -> codes); merged into an existing noqa
    comment of the line's logical unit, or appended to its last physical line (a comment cannot
    follow a line inside a string or a backslash continuation). Returns (new source, comments
    written). Codes a comment already covers are skipped, so a second run changes nothing."""
    lines = io.StringIO(source).readlines()
    comments = noqa_comments(source)  # real comments only: never text inside a string
    unit_of: Dict[int, Tuple[int, int]] = {}
    for first, last in logical_lines(source, lines):
        for n in range(first, last + 1):
            unit_of.setdefault(n, (first, last))
    wanted: Dict[int, List[str]] = {}
    for line, codes in lines_codes.items():
        first, last = unit_of.get(line, (line, line))
        target = last
        for n in range(first, last + 1):  # an existing comment in the unit takes the codes
            if n in comments and NOQA_INLINE.search(comments[n][1]):
                target = n
                break
        for code in codes:
            if code not in wanted.setdefault(target, []):
                wanted[target].append(code)
    written = 0
    for target, codes in sorted(wanted.items()):
        if target > len(lines):
            continue
        text = lines[target - 1]
        body = text.rstrip("\r\n")
        newline = text[len(body):]
        offset, comment_text = comments.get(target, (len(body), ""))
        m = NOQA_INLINE.search(body, offset) if comment_text else None
        if m and not m.group("codes"):
            continue  # a bare # noqa already silences everything
        have = [c for c in CODE_SEP.split((m.group("codes") or "").strip()) if c] if m else []
        new = [c for c in codes if not any(c.startswith(h) for h in have)]
        if not new:
            continue
        if m:
            comment = "# noqa: " + ", ".join(have + new)
            body = body[:m.start()] + comment + (" " if body[m.end():m.end() + 1] not in ("", " ") else "") + body[m.end():]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(new)
        lines[target - 1] = body + newline
        written += 1
    return "".join(lines), written
