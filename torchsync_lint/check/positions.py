"""Positions for the few nodes we report, instead of LibCST's PositionProvider for every node.

One code-generation walk records start and end only for the wanted nodes; files without
findings never pay for it. Positions match PositionProvider's (syntactic, whitespace excluded).
Given the source, only the statements that hold wanted nodes (their statement line, else their
function, else their top-level statement: ``check.walker.places``) are generated: each is placed
by finding its text, when unique, in the source, since the module's code is the source.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import WhitespaceInclusivePositionProvidingCodegenState


class _Sink:
    def __init__(self, wanted: set) -> None:
        self.wanted = wanted
        self._computed: Dict[cst.CSTNode, CodeRange] = {}


class _State(WhitespaceInclusivePositionProvidingCodegenState):
    """Record only wanted nodes; honour the syntactic-position hooks PositionProvider uses."""

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.provider.wanted:
            self._stack.append(CodePosition(self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.provider.wanted:
            start = self._stack.pop()
            if node not in self.provider._computed:
                self.provider._computed[node] = CodeRange(start, CodePosition(self.line, self.column))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        wanted = id(node) in self.provider.wanted
        start = CodePosition(self.line, self.column)
        try:
            yield
        finally:
            if wanted:
                end = CodePosition(self.line, self.column)
                computed = self.provider._computed
                if start_node is not None and start_node in computed:
                    start = computed[start_node].start
                if end_node is not None and end_node in computed:
                    end = computed[end_node].end
                computed[node] = CodeRange(start, end)


def _generate(module: cst.Module, root: cst.CSTNode, nodes: List[cst.CSTNode],
              indent: str = "") -> Tuple[Dict, List[str]]:
    sink = _Sink({id(n) for n in nodes})
    state = _State(default_indent=module.default_indent, default_newline=module.default_newline, provider=sink)
    if indent:
        state.indent_tokens.append(indent)
    root._codegen(state)
    return sink._computed, state.tokens


def _in_statement(module: cst.Module, source: str, stmt: cst.CSTNode, nodes: List[cst.CSTNode],
                  indent: str = "") -> Optional[Dict[cst.CSTNode, CodeRange]]:
    """Positions from generating one statement alone (``indent``: the indentation its blocks
    give it), placed by finding its text in the source. Only when that text occurs exactly
    once (so the place is certain), else None."""
    computed, tokens = _generate(module, stmt, nodes, indent)
    text = "".join(tokens)
    start = source.find(text)
    if start < 0 and tokens:
        # at the end of a file without a final newline the module drops the last newline token
        text = text[: len(text) - len(tokens[-1])]
        start = source.find(text) if text else -1
    if start < 0 or source.find(text, start + 1) >= 0:
        return None
    if start > 0 and source[start - 1] != "\n":
        return None
    shift = source.count("\n", 0, start)  # a statement's text starts at column 0
    out = {}
    for node in nodes:
        r = computed.get(node)
        if r is not None:
            out[node] = CodeRange(CodePosition(r.start.line + shift, r.start.column),
                                  CodePosition(r.end.line + shift, r.end.column))
    return out


Placement = Tuple[cst.CSTNode, str]  # a statement and the indentation its enclosing blocks give it


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode], source: Optional[str] = None,
              places: Optional[Dict[int, Sequence[Placement]]] = None) -> Dict[cst.CSTNode, CodeRange]:
    """Ranges of ``nodes``. With the module's ``source`` and ``places`` (id of a node -> statements
    that hold it, innermost first), only those statements are generated, not the whole file; a
    statement whose text is not unique in the file gives way to the next one out."""
    nodes = list(nodes)
    if not nodes:
        return {}
    out: Dict[cst.CSTNode, CodeRange] = {}
    rest: List[cst.CSTNode] = []
    pending = [(n, 0) for n in nodes]
    if source is None or not places or "\r" in source:  # lone CRs: count lines the slow way
        rest, pending = nodes, []
    while pending:
        groups: Dict[Tuple[int, str], Tuple[cst.CSTNode, str, list]] = {}
        for n, level in pending:
            candidates = places.get(id(n), ())
            if level >= len(candidates):
                rest.append(n)
                continue
            stmt, indent = candidates[level]
            groups.setdefault((id(stmt), indent), (stmt, indent, []))[2].append((n, level))
        pending = []
        for stmt, indent, group in groups.values():
            got = _in_statement(module, source, stmt, [n for n, _ in group], indent)
            if got is None:
                pending.extend((n, level + 1) for n, level in group)
            else:
                out.update(got)
    if rest:
        computed, _ = _generate(module, module, rest)
        out.update((n, computed[n]) for n in rest if n in computed)
    return out
