"""Temperature and frequency labels of findings, and which ones a report shows."""

from __future__ import annotations

import os
from typing import Iterable, List, Optional

from torchsync_lint.check.report import FileReport
from torchsync_lint.finding import Finding
from torchsync_lint.inference.callgraph import CallGraph
from torchsync_lint.inference.labels import EVERY_STEP, NOT_HOT, ONCE, TEST, combine, settle


def is_test_file(path: str) -> bool:
    """``tests/`` and ``test/`` folders, ``test_*.py``, ``*_test.py`` and ``conftest.py``."""
    parts = os.path.normpath(path).split(os.sep)
    name = parts[-1]
    return (any(p in ("tests", "test") for p in parts[:-1]) or name.startswith("test_")
            or name.endswith("_test.py") or name == "conftest.py")


def classify(findings_reports: Iterable[FileReport], graph: CallGraph, include_cold: bool,
             hidden: Optional[List[Finding]] = None, hot_tests: bool = False) -> List[Finding]:
    """Label every finding with its temperature and frequency class; return those the report
    shows (every-step code that is hot or of unknown temperature; everything with
    ``include_cold``). Findings left out go to ``hidden`` when given."""
    out: List[Finding] = []
    for rep in findings_reports:
        test_file = not hot_tests and is_test_file(rep.path)
        freqs = rep.frequency or [EVERY_STEP] * len(rep.findings)
        for finding, cold, loop_hot, freq in zip(rep.findings, rep.cold, rep.loop_hot, freqs):
            hot_function = graph.is_hot(finding.function)
            if loop_hot or hot_function:
                finding.temperature = "hot"
            elif cold:
                finding.temperature = "cold"
            else:
                finding.temperature = "unknown"
            if finding.temperature == "hot" and rep.cold_only.get(finding.code, False):
                continue  # a once-per-object copy, a no-op where the line runs every step
            freq = settle(freq, hot_function)
            if test_file:
                freq = TEST
            elif finding.temperature == "cold":
                freq = combine(ONCE, freq)
            elif finding.temperature == "unknown" and graph.runs_once(finding.function):
                freq = combine(graph.runs_once(finding.function), freq)
            if freq == EVERY_STEP and finding.temperature != "hot" and rep.hot_only.get(finding.code, False):
                freq = NOT_HOT  # a hot-only rule outside hot code: labelled where --include-cold shows it
            finding.frequency = freq
            shown = freq == EVERY_STEP
            if shown or include_cold:
                out.append(finding)
            elif hidden is not None:
                hidden.append(finding)
    return out

