"""The records a lint run produces: findings, the fixes they carry (as data: ``adopt.fixes`` applies
them), and per-file errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

SAFE, UNSAFE = "safe", "unsafe"
# Stands in a fix's text for the indentation of the enclosing block (continuation lines of a
# bracketed expression), which a rule does not know; resolved against the file's text.
INDENT = "\x00"


@dataclass(frozen=True)
class Hoist:
    """A constant tensor to build once, in ``__init__``, as a non-persistent buffer."""

    expression: str  # the constant, made on the CPU (the buffer moves with the module's .to())
    init_params: str = ""  # what a new ``__init__`` takes and passes on ("" or "*args, **kwargs")


@dataclass(frozen=True)
class Fix:
    applicability: str  # SAFE or UNSAFE
    message: str  # what the fix does, one line
    original: str  # the reported node's text, as the rule saw it
    replacement: str  # its new text (with a hoist: ignored, the buffer's ``self.<name>`` is used)
    imports: Tuple[str, ...] = ()  # modules the new text names (``torch``): imported when missing
    hoist: Optional[Hoist] = None

    def to_json(self) -> dict:
        out = {"applicability": self.applicability, "message": self.message,
               "replacement": self.replacement.replace(INDENT, "")}
        if self.hoist is not None:
            out["hoist"] = {"expression": self.hoist.expression.replace(INDENT, "")}
        return out


@dataclass
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based, as flake8 and editors show it
    end_line: int
    end_col: int
    code: str
    name: str
    message: str
    # Where the finding sits, for hot-path filtering once every file is indexed.
    function: Optional[str] = None  # qualified key of the enclosing function
    temperature: str = "unknown"  # "hot", "cold" or "unknown"
    # how often it runs: "every-step", "periodic", "error-path", "once" or "test" (frequency.py)
    frequency: str = "every-step"
    verify: Optional[Dict[str, Any]] = None
    fix: Optional[Fix] = None  # what --fix would change here (``adopt.fixes`` applies it)
    fingerprint: Optional[str] = None  # stable across line shifts (see baseline.py)

    def sort_key(self):
        return (self.path, self.line, self.col, self.code)

    def to_json(self) -> Dict[str, Any]:
        out = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "function": self.function,
            "temperature": self.temperature,
            "frequency": self.frequency,
        }
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        if self.verify is not None:
            out["verify"] = self.verify
        if self.fix is not None:
            out["fix"] = self.fix.to_json()
        return out


@dataclass
class FileError:
    """A file that could not be read or parsed; the run goes on without it."""

    path: str
    message: str
    line: Optional[int] = None
    col: Optional[int] = None

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: error: {self.message}"


@dataclass
class LintResult:
    findings: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    files_checked: int = 0
    # Set by the engine when it has them (the CLI works without): every finding before line
    # ``# noqa`` filtering (for unused-noqa, TSL901), and findings hidden by temperature/frequency.
    unsuppressed: Optional[list] = None
    hidden: Optional[list] = None
    # module -> interface data of the files the run checked, where it derived them (not a run the
    # project index answered): ``--verify`` reads its snippets' values with the whole project
    interfaces: Optional[dict] = None
