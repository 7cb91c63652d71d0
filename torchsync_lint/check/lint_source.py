"""``lint_source``: the public one-file API (tests, docs, the flake8 plugin, the guard)."""

from __future__ import annotations

import os
from typing import List, Optional

from torchsync_lint.check.classify import classify
from torchsync_lint.check.report import Options
from torchsync_lint.check.suppress import suppress
from torchsync_lint.config import Config
from torchsync_lint.finding import FileError, Finding
from torchsync_lint.inference.callgraph import CallGraph


class SourceError(SyntaxError):
    """``lint_source``'s answer for a file it cannot check; ``error`` is what the CLI reports."""

    def __init__(self, error: FileError) -> None:
        super().__init__(str(error))
        self.error = error


def lint_source(source: str, path: str = "<string>", config: Optional[Config] = None, *,
                module_name: Optional[str] = None, inline_noqa: bool = True, project=None,
                stored: bool = True) -> List[Finding]:
    """Lint one file's text: on its own (tests, docs), or with ``project`` (an
    ``run.ondemand.OnDemand``: the flake8 plugin) for other files' values and hot paths; the
    project may answer with the report a whole run stored for the same text (``stored_report``).

    ``inline_noqa=False`` keeps findings silenced by a line's ``# noqa`` (flake8 filters those
    itself); the file-level ``# torchsync-lint: noqa`` still applies.

    ``stored=False`` always checks the text (the project still gives other files' values): a
    stored report comes from the cache folder, which anyone who can write the project can craft,
    so what a fix writes must never come from it (``adopt.fixes.fresh_fixes``).
    """
    config = config or Config()
    options = Options(tuple(config.select), tuple(config.ignore), tuple(config.hot_functions),
                      tuple(config.cold_functions))
    report = None
    if project is not None:
        project.use(options)  # its project index for these options, if the cache holds one
        if stored:
            report = project.stored_report(source, path)  # the whole run's answer, if nothing changed
    if report is None:
        # the parser, the index and the rules load with the first file that must be checked: a
        # stored answer needs none of them (the flake8 plugin on an unchanged project)
        from torchsync_lint.check.file import check_source, deep_stack

        args = (source, path, options, module_name or os.path.splitext(os.path.basename(path))[0],
                project.project if project is not None else None)
        try:
            report = check_source(*args)
        except RecursionError:
            report = deep_stack(check_source, *args)
    if report.error is not None:
        raise SourceError(report.error)
    if project is not None:
        graph = project.call_graph(report.summary, path, config.hot_functions)
    else:
        graph = CallGraph([report.summary] if report.summary else [], config.hot_functions)
    findings = classify([report], graph, config.include_cold, hot_tests=config.hot_tests)
    noqa = report.noqa if report.noqa is None or inline_noqa else report.noqa.file_only()
    return sorted(suppress(findings, {path: noqa} if noqa else {}, config), key=Finding.sort_key)
