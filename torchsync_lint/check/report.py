"""The records of one file's check: the options it ran with and what it gives (``FileReport``)."""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from torchsync_lint.finding import FileError, Finding
from torchsync_lint.check.noqa import Suppressions
from torchsync_lint.inference.callgraph import FileSummary
from torchsync_lint.inference.values import Value


@dataclass
class FileReport:
    """What checking one file gives (picklable, for worker processes)."""

    path: str
    findings: List[Finding] = field(default_factory=list)
    hot_only: Dict[str, bool] = field(default_factory=dict)  # code -> rule.hot_only
    cold_only: Dict[str, bool] = field(default_factory=dict)  # code -> True for a rule.cold_only
    cold: List[bool] = field(default_factory=list)  # per finding: in known-cold code
    loop_hot: List[bool] = field(default_factory=list)  # per finding: inside a training loop
    frequency: List[str] = field(default_factory=list)  # per finding: inference.frequency class
    summary: Optional[FileSummary] = None
    error: Optional[FileError] = None
    note: Optional[str] = None
    noqa: Optional[Suppressions] = None
    # what other files may ask of this one (``inference.interface``), and what this one asked
    # of others without an answer yet: references met by the rules, functions whose parameters
    # only their callers in other files can tell
    interface: Optional[dict] = None
    refs: Set[tuple] = field(default_factory=set)
    open_params: Set[str] = field(default_factory=set)
    # checked with a growing project (import order, ``project_pass.first_pass``): what each
    # reference resolved to then
    ref_values: Dict[tuple, Value] = field(default_factory=dict)
    # where the tree run's cache keeps this report (``run.cached_check``), for its project index
    cache_key: Optional[str] = None



@dataclass
class Options:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    hot_functions: Tuple[str, ...] = ()
    cold_functions: Tuple[str, ...] = ()


# what a file that could not be checked reports (the CLI, the flake8 plugin, the language server)
RECURSION_ERROR = "too deeply nested to analyse (recursion limit)"


def internal_error(exc: BaseException) -> str:
    """One line for a bug of ours met while checking a file: the exception and where it was raised."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"internal error, please report: {type(exc).__name__}: {exc}{where}"
