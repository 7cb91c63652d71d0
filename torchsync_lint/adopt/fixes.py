"""Autofix, with Ruff's contract: ``--fix`` applies safe fixes, ``--unsafe-fixes`` also unsafe ones,
``--diff`` prints a unified diff and writes nothing.

A rule that can rewrite a finding passes a ``Fix`` when it reports: the new text for the reported
node's range (computed from LibCST nodes, so comments and formatting inside the node survive), and
optionally a constant to hoist into ``__init__`` as a buffer, and the modules the new text names.
Fixes are plain data (picklable for worker processes and the report cache, JSON for consumers).
Applying them replaces the text at the findings' positions (Ruff's edits): each edit first checks
that the source still holds the text the rule saw there, overlapping edits wait for the next pass;
what a fix adds elsewhere goes in as LibCST nodes, through LibCST's codemod machinery (buffers
into ``__init__`` by ``adopt.buffers.AddBuffersVisitor``, imports by ``AddImportsVisitor``), and
the result must parse. Passes repeat (re-linting the new text) until nothing changes, at most
``MAX_PASSES``.
"""

from __future__ import annotations

import difflib
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, replace
from io import BytesIO
from typing import List, Optional, Sequence, Tuple

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


# -- what a fix adds elsewhere: buffers, imports --------------------------------------------
def _add_buffers_and_imports(source: str, placer, modules: Sequence[str]) -> Optional[str]:
    """``source`` (the text after the fixes' edits) with the buffers ``placer`` planned in their
    classes' ``__init__`` (``adopt.buffers.AddBuffersVisitor``) and ``import module`` for each
    module it lacks, placed by LibCST's own codemod helper (``AddImportsVisitor``: after the
    module's leading imports, past the docstring and ``from __future__``; nothing when a plain
    ``import module`` is there). Both are planned in one ``CodemodContext`` and inserted as nodes.
    None when the text does not parse (the edits broke it)."""
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    # LibCST's codemod package costs more to import than the rest of a warm run: only for a fix
    # that adds a buffer or an import
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    if placer is not None:
        from torchsync_lint.adopt.buffers import AddBuffersVisitor

        placer.schedule(context)
        try:
            module = AddBuffersVisitor(context).transform_module(module)
        except (ValueError, StopIteration):  # a class the edits changed beyond recognition
            return None
    for name in modules:
        AddImportsVisitor.add_needed_import(context, name)
    if modules:
        module = AddImportsVisitor(context).transform_module(module)
    return module.code


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
    placer = None  # an adopt.buffers.Placer, once a fix hoists a constant
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
            if placer is None:
                from torchsync_lint.adopt.buffers import Placer  # LibCST's codemod package: see above

                placer = Placer(source)
            cls = placer.innermost_class(f.line)
            if cls is None or not placer.in_a_body(f.line, f.col):
                continue
            cls, path = cls
            name = placer.buffer_name(cls, f.line, f.col)
            # continuation lines relative to the statement: LibCST indents them with the block
            if not placer.place(cls, path, fix.hoist.init_params, name, fix.hoist.expression.replace(INDENT, "")):
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
    if placer is None and not imports:
        return out, counts
    added = _add_buffers_and_imports(out, placer if placer is not None and placer.pending else None, sorted(imports))
    if added is None:
        # the edits broke the text: with buffers planned nothing is applied; otherwise the
        # caller's parse check refuses the fixes
        return (source, Counter()) if placer is not None and placer.pending else (out, counts)
    return added, counts


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
