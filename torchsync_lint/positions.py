"""Positions for the few nodes we report, instead of LibCST's PositionProvider for every node.

One code-generation walk records start and end only for the wanted nodes; files without
findings never pay for it. Positions match PositionProvider's (syntactic, whitespace excluded).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, Optional

import libcst as cst
from libcst._position import CodePosition, CodeRange
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


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> Dict[cst.CSTNode, CodeRange]:
    nodes = list(nodes)
    if not nodes:
        return {}
    sink = _Sink({id(n) for n in nodes})
    state = _State(default_indent=module.default_indent, default_newline=module.default_newline, provider=sink)
    module._codegen(state)
    return sink._computed
