"""Check one file: parse once, index, run every rule in one walk, position what was found.

Never raises for bad input: unreadable, undecodable, unparsable or too-deep files come back as a
report with an error. Knows nothing of caches, workers or other files' reports (``run/``); other
files' values arrive through ``project`` (``inference.project``).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Dict, Optional

import libcst as cst

from torchsync_lint.check import gc_pause, parse_guard
from torchsync_lint.check.noqa import Suppressions
from torchsync_lint.check.positions import positions
from torchsync_lint.check.report import RECURSION_ERROR, FileReport, Options, internal_error  # noqa: F401
from torchsync_lint.check.source import PREFILTER, decode, module_name_for, pre_parse_error, python_syntax_error
from torchsync_lint.check.walker import RuleWalker, places
from torchsync_lint.finding import FileError, Finding
from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.hotness import summarise
from torchsync_lint.inference.index import FileIndex
from torchsync_lint.inference.interface import extract as extract_interface
from torchsync_lint.rules.registry import select_rules
from torchsync_lint.syntax import walk
from torchsync_lint.syntax.parse import parse_module


def _index(module: cst.Module, path: str, module_name: Optional[str]) -> FileIndex:
    """The file's index (imports, functions, calls), named as the CLI names the module."""
    if module_name is None:
        module_name, is_package = module_name_for(path)
    else:
        is_package = os.path.basename(path) == "__init__.py"
    index = FileIndex(module_name, is_package)
    walk.visit(module, index)
    return index


@gc_pause.per_file
def check_source(source: str, path: str, options: Options, module_name: Optional[str] = None,
                 project=None, want_interface: bool = False, ordered: bool = False, trees=None) -> FileReport:
    """Parse and check one file's text. Never raises for bad input: errors come back in the report.

    Without ``project`` the file is checked on its own and its interface is extracted (what it
    cannot see stays a reference, listed in ``report.refs``); with one (``inference.project``),
    references to other files are resolved while the rules run (and, with ``want_interface``,
    the interface is extracted again with what the project told). ``ordered``: the project
    holds only the files checked before this one (import order): the rules use it and record
    what each reference resolved to; the interface is extracted as without a project.
    ``trees``: where a run keeps parsed modules between its checks of a file (``run.kept``):
    ``trees.taken(path, source)`` gives the tree of that very text, its index and a memo of its
    checks, or None; ``trees.offer(path, source, module, report, index)`` is told of each tree
    parsed here (LibCST trees are immutable; the index is a function of the tree and the module's
    name) and gives the memo where it keeps them (then the index is not released here). The
    memo holds what follows from the text and tree alone: the ``# noqa`` table, the positions
    of a list of reported nodes (``_where``).
    """
    report = FileReport(path)
    held = trees.taken(path, source) if trees is not None else None
    if held is None:
        # a kept tree was parsed from this very text at this path: it passed this test then
        report.error = pre_parse_error(source, path)
        if report.error is not None:
            return report
    if (project is None or ordered) and not any(word in source for word in PREFILTER):
        # checked again with the project (callers pass it tensors), a file is never skipped
        if "import" in source or "def " in source:
            # no rule can fire here, but other files may import its names, helpers and re-exports
            interface_only(source, path, module_name, report, guarded=True)
        return report
    try:
        module = held[0] if held is not None else parse_module(source)
    except cst.ParserSyntaxError as exc:
        # Only on failure: a second parse by CPython for a message that names the real line.
        report.error = python_syntax_error(source, path) or FileError(
            path, f"LibCST cannot parse this file: {exc.message}", exc.raw_line, exc.raw_column + 1)
        return report
    except Exception as exc:  # LibCST raises a few other types on exotic input
        report.error = FileError(path, f"cannot parse: {type(exc).__name__}: {exc}")
        return report
    index = _kept_index(held, module_name)
    owned = index is None  # built here: released here unless ``trees`` keeps it
    if index is None:
        index = _index(module, path, module_name)
    report.summary = summarise(index)
    rules_classes = select_rules(options.select, options.ignore)
    evaluator = Evaluator(index, frozenset(options.hot_functions), project=project)
    if ordered and project is not None:
        evaluator.recorded = {}
    ctx = FileContext(index, evaluator, frozenset(options.cold_functions))
    rules = [r(ctx) for r in rules_classes]
    report.hot_only = {r.code: r.hot_only or r.cold_only for r in rules_classes}
    report.cold_only = {r.code: True for r in rules_classes if r.cold_only}
    walker = RuleWalker(ctx, rules)
    statements = walker.run(module)
    walker.visits = walker.leaves = {}  # they hold its own bound methods: a cycle holding the tree
    if project is None:
        report.refs = set(evaluator.refs)
        report.open_params = set(evaluator.open_params)
    elif evaluator.recorded is not None:
        report.refs = set(evaluator.recorded)
        report.ref_values = dict(evaluator.recorded)
        own = Evaluator(index, frozenset(options.hot_functions))  # the interface keeps its references symbolic
        report.interface = extract_interface(index, own, report.summary)
        report.open_params = set(evaluator.open_params) | own.open_params
    if project is None or want_interface:
        report.interface = extract_interface(index, evaluator, report.summary)
    memo = held[2] if held is not None else None
    if trees is not None:
        offered = trees.offer(path, source, module, report, index if owned else None)
        if offered is not None:
            owned, memo = False, offered
    if not ctx.findings:
        if owned:
            index.release()
        return report
    report.noqa = _suppressions(source, memo)
    where = _where(module, source, index, ctx.findings, statements, memo)
    if owned:
        index.release()
    seen = set()
    for raw in ctx.findings:
        rng = where.get(raw.node)
        if rng is None:
            continue
        key = (raw.rule.code, rng.start.line, rng.start.column)
        if key in seen:
            continue  # one finding per rule and place, even if two visits reached it
        seen.add(key)
        report.findings.append(
            Finding(path, rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1,
                    raw.rule.code, raw.rule.name, raw.message, raw.function, fix=raw.fix)
        )
        report.cold.append(raw.cold)
        report.loop_hot.append(raw.hot)
        report.frequency.append(raw.frequency)
    ctx.findings.clear()  # each holds its rule, which holds ctx: a cycle holding the tree (gc_pause)
    return report


def _suppressions(source: str, memo: Optional[dict]) -> Suppressions:
    """``Suppressions(source)``, made once per kept text (it reads the text alone)."""
    if memo is None:
        return Suppressions(source)
    got = memo.get("noqa")
    if got is None:
        got = memo["noqa"] = Suppressions(source)
    return got


def _where(module: cst.Module, source: str, index: FileIndex, findings, statements, memo: Optional[dict]):
    """The positions of the reported nodes; with a kept tree's ``memo``, made once per list of
    (node, function) reported: they follow from those, the tree and its text alone (``places``
    reads the index and the walk's top-level statements, both fixed by the tree)."""
    key = ("positions", tuple((id(f.node), f.function) for f in findings))
    if memo is not None:
        got = memo.get(key)
        if got is not None:
            return got
    where = positions(module, (f.node for f in findings), source, places(module, index, findings, statements))
    if memo is not None:
        memo[key] = where
    return where


def _kept_index(held, module_name: Optional[str]) -> Optional[FileIndex]:
    """The index kept with a tree (``run.kept``), where it names the module as ``_index`` would
    here (kept ones are built with the name the path gives)."""
    if held is None or module_name is not None:
        return None
    return held[1]


@gc_pause.per_file
def project_interface(source: str, path: str, options: Options, project, trees=None) -> Optional[dict]:
    """The interface ``check_source(..., project=project, want_interface=True)`` extracts, without
    the rule walk: for a file whose findings the project pass knows are unchanged
    (``run.second_pass``). None where the file cannot be parsed."""
    held = trees.taken(path, source) if trees is not None else None
    try:
        module = held[0] if held is not None else parse_module(source)
    except Exception:
        return None
    index = _kept_index(held, None)
    owned = index is None
    if index is None:
        index = _index(module, path, None)
    evaluator = Evaluator(index, frozenset(options.hot_functions), project=project)
    interface = extract_interface(index, evaluator, summarise(index))
    if owned:
        index.release()
    return interface


@gc_pause.per_file
def interface_only(source: str, path: str, module_name: Optional[str], report: FileReport,
                   guarded: bool = False) -> None:
    if not guarded and parse_guard.refusal(source) is not None:
        return  # too costly for LibCST; check_source reports it
    try:
        module = parse_module(source)
    except Exception:
        return  # the prefilter path reports syntax errors through CPython's parser
    index = _index(module, path, module_name)
    report.summary = summarise(index)  # hot paths run through files that never name torch too
    evaluator = Evaluator(index)
    report.interface = extract_interface(index, evaluator, report.summary)
    report.open_params = set(evaluator.open_params)  # callers elsewhere may pass it tensors: checked then
    index.release()


_DEEP_STACK_BYTES = 512 * 1024 * 1024  # address space; only the pages a deep walk touches are used
_DEEP_RECURSION = 60_000


def deep_stack(fn, *args):
    """``fn(*args)`` on a thread with a large stack and a high recursion limit (restored after)."""
    out: Dict[str, object] = {}

    def target() -> None:
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # handed to the caller's thread
            out["error"] = exc

    old_size = threading.stack_size()
    old_limit = sys.getrecursionlimit()
    try:
        threading.stack_size(_DEEP_STACK_BYTES)
        sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION))
        t = threading.Thread(target=target, name="torchsync-lint-deep")
        t.start()
        t.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]


def check_data(data: bytes, path: str, options: Options, project=None, want_interface: bool = False,
                ordered: bool = False, trees=None) -> FileReport:
    try:
        source = decode(data, path)
    except ValueError as exc:
        return FileReport(path, error=FileError(path, str(exc)))
    if not source.strip():
        return FileReport(path, note="empty file, nothing to check")
    try:
        try:
            report = check_source(source, path, options, project=project, want_interface=want_interface,
                                  ordered=ordered, trees=trees)
        except RecursionError:
            # valid code can nest deeper than the default stack allows (a chain of 400 functions
            # each returning the next): once more on a thread with a deep stack
            report = deep_stack(check_source, source, path, options, None, project, want_interface, ordered,
                                trees)
        if report.summary is None and report.error is None:
            # the prefilter skipped it unparsed: still report a broken file (cheap C parser)
            report.error = python_syntax_error(source, path)
        return report
    except RecursionError:
        return FileReport(path, error=FileError(path, RECURSION_ERROR))
    except Exception as exc:  # a bug of ours must not end the whole run with a traceback
        return FileReport(path, error=FileError(path, internal_error(exc)))


def crashed(path: str, *_args) -> FileReport:
    """The report for a file whose check killed its worker process (``workers.pool_map``)."""
    return FileReport(path, error=FileError(path, "internal error, please report: the process checking this file "
                                                  "died (a crash in native code, such as LibCST's parser)"))
