"""What the language server asks of the linter, in one place and without the LSP: the settings for
a file, its findings (with the project around it), one finding's fix, a ``# noqa`` comment, and a
rule's documentation. Texts in, texts out; the protocol lives in ``server.lsp``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from torchsync_lint import Config, Finding, SourceError, lint_source
from torchsync_lint.adopt.add_noqa import add_noqa
from torchsync_lint.adopt.fixes import apply_fixes, fix_source, fresh_fixes, wanted
from torchsync_lint.check.report import Options
from torchsync_lint.check.noqa import META_RULES, UNUSED_NOQA, Suppressions, unused_noqa
from torchsync_lint.check.source import module_name_for
from torchsync_lint.cli.docgen import meta_markdown, rule_markdown
from torchsync_lint.config import ConfigError
from torchsync_lint.finding import FileError
from torchsync_lint.rules.registry import rule_by_key
from torchsync_lint.run.ondemand import OnDemand, package_top, project_root
from torchsync_lint.check.suppress import per_file_codes
from torchsync_lint.run.settings import code_enabled, find_pyproject, load, rule_defaults

FILE_ERROR = "TSL000"  # as the flake8 plugin names a file it could not check


@dataclass
class Checked:
    """One buffer's findings (noqa applied, TSL901 added), or the error that stopped the check."""

    findings: List[Finding] = field(default_factory=list)
    error: Optional[FileError] = None
    config_error: Optional[str] = None


class Projects:
    """The project index around each file: other files' interfaces (values, hot paths), from the
    cache or the files on disk. Unlike the flake8 plugin (one process per run), the server lives
    long, so it loads every file's interface when it first meets a root (computing at most
    ``ondemand.MAX_ON_DEMAND`` that the cache lacks, then cached for later): callers in every file
    are known, as in a whole-tree CLI run. A save under a root drops that root's index, so the
    next check sees the saved file."""

    def __init__(self) -> None:
        self._by_root: Dict[str, Optional[OnDemand]] = {}
        self._warmed: Dict[str, Options] = {}  # root -> the options its interfaces were all loaded for

    @staticmethod
    def root_of(path: str) -> Optional[str]:
        return project_root(path) or package_top(path)

    def for_file(self, path: str, config: Config) -> Optional[OnDemand]:
        if not os.path.isabs(path) or not os.path.isdir(os.path.dirname(path)):
            return None  # an untitled buffer: checked on its own
        root = self.root_of(path)
        if root is None:
            return None
        if root not in self._by_root:
            cache_dir = config.cache_path()
            usable = cache_dir if cache_dir and (os.path.isdir(cache_dir) or os.access(root, os.W_OK)) else None
            try:
                self._by_root[root] = OnDemand(root, usable)
            except (OSError, RecursionError):
                self._by_root[root] = None
        project = self._by_root[root]
        if project is None:
            return None
        options = Options(tuple(config.select), tuple(config.ignore), tuple(config.hot_functions),
                          tuple(config.cold_functions))
        if self._warmed.get(root) != options:  # every caller known (see the class's note)
            project.current = None
            try:
                project.use(options)  # the module map: the project index, or a walk of the tree
                for module in list(project.paths):
                    project.project.module(module)
            except (OSError, RecursionError):
                pass
            self._warmed[root] = options
        project.current = os.path.abspath(path)
        return project

    def saved(self, path: str) -> None:
        root = self.root_of(path)
        if root is not None:
            self._by_root.pop(root, None)
            self._warmed.pop(root, None)


def config_for(path: str) -> Tuple[Config, Optional[str]]:
    """The settings the CLI would use for ``path`` (nearest ``[tool.torchsync-lint]``), and the
    configuration error, if any (then the defaults are used)."""
    start = path if os.path.isabs(path) else os.getcwd()
    try:
        return load(find_pyproject(start)), None
    except ConfigError as exc:
        return load(None), str(exc)


def check(text: str, path: str, projects: Optional[Projects] = None) -> Checked:
    """Lint one buffer as the CLI lints the file: per-file-ignores, ``# noqa``, TSL901."""
    config, config_error = config_for(path)
    out = Checked(config_error=config_error)
    project = projects.for_file(path, config) if projects is not None else None
    module = module_name_for(path)[0] if os.path.isabs(path) else os.path.splitext(os.path.basename(path))[0]
    try:
        before = lint_source(text, path, config, module_name=module, inline_noqa=False, project=project)
    except SourceError as exc:
        out.error = exc.error
        return out
    except RecursionError:
        out.error = FileError(path, "too deeply nested to analyse (recursion limit)")
        return out
    sup = Suppressions(text)
    out.findings = [f for f in before if not sup.suppressed(f.code, f.line)]
    if code_enabled(config, UNUSED_NOQA.code) and "noqa" in text.lower():
        ignored = tuple(per_file_codes(config, path))
        for f in unused_noqa(path, text, before, list(rule_defaults()), config.enabled):
            if ignored and f.code.startswith(ignored):
                continue
            if any(UNUSED_NOQA.code.startswith(p) for p in sup.file):
                continue
            out.findings.append(f)
    out.findings.sort(key=Finding.sort_key)
    return out


def refixed(text: str, path: str, findings: List[Finding], projects: Optional[Projects] = None) -> List[Finding]:
    """The findings of ``findings`` that have a fix, each with the fix its rule computes from
    ``text`` now. The findings a check publishes may come from the report a whole run stored in
    the cache folder, which anyone who can write the project can craft: what an edit writes is
    computed from the buffer alone (``adopt.fixes.fresh_fixes``), as for ``--fix``."""
    chosen = [f for f in findings if f.fix is not None]
    if not chosen:
        return []
    config, _ = config_for(path)
    project = projects.for_file(path, config) if projects is not None else None
    return fresh_fixes(text, path, chosen, config, project)


def fix_one(text: str, finding: Finding) -> Optional[str]:
    """``text`` with this finding's fix (safe or unsafe) applied, or None when it cannot be;
    ``finding`` is one of ``refixed``'s."""
    if finding.fix is None:
        return None
    new, counts = apply_fixes(text, [finding], unsafe=True)
    if not counts or new == text:
        return None
    try:
        compile(new, "<fix>", "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return None
    return new


def fix_all(text: str, path: str, findings: List[Finding], projects: Optional[Projects] = None) -> Optional[str]:
    """Every safe fix, passes repeated as ``--fix`` does (each computed from the text it
    rewrites); None when nothing changes."""
    config, _ = config_for(path)
    chosen = [f for f in findings if wanted(f.fix, unsafe=False)]
    if not chosen:
        return None
    project = projects.for_file(path, config) if projects is not None else None
    new, counts, error = fix_source(text, path, chosen, config, unsafe=False, project=project)
    return None if error is not None or not counts or new == text else new


def with_noqa(text: str, finding: Finding) -> Optional[str]:
    """``text`` with ``# noqa: CODE`` for this finding (merged into the line's noqa comment)."""
    if finding.code in {r.code for r in META_RULES}:
        return None
    new, written = add_noqa(text, {finding.line: [finding.code]})
    return new if written else None


def rule_doc(code: str) -> Optional[str]:
    """The rule's page, as ``--explain`` prints it (markdown), or None."""
    for meta in META_RULES:
        if meta.code == code:
            return meta_markdown(meta)
    try:
        rule = rule_by_key(code)
    except KeyError:
        return None
    body = rule_markdown(rule)
    return "\n".join(line for line in body.splitlines() if not line.startswith("<!--")).strip() + "\n"
