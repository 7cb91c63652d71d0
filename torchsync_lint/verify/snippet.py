"""Snippet mode, parent side: each finding's statement, sliced from its file, and what to run it on.

For each finding: the innermost statement (or compound-statement header) around it (``locate``),
sliced from the file so that line and column positions survive; the flagged expression alone when
it can run by itself; the names the statement reads that are local to its function (``scope``),
each with a spec (``specs``: the flow-sensitive value static inference gives at that point,
richer parameter annotations, how the statement uses the name, recorded real inputs); and for
``self`` its class and the ``__init__`` expressions of the attributes read. Names the module
defines (imports, constants, helpers) are not synthesised: the child takes them from the imported
module. No torch here.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchsync_lint.check.source import decode, module_name_for
from torchsync_lint.check.walker import RuleWalker
from torchsync_lint.finding import Finding
from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.index import FileIndex
from torchsync_lint.inference.project import Project
from torchsync_lint.syntax import walk
from torchsync_lint.verify.attribution import Span, norm
from torchsync_lint.verify.locate import locator, slice_text
from torchsync_lint.verify.specs import Probe


@dataclass
class Extracted:
    span: Span
    stmt: Optional[dict] = None  # {"src", "line", "col", "compound"}
    expr: Optional[dict] = None
    specs: Dict[str, dict] = field(default_factory=dict)
    self_spec: Optional[dict] = None
    failure: Optional[str] = None
    node: Optional[cst.CSTNode] = None  # the flagged node (for rewrites: extract_file(nodes=True))
    stmt_node: Optional[cst.CSTNode] = None
    notes: List[str] = field(default_factory=list)


# the lint's project, set before the extraction's workers fork (they inherit it): None reads each
# file on its own
_PROJECT: Optional[Project] = None


def use_project(interfaces: Optional[dict]) -> None:
    global _PROJECT
    _PROJECT = Project(interfaces) if interfaces else None


def extract_file(path: str, findings: List[Tuple[int, Finding]], hot_functions=(),
                 recorded: List[dict] = (), nodes: bool = False) -> Dict[int, Extracted]:
    """Extraction for every finding of one file (keys are the caller's finding keys). ``nodes``: also
    the flagged expressions' syntax nodes (``--verify-fixes`` rewrites them; slower)."""
    out: Dict[int, Extracted] = {}
    real = norm(path)
    try:
        with open(path, "rb") as fh:
            source = decode(fh.read(), path)
        module = cst.parse_module(source)
    except Exception as exc:
        for key, f in findings:
            out[key] = Extracted(Span(real, f.line, f.col - 1, f.end_line, f.end_col - 1, f.line, f.end_line),
                                 failure=f"cannot read the file again: {exc}")
        return out
    lines = source.splitlines(keepends=True)
    where = locator(module, source, lines, nodes=nodes)
    module_name, is_package = module_name_for(path)
    targets: Dict[int, List[int]] = {}
    codes: Dict[int, str] = {}
    for key, f in findings:
        span = Span(real, f.line, f.col - 1, f.end_line, f.end_col - 1, f.line, f.end_line)
        ex = Extracted(span)
        out[key] = ex
        codes[key] = f.code
        loc = where.statement_for(f.line, f.col - 1)
        if loc is None:
            ex.failure = "no statement found at the finding (a decorator, default value or class body?)"
            continue
        start, stmt = loc.start, loc.stmt
        if loc.compound:
            body_start = loc.end
            text = slice_text(lines, start, body_start).rstrip()
            if text.startswith("elif"):
                text = "if  " + text[4:]
            if text.startswith("async"):
                ex.failure = "async statements are not run in snippet mode"
                continue
            end_line = body_start[0] if body_start[0] == start[0] else _header_end_line(text, start[0])
        else:
            text = slice_text(lines, start, loc.end)
            end_line = loc.end[0]
        span.stmt_line, span.stmt_end_line = start[0], max(end_line, f.end_line)
        ex.stmt = {"src": text, "line": start[0], "col": start[1], "compound": loc.compound}
        ex.stmt_node = stmt
        inside = where.context(loc, (f.line, f.col - 1), (f.end_line, f.end_col - 1))
        ex.node = loc.node
        if inside is not None:
            if "lambda" in inside:
                ex.failure = "the flagged code is inside a lambda: running the statement does not call it"
                continue
            if "generator" in inside:
                ex.notes.append("inside a generator expression")
            if not any(w.startswith("store") for w in inside):
                expr_text = slice_text(lines, (f.line, f.col - 1), (f.end_line, f.end_col - 1))
                try:
                    ast.parse(expr_text)  # the child compiles it as an expression statement
                    ok = True
                except SyntaxError:
                    ok = False
                if ok:
                    ex.expr = {"src": expr_text, "line": f.line, "col": f.col - 1, "compound": False}
        targets.setdefault(id(stmt), []).append(key)
    if targets:
        index = FileIndex(module_name, is_package)
        walk.visit(module, index)
        evaluator = Evaluator(index, frozenset(hot_functions), project=_PROJECT)
        ctx = FileContext(index, evaluator)
        to_ast = getattr(where, "to_ast", None)
        probe = Probe(ctx, targets, module, out, codes, recorded,
                      ast_of=(lambda node: to_ast.get(id(node))) if to_ast is not None else None, source=source)
        RuleWalker(ctx, [probe]).run(module)
    return out


def _header_end_line(text: str, first: int) -> int:
    return first + text.count("\n")


def module_info(path: str) -> dict:
    """How the child imports the file: its dotted name and the folder that must be on sys.path."""
    real = os.path.realpath(path)
    name, _ = module_name_for(real)
    depth = name.count(".") + 1
    root = os.path.dirname(real)
    for _ in range(depth - 1):
        root = os.path.dirname(root)
    if os.path.basename(real) == "__init__.py":
        root = os.path.dirname(root)
    return {"path": real, "module": name, "root": root}
