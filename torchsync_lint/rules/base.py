"""Base class of every rule.

A rule is a class in ``torchsync_lint/rules/`` with a ``code``, a kebab-case ``name``, a one-line
``message`` and a docstring in the sections of ``DOC_SECTIONS``. It defines ``visit_<Node>`` or
``leave_<Node>`` methods for the LibCST node types it inspects; the engine calls all rules from one
traversal. Rules never guess what is a tensor: they ask ``self.ctx`` (see ``inference.context``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Optional

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from torchsync_lint.inference.context import FileContext

DOC_SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix safety",
    "Known problems",
    "Verify",
    "References",
)


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    message: ClassVar[str] = ""
    # Syncs that only cost something when repeated every step (host->device copies, explicit
    # synchronize) are reported in hot code only; always-blocking ops also in code of unknown
    # temperature. See docs/index.md, "Hot paths".
    hot_only: ClassVar[bool] = False
    # A copy made once per object (a model moved to the GPU at set-up) is a no-op when the same
    # line runs again every step: reported outside hot code only, so shown with --include-cold.
    cold_only: ClassVar[bool] = False
    # Opinionated rules are off unless selected explicitly (flake8-bugbear's B9 habit).
    default_enabled: ClassVar[bool] = True

    def __init__(self, ctx: "FileContext") -> None:
        self.ctx = ctx

    # "safe" or "unsafe" for a rule with a ``fix`` method (see torchsync_lint/adopt/fixes.py), else None.
    fix_applicability: ClassVar[Optional[str]] = None

    def report(self, node: cst.CSTNode, message: Optional[str] = None, fix=None) -> None:
        """``fix``: a ``torchsync_lint.adopt.fixes.Fix`` for this finding, when the rule can rewrite it."""
        self.ctx.report(self, node, message or self.message, fix=fix)
