"""Autofix, with Ruff's contract: ``--fix`` applies safe fixes, ``--unsafe-fixes`` also unsafe ones,
``--diff`` prints a unified diff and writes nothing.

A rule that can rewrite a finding passes a ``Fix`` when it reports: the new text for the reported
node's range (computed from LibCST nodes, so comments and formatting inside the node survive), and
optionally a constant to hoist into ``__init__`` as a buffer, and the modules the new text names.
Fixes are plain data (picklable for worker processes and the report cache, JSON for consumers).
Applying them replaces the text at the findings' positions (Ruff's edits): each edit first checks
that the source still holds the text the rule saw there, overlapping edits wait for the next pass;
what a fix adds elsewhere goes in through LibCST (buffers into ``__init__`` by a transformer,
imports by ``AddImportsVisitor``), and the result must parse. Passes repeat (re-linting the new text) until nothing changes, at most ``MAX_PASSES``.
"""

from __future__ import annotations

import difflib
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, replace
from io import BytesIO
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchsync_lint.check.lint_source import lint_source
from torchsync_lint.check.source import decode, module_name_for
from torchsync_lint.finding import INDENT, SAFE, Fix

MAX_PASSES = 4


# -- spans -----------------------------------------------------------------------------------
def _line_starts(source: str) -> List[int]:
    starts = [0]
    for m in re.finditer("\n", source):
        starts.append(m.end())
    return starts


def _offset(starts: List[int], line: int, col: int) -> int:
    """Offset of a 1-based line and 1-based column."""
    return starts[line - 1] + col - 1


@dataclass
class _Edit:
    start: int
    end: int
    text: str
    code: str
    applicability: str


def _indent_of(source: str, starts: List[int], line: int) -> str:
    text = source[starts[line - 1]:]
    return text[: len(text) - len(text.lstrip(" \t"))]


def _newline(source: str) -> str:
    return "\r\n" if "\r\n" in source else "\n"


def _newlines(text: str, nl: str) -> str:
    """A fix's text (written with ``\\n``) in the file's line endings."""
    return re.sub(r"(?<!\r)\n", nl, text) if nl != "\n" else text


def _block_indent(template: str, source: str, starts: List[int], line: int, start: int, end: int) -> Optional[str]:
    """The indentation that turns ``template`` into the file's text at ``start:end`` (the
    leading whitespace of the line the statement starts on), or None when it matches nowhere."""
    text = source[start:end]
    if "\r\n" in source:
        template = template.replace("\n", "\r\n")
    if INDENT not in template:
        return "" if template == text else None
    for k in range(line, max(0, line - 200), -1):
        indent = _indent_of(source, starts, k)
        if template.replace(INDENT, indent) == text:
            return indent
    return None


# -- hoisting constants into __init__ --------------------------------------------------------
class _Classes(cst.CSTVisitor):
    """Class definitions, each with its path (the names of the definitions around it and how
    many of the same path came before), and its positions."""

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self) -> None:
        self.found: List[Tuple[cst.ClassDef, object, tuple]] = []
        self._paths = _Paths()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.found.append((node, self.get_metadata(cst.metadata.PositionProvider, node), self._paths.enter(node)))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._paths.leave()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._paths.enter(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._paths.leave()


class _Paths:
    """Names a definition by where it sits, the same way in the source and in the fixed text
    (fixes rewrite expressions, never definitions)."""

    def __init__(self) -> None:
        self.stack: List[str] = []
        self.seen: Counter = Counter()

    def enter(self, node) -> tuple:
        self.stack.append(node.name.value)
        path = tuple(self.stack)
        self.seen[path] += 1
        return path + (self.seen[path],)

    def leave(self) -> None:
        self.stack.pop()


class _InsertBuffers(cst.CSTTransformer):
    """Puts the planned ``self.register_buffer(...)`` lines into each class's ``__init__``: after
    its ``super().__init__(...)`` line, or in a new ``__init__`` at the top of the class (after
    its docstring)."""

    def __init__(self, pending: Dict[tuple, list]) -> None:
        super().__init__()
        self.pending = pending
        self._paths = _Paths()
        self._current: List[tuple] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._current.append(self._paths.enter(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._paths.enter(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._paths.leave()
        return updated

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._paths.leave()
        plan = self.pending.get(self._current.pop())
        if plan is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        init_params, lines = plan
        added = [cst.parse_statement(line) for line in lines]
        body = list(updated.body.body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__" \
                    and isinstance(stmt.body, cst.IndentedBlock):
                inner = list(stmt.body.body)
                at = next(j for j, s in enumerate(inner) if _is_super_init(s)) + 1
                inner[at:at] = added
                body[i] = stmt.with_changes(body=stmt.body.with_changes(body=inner))
                return updated.with_changes(body=updated.body.with_changes(body=body))
        args = f"self, {init_params}" if init_params else "self"
        init = cst.parse_statement(f"def __init__({args}):\n    super().__init__({init_params})\n")
        init = init.with_changes(body=init.body.with_changes(body=list(init.body.body) + added))
        if body and _is_docstring(body[0]):
            body.insert(1, init.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        else:
            if body:
                body[0] = body[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)] + list(body[0].leading_lines))
            body.insert(0, init)
        return updated.with_changes(body=updated.body.with_changes(body=body))


def _is_super_init(stmt: cst.CSTNode) -> bool:
    """``super().__init__(...)``, ``super(C, self).__init__(...)`` or ``Base.__init__(self, ...)``."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            f = small.value.func
            if isinstance(f, cst.Attribute) and f.attr.value == "__init__":
                return True
    return False


class _Placer:
    """Which buffers go in each class (one new ``__init__`` per class at most), with unique
    names; ``insert`` puts them there with LibCST once the fixes' edits are made."""

    def __init__(self, source: str) -> None:
        wrapper = cst.metadata.MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        visitor = _Classes()
        wrapper.visit(visitor)
        self.classes = visitor.found
        self.used: Dict[int, set] = {}
        self.pending: Dict[tuple, list] = {}  # class path -> [init params, buffer lines]

    def innermost_class(self, line: int) -> Optional[Tuple[cst.ClassDef, tuple]]:
        best = None
        for node, rng, path in self.classes:
            if rng.start.line <= line <= rng.end.line and (best is None or rng.start.line >= best[1].start.line):
                best = (node, rng, path)
        return (best[0], best[2]) if best else None

    def buffer_name(self, cls: cst.ClassDef, hint: str) -> str:
        taken = self.used.setdefault(id(cls), set())
        text = cst.Module([]).code_for_node(cls)
        base = f"{hint}_const" if hint else "const_tensor"
        name, n = base, 1
        while name in taken or re.search(rf"\b{re.escape(name)}\b", text):
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        return name

    def place(self, cls: cst.ClassDef, path: tuple, init_params: str, line_text: str) -> bool:
        """Plan ``line_text`` in ``cls.__init__``. False if impossible: an ``__init__`` without a
        ``super().__init__`` line (registering a buffer before ``Module.__init__`` raises)."""
        if path in self.pending:
            self.pending[path][1].append(line_text)
            return True
        body = cls.body
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            return False
        for stmt in body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                block = stmt.body
                if not (isinstance(block, cst.IndentedBlock) and any(_is_super_init(s) for s in block.body)):
                    return False
        self.pending[path] = [init_params, [line_text]]
        return True

    def insert(self, source: str) -> str:
        """``source`` (the text after the fixes' edits) with the planned buffers in place."""
        return cst.parse_module(source).visit(_InsertBuffers(self.pending)).code


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


_ASSIGNED = re.compile(r"(?:^|[\s(,])([A-Za-z_]\w*)\s*=\s*$")


def _name_hint(source: str, start: int) -> str:
    """``w`` when the replaced text follows ``w = `` or ``w=`` on its line."""
    line_start = source.rfind("\n", 0, start) + 1
    m = _ASSIGNED.search(source[line_start:start])
    return m.group(1).lstrip("_") if m else ""


# -- imports -------------------------------------------------------------------------------
def _with_imports(source: str, modules: Sequence[str]) -> str:
    """``source`` with ``import module`` for each module it lacks, placed by LibCST's own codemod
    helper (``AddImportsVisitor``: after the module's leading imports, past the docstring and
    ``from __future__``; nothing when a plain ``import module`` is there). A source that does not
    parse comes back as it is (the caller's parse check then refuses the fix)."""
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return source
    # LibCST's codemod package costs more to import than the rest of a warm run: only for a fix
    # that adds an import
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for name in modules:
        AddImportsVisitor.add_needed_import(context, name)
    return AddImportsVisitor(context).transform_module(module).code


# -- one file --------------------------------------------------------------------------------
def wanted(fix: Optional[Fix], unsafe: bool) -> bool:
    return fix is not None and (fix.applicability == SAFE or unsafe)


def apply_fixes(source: str, findings: Sequence, unsafe: bool) -> Tuple[str, Counter]:
    """One pass: the source with the wanted fixes of ``findings`` applied, and fixes per code.
    A fix whose range overlaps one already taken, or whose text changed, waits for the next pass."""
    starts = _line_starts(source)
    nl = _newline(source)
    replaced: List[Tuple[int, int, str]] = []
    counts: Counter = Counter()
    imports = set()
    placer: Optional[_Placer] = None
    last_end = -1
    for f in sorted(findings, key=lambda f: (f.line, f.col)):
        fix = f.fix
        if not wanted(fix, unsafe) or f.end_line > len(starts):
            continue
        start, end = _offset(starts, f.line, f.col), _offset(starts, f.end_line, f.end_col)
        indent = _block_indent(fix.original, source, starts, f.line, start, end)
        if start < last_end or indent is None:
            continue  # overlaps a fix taken this pass, or the file changed since it was linted
        text = fix.replacement.replace(INDENT, indent)
        if fix.hoist is not None:
            placer = placer or _Placer(source)
            cls = placer.innermost_class(f.line)
            if cls is None:
                continue
            cls, path = cls
            name = placer.buffer_name(cls, _name_hint(source, start))
            # continuation lines relative to the statement: LibCST indents them with the block
            line = (f'self.register_buffer("{name}", {fix.hoist.expression.replace(INDENT, "")}, '
                    'persistent=False)\n')
            if not placer.place(cls, path, fix.hoist.init_params, line):
                continue
            text = f"self.{name}"
        replaced.append((start, end, _newlines(text, nl)))
        last_end = end
        counts[f.code] += 1
        imports.update(fix.imports)
    if not replaced:
        return source, counts
    pieces, pos = [], 0
    for start, end, text in sorted(replaced, key=lambda e: (e[0], e[1])):
        pieces.append(source[pos:start])
        pieces.append(text)
        pos = max(pos, end)
    pieces.append(source[pos:])
    out = "".join(pieces)
    if placer is not None and placer.pending:
        try:
            out = placer.insert(out)
        except (cst.ParserSyntaxError, ValueError, StopIteration):
            return source, Counter()  # the edits broke the text: nothing is applied
    return (_with_imports(out, sorted(imports)) if imports else out), counts


# -- files and the command line ----------------------------------------------------------------
@dataclass
class FileFix:
    path: str
    before: str
    after: str
    encoding: str
    counts: Counter
    error: Optional[str] = None


def _parses(source: str, path: str) -> Optional[str]:
    try:
        compile(source, path, "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
        cst.parse_module(source)
    except Exception as exc:  # SyntaxError, ParserSyntaxError, ValueError (null bytes)
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    return None


def finding_key(f) -> Tuple:
    """What names one finding in a report and in a check of the same text again."""
    return f.code, f.line, f.col, f.end_line, f.end_col


def fresh_fixes(source: str, path: str, findings: Sequence, config, project=None) -> List:
    """The findings of ``findings`` that checking ``source`` now reports too, each with the fix
    its rule computes from ``source``. A run's findings may come from the report cache, a folder
    anyone who can write the project can craft: the run chooses which findings to fix, the
    source alone what their fixes write. Every finding is reported here (``include_cold``; the
    run has already applied the settings and noqa comments), with the project's values when
    ``project`` (an ``OnDemand``) is given, but never with the report a whole run stored for the
    same text (``stored=False``: that too is read from the cache)."""
    wanted_keys = {finding_key(f) for f in findings}
    every = replace(config, include_cold=True)
    fresh = lint_source(source, path, every, module_name=module_name_for(path)[0], inline_noqa=False,
                        project=project, stored=False)
    return [f for f in fresh if finding_key(f) in wanted_keys]


def fix_source(source: str, path: str, findings: Sequence, config, unsafe: bool,
               project=None) -> Tuple[str, Counter, Optional[str]]:
    """Apply fixes to one file's text, re-linting and fixing again until nothing changes; every
    fix is computed from the text it rewrites (``fresh_fixes``), never taken from ``findings``.
    Returns the new text, fixes per code, and an error (then the text is the original)."""
    module_name = module_name_for(path)[0]
    out, counts = apply_fixes(source, fresh_fixes(source, path, findings, config, project), unsafe)
    for _ in range(MAX_PASSES - 1):
        if not counts:
            break
        problem = _parses(out, path)
        if problem is not None:
            return source, Counter(), f"fixes would break the file ({problem}); nothing changed"
        again = lint_source(out, path, config, module_name=module_name)
        newer, more = apply_fixes(out, again, unsafe)
        if not more:
            break
        out, counts = newer, counts + more
    problem = _parses(out, path) if counts else None
    if problem is not None:
        return source, Counter(), f"fixes would break the file ({problem}); nothing changed"
    return out, counts, None


def fix_file(path: str, findings: Sequence, config, unsafe: bool, project=None) -> FileFix:
    """Fix one file in memory (written by the caller, in the file's own encoding)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        encoding = tokenize.detect_encoding(BytesIO(data).readline)[0]
        source = decode(data, path)
    except (OSError, SyntaxError, ValueError) as exc:
        return FileFix(path, "", "", "utf-8", Counter(), f"cannot read the file to fix it: {exc}")
    try:
        after, counts, error = fix_source(source, path, findings, config, unsafe, project)
    except Exception as exc:  # a bug of ours must not lose the user's file or end the run
        error = f"internal error while fixing, please report: {type(exc).__name__}: {exc}"
        after, counts = source, Counter()
    return FileFix(path, source, after, encoding, counts, error)


def unified_diff(fixed: FileFix) -> str:
    return "".join(difflib.unified_diff(
        fixed.before.splitlines(keepends=True), fixed.after.splitlines(keepends=True),
        fromfile=fixed.path, tofile=fixed.path))


def _by_code(counts: Counter) -> str:
    return ", ".join(f"{code}: {n}" for code, n in sorted(counts.items()))


def summary(counts: Counter, hidden: Counter, dry_run: bool) -> str:
    total = sum(counts.values())
    verb = "Would fix" if dry_run else "Fixed"
    head = f"{verb} {total} finding{'s' if total != 1 else ''}" + (f" ({_by_code(counts)})" if total else "")
    if not total:
        head = "No fixes applied" if not dry_run else "No fixes to apply"
    n = sum(hidden.values())
    if n:
        head += f"; {n} unsafe fix{'es' if n != 1 else ''} available with --unsafe-fixes ({_by_code(hidden)})"
    return head + "."
