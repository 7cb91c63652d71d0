"""Stacks in the verifier's child: which frames are the user's, and a stack as plain data.

A sync is attributed to the user's file and line by walking the stack from the innermost frame
outwards, past torch, the standard library and the verifier (``Roots``); ``capture_stack`` keeps
each frame's path, line and the column range of its running instruction, for the parent.
"""

from __future__ import annotations

import os
from typing import List, Tuple

from torchsync_lint.guard.events import Roots as GuardRoots


class Roots(GuardRoots):
    """Which frames are not the user's: torch, the standard library, this package (the guard's
    rule), and every synthetic file name (``<string>``: code the harness compiled)."""

    def __init__(self, torch) -> None:
        super().__init__(os.path.dirname(os.path.realpath(torch.__file__)))

    def resolve(self, filename: str) -> Tuple[str, bool]:
        if not filename or filename.startswith("<"):
            return filename, True
        return super().resolve(filename)


def capture_stack(frame, roots: Roots, limit: int = 200) -> List[list]:
    """[path, line, end_line, col, end_col, function, is_library], innermost first."""
    out = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        path, lib = roots.resolve(code.co_filename)
        line = frame.f_lineno
        end_line = col = end_col = None
        if not lib:
            try:
                idx = frame.f_lasti // 2
                for i, pos in enumerate(code.co_positions()):
                    if i == idx:
                        if pos[0] == line:
                            end_line, col, end_col = pos[1], pos[2], pos[3]
                        break
            except (AttributeError, ValueError):
                pass
        out.append([path, line, end_line, col, end_col, code.co_name, lib])
        frame = frame.f_back
    return out
