"""The language server (LSP over stdio, on pygls): diagnostics on open, change and save; quick
fixes for each finding's fix and for ``# noqa: TSLnnn``; a "fix all" source action; hover text
from the rule's documentation.

Positions: findings carry 1-based line and column in code points; the protocol counts 0-based, in
the code units the client asked for (UTF-16 by default). pygls's position codec converts.
"""

from __future__ import annotations

import asyncio
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from torchsync_lint import __version__
from torchsync_lint.adopt.fixes import finding_key
from torchsync_lint.check.report import internal_error
from torchsync_lint.finding import FileError, Finding
from torchsync_lint.server import linting

SOURCE = "torchsync-lint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.torchsync-lint"
DEBOUNCE_S = 0.25  # a burst of keystrokes is checked once, after it


class TorchSyncServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("torchsync-lint", __version__)
        self.projects = linting.Projects()
        # uri -> (version, text, findings) of the last check, for code actions and hover
        self.checked: Dict[str, Tuple[Optional[int], str, List[Finding]]] = {}
        self.warned: set = set()


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def _range(doc: TextDocument, line: int, col: int, end_line: int, end_col: int) -> types.Range:
    lines = doc.lines
    start = types.Position(line=max(line - 1, 0), character=max(col - 1, 0))
    end = types.Position(line=max(end_line - 1, 0), character=max(end_col - 1, 0))
    codec = doc.position_codec
    return types.Range(start=codec.position_to_client_units(lines, start),
                       end=codec.position_to_client_units(lines, end))


def diagnostic(doc: TextDocument, f: Finding) -> types.Diagnostic:
    data = {"code": f.code, "line": f.line, "col": f.col}
    if f.fix is not None:
        data["fix"] = f.fix.applicability
    return types.Diagnostic(
        range=_range(doc, f.line, f.col, f.end_line, f.end_col),
        message=f.message, severity=types.DiagnosticSeverity.Warning, code=f.code, source=SOURCE, data=data,
        tags=[types.DiagnosticTag.Unnecessary] if f.code == linting.UNUSED_NOQA.code else None,
    )


def lint_document(ls: TorchSyncServer, uri: str) -> None:
    doc = ls.workspace.get_text_document(uri)
    path = _path(uri)
    text = doc.source
    try:
        checked = linting.check(text, path, ls.projects)
    except Exception as exc:  # a bug of ours: one diagnostic, and the server goes on
        checked = linting.Checked(error=FileError(path, internal_error(exc)))
    if checked.config_error and checked.config_error not in ls.warned:
        ls.warned.add(checked.config_error)
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning, message=f"torchsync-lint: {checked.config_error} (defaults used)"))
    diagnostics = [diagnostic(doc, f) for f in checked.findings]
    if checked.error is not None:
        err = checked.error
        line, col = err.line or 1, err.col or 1
        diagnostics.append(types.Diagnostic(
            range=_range(doc, line, col, line, col), message=err.message,
            severity=types.DiagnosticSeverity.Error, code=linting.FILE_ERROR, source=SOURCE))
    ls.checked[uri] = (doc.version, text, checked.findings)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=diagnostics))


def _edit(doc: TextDocument, old: str, new: str) -> types.WorkspaceEdit:
    """The smallest single replacement that turns ``old`` into ``new``."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1

    def position(offset: int) -> types.Position:
        line = old.count("\n", 0, offset)
        col = offset - (old.rfind("\n", 0, offset) + 1)
        return doc.position_codec.position_to_client_units(doc.lines, types.Position(line=line, character=col)) \
            if line < len(doc.lines) else types.Position(line=line, character=col)

    rng = types.Range(start=position(start), end=position(end_old))
    edit = types.TextEdit(range=rng, new_text=new[start:end_new])
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
        edits=[edit])])


def _current(ls: TorchSyncServer, uri: str) -> Tuple[TextDocument, str, List[Finding]]:
    doc = ls.workspace.get_text_document(uri)
    got = ls.checked.get(uri)
    if got is None or got[0] != doc.version or got[1] != doc.source:
        lint_document(ls, uri)
        got = ls.checked[uri]
    return doc, got[1], got[2]


def _overlaps(doc: TextDocument, f: Finding, rng: types.Range) -> bool:
    own = _range(doc, f.line, f.col, f.end_line, f.end_col)
    return (own.start.line, own.start.character) <= (rng.end.line, rng.end.character) and \
        (rng.start.line, rng.start.character) <= (own.end.line, own.end.character)


def code_actions(ls: TorchSyncServer, params: types.CodeActionParams) -> List[types.CodeAction]:
    uri = params.text_document.uri
    doc, text, findings = _current(ls, uri)
    only = params.context.only
    wants_quickfix = not only or any(k.value.startswith("quickfix") for k in only)
    wants_fix_all = not only or any(FIX_ALL.startswith(k.value) or k.value.startswith(FIX_ALL) for k in only)
    actions: List[types.CodeAction] = []
    by_key = {(d.code, d.range.start.line, d.range.start.character): d for d in params.context.diagnostics}
    if wants_quickfix:
        here = [f for f in findings if _overlaps(doc, f, params.range)]
        # each fix computed again from the buffer, never the published one (it may be the cache's)
        fresh = {finding_key(f): f for f in linting.refixed(text, _path(uri), here, ls.projects)}
        for f in here:
            own = _range(doc, f.line, f.col, f.end_line, f.end_col)
            diags = [d for d in [by_key.get((f.code, own.start.line, own.start.character))] if d is not None]
            again = fresh.get(finding_key(f))
            fixed = linting.fix_one(text, again) if again is not None else None
            if fixed is not None:
                unsafe = again.fix.applicability != "safe"
                actions.append(types.CodeAction(
                    title=f"{f.code}: {again.fix.message}" + (" (unsafe fix: review it)" if unsafe else ""),
                    kind=types.CodeActionKind.QuickFix, diagnostics=diags or None,
                    is_preferred=not unsafe, edit=_edit(doc, text, fixed)))
            silenced = linting.with_noqa(text, f)
            if silenced is not None:
                actions.append(types.CodeAction(
                    title=f"{f.code}: silence with `# noqa: {f.code}`", kind=types.CodeActionKind.QuickFix,
                    diagnostics=diags or None, edit=_edit(doc, text, silenced)))
    if wants_fix_all:
        fixed = linting.fix_all(text, _path(uri), findings, ls.projects)
        if fixed is not None:
            actions.append(types.CodeAction(title="torchsync-lint: apply every safe fix",
                                            kind=FIX_ALL, edit=_edit(doc, text, fixed)))
    return actions


def hover(ls: TorchSyncServer, params: types.HoverParams) -> Optional[types.Hover]:
    uri = params.text_document.uri
    doc, _, findings = _current(ls, uri)
    at = params.position
    pages = []
    for f in findings:
        own = _range(doc, f.line, f.col, f.end_line, f.end_col)
        if (own.start.line, own.start.character) <= (at.line, at.character) <= (own.end.line, own.end.character):
            page = linting.rule_doc(f.code)
            if page and page not in pages:
                pages.append(page)
    if not pages:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n---\n".join(pages)))


def build() -> TorchSyncServer:
    server = TorchSyncServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchSyncServer, params: types.DidOpenTextDocumentParams) -> None:
        lint_document(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TorchSyncServer, params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        await asyncio.sleep(DEBOUNCE_S)
        if ls.workspace.get_text_document(uri).version == version:  # no newer change came
            lint_document(ls, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchSyncServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.projects.saved(_path(params.text_document.uri))  # other files' view of it changed
        lint_document(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchSyncServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.checked.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def on_code_action(ls: TorchSyncServer, params: types.CodeActionParams):
        return code_actions(ls, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: TorchSyncServer, params: types.HoverParams):
        return hover(ls, params)

    return server


def serve() -> int:
    build().start_io()
    return 0
