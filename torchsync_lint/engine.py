"""Lint files: read, prefilter, parse once, index, run every rule in one walk, then filter.

Per file: one ``libcst.parse_module``, one indexing walk (imports, functions, calls), one rule walk
(all rules batched, flow-sensitive inference), and positions only for the nodes reported. Files
are checked in parallel; hot paths are resolved across all files of the run afterwards.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
import tokenize
import traceback
import warnings
from dataclasses import dataclass, field
from io import BytesIO
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchsync_lint import gc_pause, parse_guard, report_data, walk
from torchsync_lint.cache import ReportCache
from torchsync_lint.cache import key as cache_key
from torchsync_lint.config import Config
from torchsync_lint.files import iter_python_files as select_files
from torchsync_lint.files import special
from torchsync_lint.finding import FileError, Finding, LintResult
from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.hotness import CallGraph, FileSummary, summarise
from torchsync_lint.inference.frequency import EVERY_STEP, ONCE, TEST, combine
from torchsync_lint.inference.index import FileIndex, FunctionInfo
from torchsync_lint.inference.interface import extract as extract_interface
from torchsync_lint.inference.values import Value
from torchsync_lint.noqa import Suppressions
from torchsync_lint.positions import positions
from torchsync_lint.registry import select_rules

# A file that mentions none of these cannot hold a tensor we could infer.
PREFILTER = ("torch", "Tensor", "tensor", "cuda", "forward", ".item(")
COMP_NODES = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass
class FileReport:
    """What checking one file gives (picklable, for worker processes)."""

    path: str
    findings: List[Finding] = field(default_factory=list)
    hot_only: Dict[str, bool] = field(default_factory=dict)  # code -> rule.hot_only
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


def module_name_for(path: str) -> Tuple[str, bool]:
    """Dotted module name from the package folders (those with ``__init__.py``) above ``path``."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, name = os.path.split(directory)
        parts.append(name)
        if not name:
            break
    return ".".join(reversed(parts)), is_package


def decode(data: bytes, path: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        raise ValueError(f"cannot decode file ({reason}); save it as UTF-8 or declare its encoding") from None


def python_syntax_error(source: str, path: str) -> Optional[FileError]:
    """CPython's own verdict on a file (clearer messages and positions than LibCST's), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. are not our business
            compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return FileError(path, f"syntax error: {exc.msg}", exc.lineno, exc.offset)
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return FileError(path, f"cannot parse: {exc}")
    return None


def pre_parse_error(source: str, path: str) -> Optional[FileError]:
    """The error for a file LibCST must not parse: null bytes (CPython, so flake8 too, rejects
    them; LibCST reads on), or one it would take minutes on or crash on (``parse_guard``)."""
    nul = source.find("\x00")
    if nul >= 0:
        return FileError(path, "syntax error: source code cannot contain null bytes", source.count("\n", 0, nul) + 1,
                         nul - source.rfind("\n", 0, nul))
    refused = parse_guard.refusal(source)
    if refused is None:
        return None
    if refused.syntax_first:
        error = python_syntax_error(source, path)
        if error is not None or not refused.why:
            return error
    return FileError(path, f"file skipped: {refused.why}", refused.line)


class RuleWalker(cst.CSTVisitor):
    """Calls every rule's visit_/leave_ methods from one traversal and keeps the context current.

    Callbacks are looked up per node type once (``walk.Walker``): the context's bookkeeping
    runs before the rules' visits and after their leaves. ``run(module)`` is the fast walk;
    ``module.visit(walker)`` gives the same calls through LibCST.
    """

    def __init__(self, ctx: FileContext, rules: Sequence) -> None:
        self.ctx = ctx
        freq = ctx.frequency
        pre: Dict[str, List[Callable]] = {
            "FunctionDef": [ctx.enter_function, lambda _node: freq.enter_function()],
            "If": [ctx.enter_orelse, ctx.enter_if, freq.enter_if],
            "Else": [ctx.enter_orelse],
            "IndentedBlock": [freq.enter_block],
            "SimpleStatementSuite": [freq.enter_block],
            "ExceptHandler": [freq.enter_handler],
            "ExceptStarHandler": [freq.enter_handler],
            "Assert": [freq.enter_assert],
            "With": [ctx.enter_with],
            "Assign": [self._assign_stores],
            "AugAssign": [self._target_store],
            "AnnAssign": [self._target_store],
            "For": [self._enter_for],
            "While": [ctx.enter_loop],
        }
        for comp in COMP_NODES:
            pre[comp.__name__] = [self._bind_comps]
        post: Dict[str, List[Callable]] = {
            "Assign": [self._bind_assign],
            "AnnAssign": [self._bind_annassign],
            "NamedExpr": [self._bind_named],
            "AugAssign": [self._bind_augassign],
            "FunctionDef": [ctx.leave_function, lambda _node: freq.leave_function()],
            "IndentedBlock": [freq.leave_block],
            "SimpleStatementSuite": [freq.leave_block],
            "With": [ctx.leave_with],
            "If": [ctx.leave_if],
            "Assert": [ctx.leave_assert],
            "For": [ctx.leave_loop],
            "While": [ctx.leave_loop],
        }
        tables = [walk.callbacks(rule) for rule in rules]
        self.visits = walk.merge([pre] + [v for v, _ in tables])
        self.leaves = walk.merge([lv for _, lv in tables] + [post])

    def run(self, module: cst.Module) -> Dict[int, cst.CSTNode]:
        """Walk the module; return id(reported node) -> the top-level statement holding it."""
        findings = self.ctx.findings
        statements: Dict[int, cst.CSTNode] = {}
        done = 0

        def after_statement(stmt: cst.CSTNode) -> None:
            nonlocal done
            for raw in findings[done:]:
                statements[id(raw.node)] = stmt
            done = len(findings)

        walk.Walker(self.visits, self.leaves).walk_module(module, after_statement)
        return statements

    def on_visit(self, node: cst.CSTNode) -> bool:
        for fn in self.visits.get(type(node).__name__, ()):
            fn(node)
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        for fn in self.leaves.get(type(node).__name__, ()):
            fn(node)

    # -- the context's bookkeeping -----------------------------------------------------------
    def _assign_stores(self, node: cst.Assign) -> None:
        self.ctx.mark_stores([t.target for t in node.targets])

    def _target_store(self, node) -> None:
        self.ctx.mark_stores([node.target])

    def _enter_for(self, node: cst.For) -> None:
        self.ctx.bind_for(node)
        self.ctx.enter_loop(node)

    def _bind_comps(self, node) -> None:
        comp = node.for_in
        while comp is not None:  # the element is visited before its for-clauses
            self.ctx.bind_comp(comp)
            comp = comp.inner_for_in

    def _bind_assign(self, node: cst.Assign) -> None:
        ctx = self.ctx
        value = ctx.value(node.value)
        for t in node.targets:
            ctx.bind(t.target, value)

    def _bind_annassign(self, node: cst.AnnAssign) -> None:
        ctx = self.ctx
        ctx.bind(node.target, ctx.evaluator.annotated(node.annotation.annotation, node.value, ctx.scope))

    def _bind_augassign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, (cst.Name, cst.Attribute)):
            self.ctx.bind(node.target, self.ctx.value(self.ctx.evaluator.index.augmented[id(node)]))

    def _bind_named(self, node: cst.NamedExpr) -> None:
        self.ctx.bind(node.target, self.ctx.value(node.value))


def _function_place(module: cst.Module, info: FunctionInfo) -> Optional[Tuple[cst.CSTNode, str]]:
    """A function's def statement and the indentation of the blocks around it, when it sits
    directly in the bodies of its enclosing functions and classes, up to the module."""
    indents: List[str] = []
    node, scope = info.node, info.parent or info.cls
    while scope is not None:
        body = scope.node.body
        if type(body) is not cst.IndentedBlock or not any(s is node for s in body.body):
            return None  # e.g. a def under an `if`: its indentation is not known from here
        indents.append(module.default_indent if body.indent is None else body.indent)
        node = scope.node
        if isinstance(scope, FunctionInfo):
            scope = scope.parent or scope.cls
        else:
            scope = None  # a class: only top-level ones (classes do not record where they sit)
    if not any(s is node for s in module.body):
        return None
    return info.node, "".join(reversed(indents))


def _places(module: cst.Module, index: FileIndex, findings, statements: Dict[int, cst.CSTNode]):
    """For each reported node, the statements to generate for its position, innermost first."""
    memo: Dict[str, Optional[Tuple[cst.CSTNode, str]]] = {}
    places = {}
    for raw in findings:
        candidates = []
        if raw.function is not None:
            if raw.function not in memo:
                info = index.functions.get(raw.function)
                memo[raw.function] = _function_place(module, info) if info is not None else None
            if memo[raw.function] is not None:
                candidates.append(memo[raw.function])
        stmt = statements.get(id(raw.node))
        if stmt is not None:
            candidates.append((stmt, ""))
        places[id(raw.node)] = candidates
    return places


@dataclass
class Options:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    hot_functions: Tuple[str, ...] = ()
    cold_functions: Tuple[str, ...] = ()


@gc_pause.per_file
def check_source(source: str, path: str, options: Options, module_name: Optional[str] = None,
                 project=None, want_interface: bool = False, ordered: bool = False) -> FileReport:
    """Parse and check one file's text. Never raises for bad input: errors come back in the report.

    Without ``project`` the file is checked on its own and its interface is extracted (what it
    cannot see stays a reference, listed in ``report.refs``); with one (``inference.project``),
    references to other files are resolved while the rules run (and, with ``want_interface``,
    the interface is extracted again with what the project told). ``ordered``: the project
    holds only the files checked before this one (import order): the rules use it and record
    what each reference resolved to; the interface is extracted as without a project.
    """
    report = FileReport(path)
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
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        # Only on failure: a second parse by CPython for a message that names the real line.
        report.error = python_syntax_error(source, path) or FileError(
            path, f"LibCST cannot parse this file: {exc.message}", exc.raw_line, exc.raw_column + 1)
        return report
    except Exception as exc:  # LibCST raises a few other types on exotic input
        report.error = FileError(path, f"cannot parse: {type(exc).__name__}: {exc}")
        return report
    if module_name is None:
        module_name, is_package = module_name_for(path)
    else:
        is_package = os.path.basename(path) == "__init__.py"
    index = FileIndex(module_name, is_package)
    walk.visit(module, index)
    report.summary = summarise(index)
    rules_classes = select_rules(options.select, options.ignore)
    evaluator = Evaluator(index, frozenset(options.hot_functions), project=project)
    if ordered and project is not None:
        evaluator.recorded = {}
    ctx = FileContext(index, evaluator, frozenset(options.cold_functions))
    rules = [r(ctx) for r in rules_classes]
    report.hot_only = {r.code: r.hot_only for r in rules_classes}
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
    if not ctx.findings:
        index.release()
        return report
    report.noqa = Suppressions(source)
    where = positions(module, (f.node for f in ctx.findings), source, _places(module, index, ctx.findings, statements))
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


@gc_pause.per_file
def interface_only(source: str, path: str, module_name: Optional[str], report: FileReport,
                   guarded: bool = False) -> None:
    if not guarded and parse_guard.refusal(source) is not None:
        return  # too costly for LibCST; check_source reports it
    try:
        module = cst.parse_module(source)
    except Exception:
        return  # the prefilter path reports syntax errors through CPython's parser
    if module_name is None:
        module_name, is_package = module_name_for(path)
    else:
        is_package = os.path.basename(path) == "__init__.py"
    index = FileIndex(module_name, is_package)
    walk.visit(module, index)
    report.summary = summarise(index)  # hot paths run through files that never name torch too
    evaluator = Evaluator(index)
    report.interface = extract_interface(index, evaluator, report.summary)
    report.open_params = set(evaluator.open_params)  # callers elsewhere may pass it tensors: checked then
    index.release()


def check_file(path: str, options: Options, cache_dir: Optional[str] = None, project=None,
               want_interface: bool = False, project_digest: str = "", ordered: bool = False) -> FileReport:
    """Check one file; with ``cache_dir``, reuse the report of a run on the same bytes, path,
    package, options and linter code (see ``cache``); checked with a project, also the same
    interfaces of every file (``project_digest``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return FileReport(path, error=FileError(path, f"cannot read: {exc.strerror or exc}"))
    if cache_dir is None:
        return _check_data(data, path, options, project, want_interface, ordered)
    store = ReportCache(cache_dir)
    k = cache_key(data, path, module_name_for(path)[0], (options, project_digest, want_interface, ordered))
    report = _from_cache(store, k, data, path)
    if report is not None:
        return report
    report = _check_data(data, path, options, project, want_interface, ordered)
    if report.error is None or report.error.message.startswith("syntax error"):
        store.put(k, report_data.to_json(report))  # never keep an internal error: the next run may be fixed
    return report


def cached_report(path: str, options: Options, cache_dir: str, project_digest: str = "", want_interface: bool = False,
                  ordered: bool = False) -> Optional[FileReport]:
    """The report ``check_file`` would return from the cache, or None when it would check the file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    k = cache_key(data, path, module_name_for(path)[0], (options, project_digest, want_interface, ordered))
    return _from_cache(ReportCache(cache_dir), k, data, path)


def _from_cache(store: ReportCache, k: str, data: bytes, path: str) -> Optional[FileReport]:
    hit = store.get(k)
    if hit is None:
        return None
    try:
        report = report_data.from_json(hit, FileReport)
        if report.findings:
            report.noqa = Suppressions(decode(data, path))
        return report
    except Exception:  # a corrupt entry: check the file again and overwrite it
        return None


RECURSION_ERROR = "too deeply nested to analyse (recursion limit)"
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


def _check_data(data: bytes, path: str, options: Options, project=None, want_interface: bool = False,
                ordered: bool = False) -> FileReport:
    try:
        source = decode(data, path)
    except ValueError as exc:
        return FileReport(path, error=FileError(path, str(exc)))
    if not source.strip():
        return FileReport(path, note="empty file, nothing to check")
    try:
        try:
            report = check_source(source, path, options, project=project, want_interface=want_interface,
                                  ordered=ordered)
        except RecursionError:
            # valid code can nest deeper than the default stack allows (a chain of 400 functions
            # each returning the next): once more on a thread with a deep stack
            report = deep_stack(check_source, source, path, options, None, project, want_interface, ordered)
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


def internal_error(exc: BaseException) -> str:
    """One line for a bug of ours met while checking a file: the exception and where it was raised."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"internal error, please report: {type(exc).__name__}: {exc}{where}"


def iter_python_files(paths: Iterable[str], config: Config) -> Iterator[Tuple[str, bool]]:
    """(path, given explicitly) for every .py file under ``paths``; missing paths come back as is.
    Excludes, .gitignore and --force-exclude: see ``files``."""
    return select_files(paths, config)


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
            if loop_hot or graph.is_hot(finding.function):
                finding.temperature = "hot"
            elif cold:
                finding.temperature = "cold"
            else:
                finding.temperature = "unknown"
            if test_file:
                freq = TEST
            elif finding.temperature == "cold":
                freq = combine(ONCE, freq)
            finding.frequency = freq
            shown = freq == EVERY_STEP and (
                finding.temperature == "hot" or not rep.hot_only.get(finding.code, False))
            if shown or include_cold:
                out.append(finding)
            elif hidden is not None:
                hidden.append(finding)
    return out


def _suppress(findings: List[Finding], sources: Dict[str, Suppressions], config: Config) -> List[Finding]:
    kept = []
    for f in findings:
        sup = sources.get(f.path)
        if sup is not None and sup.suppressed(f.code, f.line):
            continue
        ignored = config.ignored_for(f.path)
        if ignored and any(f.code.startswith(p) for p in ignored):
            continue
        kept.append(f)
    return kept


def lint_paths(paths: Sequence[str], config: Config, jobs: Optional[int] = None,
               on_note: Optional[Callable[[str], None]] = None, cache_dir: Optional[str] = None) -> LintResult:
    """Lint files and folders. ``cache_dir`` (or ``config.cache_dir``) keeps per-file reports
    between runs; None checks every file."""
    result = LintResult()
    cache_dir = cache_dir or getattr(config, "cache_dir", None)
    options = Options(tuple(config.select), tuple(config.ignore), tuple(config.hot_functions),
                      tuple(config.cold_functions))
    files: List[str] = []
    for path, explicit in iter_python_files(paths, config):
        if explicit and not os.path.exists(path):
            result.errors.append(FileError(path, "no such file or directory"))
            continue
        if explicit and special(path):
            result.errors.append(FileError(path, "not a regular file (a pipe, socket or device)"))
            continue
        files.append(path)
    files = list(dict.fromkeys(files))
    jobs = jobs or os.cpu_count() or 1
    from torchsync_lint.project_pass import first_pass, project_pass, store_interfaces  # they import this module

    reports = first_pass(files, options, jobs, cache_dir)
    reports = project_pass(reports, options, jobs, cache_dir)
    if cache_dir is not None:
        store_interfaces(reports, cache_dir)
    result.files_checked = len(files)
    graph = CallGraph((r.summary for r in reports if r.summary is not None), config.hot_functions)
    for r in reports:
        if r.error is not None:
            result.errors.append(r.error)
        if r.note and on_note is not None and r.path in paths:
            on_note(f"{r.path}: note: {r.note}")
    hidden: List[Finding] = []
    findings = classify(reports, graph, config.include_cold, hidden, config.hot_tests)
    result.unsuppressed = findings + hidden  # before `# noqa`: which noqa comments are used (TSL901)
    sources = {r.path: r.noqa for r in reports if r.noqa is not None}
    result.hidden = _suppress(hidden, sources, config)
    result.findings = sorted(_suppress(findings, sources, config), key=Finding.sort_key)
    return result


class SourceError(SyntaxError):
    """``lint_source``'s answer for a file it cannot check; ``error`` is what the CLI reports."""

    def __init__(self, error: FileError) -> None:
        super().__init__(str(error))
        self.error = error


def lint_source(source: str, path: str = "<string>", config: Optional[Config] = None, *,
                module_name: Optional[str] = None, inline_noqa: bool = True, project=None) -> List[Finding]:
    """Lint one file's text: on its own (tests, docs), or with ``project`` (an
    ``inference.ondemand.OnDemand``: the flake8 plugin) for other files' values and hot paths.

    ``inline_noqa=False`` keeps findings silenced by a line's ``# noqa`` (flake8 filters those
    itself); the file-level ``# torchsync-lint: noqa`` still applies.
    """
    config = config or Config()
    options = Options(tuple(config.select), tuple(config.ignore), tuple(config.hot_functions),
                      tuple(config.cold_functions))
    args = (source, path, options, module_name or os.path.splitext(os.path.basename(path))[0],
            project.project if project is not None else None)
    try:
        report = check_source(*args)
    except RecursionError:
        report = deep_stack(check_source, *args)
    if report.error is not None:
        raise SourceError(report.error)
    summaries = [report.summary] if report.summary else []
    if project is not None:
        own = report.summary.module if report.summary else None
        summaries += [s for s in project.summaries() if s.module != own]
    graph = CallGraph(summaries, config.hot_functions)
    findings = classify([report], graph, config.include_cold, hot_tests=config.hot_tests)
    noqa = report.noqa if report.noqa is None or inline_noqa else report.noqa.file_only()
    return sorted(_suppress(findings, {path: noqa} if noqa else {}, config), key=Finding.sort_key)
