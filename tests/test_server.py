"""The language server, driven by a real LSP client (pygls's) over stdio, as an editor drives it:
initialize, open, diagnostics, change, code actions (fix, noqa, fix all), hover, save, shutdown."""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXES = REPO / "tests" / "fixtures" / "fixes"
BEFORE = (FIXES / "TSL201_arange_before.py").read_text()
AFTER = (FIXES / "TSL201_arange_after.py").read_text()
WAIT_S = 120  # a generous bound: each wait ends as soon as the server answers


def apply(text: str, edit: types.WorkspaceEdit) -> str:
    """What an editor does with a WorkspaceEdit of single-range TextEdits (0-based, ASCII text)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for change in edit.document_changes:
        for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            a = starts[e.range.start.line] + e.range.start.character
            b = starts[e.range.end.line] + e.range.end.character
            text = text[:a] + e.new_text + text[b:]
    return text


class Session:
    """A client talking to ``python -m torchsync_lint server`` in a child process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("torchsync-lint-tests", "1")
        self.diagnostics = {}
        self.changed = asyncio.Condition()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def on_diagnostics(params: types.PublishDiagnosticsParams):
            async with self.changed:
                self.diagnostics.setdefault(params.uri, []).append(params)
                self.changed.notify_all()

    async def start(self):
        await self.client.start_io(sys.executable, "-m", "torchsync_lint", "server", cwd=str(self.root))
        result = await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=self.root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="project")])), WAIT_S)
        self.client.initialized(types.InitializedParams())
        return result

    async def published(self, uri: str, count: int) -> types.PublishDiagnosticsParams:
        """The ``count``-th diagnostics published for ``uri`` (polls until it comes)."""
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: len(self.diagnostics.get(uri, [])) >= count), WAIT_S)
            return self.diagnostics[uri][count - 1]

    async def stop(self):
        await asyncio.wait_for(self.client.shutdown_async(None), WAIT_S)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), WAIT_S)


def run(coro):
    return asyncio.run(coro)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\nignore = []\n")
    return tmp_path


def test_lsp_session_diagnostics_code_actions_hover(tmp_path):
    root = _project(tmp_path)
    model = root / "model.py"
    model.write_text(BEFORE)
    uri = model.as_uri()

    async def go():
        s = Session(root)
        init = await s.start()
        caps = init.capabilities
        assert caps.hover_provider and caps.code_action_provider
        assert init.server_info.name == "torchsync-lint"

        s.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=BEFORE)))
        first = await s.published(uri, 1)
        assert [(d.code, d.range.start.line, d.source) for d in first.diagnostics] == [("TSL201", 6, "torchsync-lint")]
        diag = first.diagnostics[0]
        assert diag.range.start.character == BEFORE.splitlines()[6].index("pred[")
        assert diag.severity == types.DiagnosticSeverity.Warning

        actions = await asyncio.wait_for(s.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]))), WAIT_S)
        titles = [a.title for a in actions]
        fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "noqa" not in a.title)
        assert fix.is_preferred and fix.diagnostics[0].code == "TSL201"
        assert apply(BEFORE, fix.edit) == AFTER  # the same text as `--fix` writes, import included
        noqa = next(a for a in actions if "noqa" in a.title)
        silenced = apply(BEFORE, noqa.edit)
        assert silenced.splitlines()[6].endswith("# one row per sample  # noqa: TSL201")
        assert any(a.kind == "source.fixAll.torchsync-lint" for a in actions), titles

        hover = await asyncio.wait_for(s.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=diag.range.start)), WAIT_S)
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert hover.contents.value.startswith("# TSL201 ")
        assert "## Use instead" in hover.contents.value
        nothing = await asyncio.wait_for(s.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))), WAIT_S)
        assert nothing is None

        # the editor applies the noqa action: the change is checked again; the finding is gone
        s.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=silenced)]))
        second = await s.published(uri, 2)
        assert second.version == 2 and list(second.diagnostics) == []

        # a typo in the noqa code: the unused code is reported (TSL901), as on the command line
        typo = silenced.replace("# noqa: TSL201", "# noqa: TSL202")
        s.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typo)]))
        third = await s.published(uri, 3)
        assert sorted(d.code for d in third.diagnostics) == ["TSL201", "TSL901"]

        s.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        fourth = await s.published(uri, 4)
        assert sorted(d.code for d in fourth.diagnostics) == ["TSL201", "TSL901"]
        await s.stop()
        assert model.read_text() == BEFORE  # the server never writes a file: the editor applies edits

    run(go())


def test_project_index_and_a_syntax_error(tmp_path):
    """The project index: a helper's parameter is a GPU tensor because a forward in another file
    passes one (checked alone, the helper has no finding); a buffer that does not parse is one
    error diagnostic, not a crash."""
    root = _project(tmp_path)
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helper_src = "def count(mask):\n    return int(mask.sum())\n"
    (pkg / "helpers.py").write_text(helper_src)
    (pkg / "model.py").write_text(
        "import torch\nfrom torch import nn\nfrom pkg.helpers import count\n\n\nclass L(nn.Module):\n"
        "    def forward(self, x):\n        m = torch.ones(3, device=\"cuda\") > 0\n        return count(m)\n")
    uri = (pkg / "helpers.py").as_uri()
    broken = (root / "broken.py").as_uri()

    async def go():
        s = Session(root)
        await s.start()
        s.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=helper_src)))
        got = await s.published(uri, 1)
        assert [(d.code, d.range.start.line) for d in got.diagnostics] == [("TSL004", 1)]
        s.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=broken, language_id="python", version=1, text="def f(:\n")))
        bad = await s.published(broken, 1)
        assert [(d.code, d.severity) for d in bad.diagnostics] == [("TSL000", types.DiagnosticSeverity.Error)]
        await s.stop()

    run(go())
    from torchsync_lint.server.linting import check
    assert check(helper_src, "helpers.py").findings == []  # alone (no project): nothing to report


def test_server_without_pygls_says_what_to_install(tmp_path):
    """The extra is optional: without pygls the command says how to get it, in one line."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "pygls.py").write_text("raise ImportError('no pygls here', name='pygls')\n")
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                           "from torchsync_lint.server import main; sys.exit(main([]))", str(shim)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert 'pip install "torchsync-lint[server]"' in proc.stderr


def test_code_actions_never_take_a_fix_from_the_cache(tmp_path):
    """A folder run stores its reports for the project index, and the server publishes an
    unchanged file's findings from them: a crafted cache entry must not become a quick fix's or
    fix-all's edit (issue 20: fixes are computed from the text they rewrite)."""
    from test_cache_safety import PAYLOAD, _craft

    root = _project(tmp_path)
    model = root / "model.py"
    model.write_text(BEFORE)
    run_ = subprocess.run([sys.executable, "-m", "torchsync_lint", "."], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert run_.returncode == 1, run_.stderr
    assert _craft(root / ".torchsync_cache") >= 1
    uri = model.as_uri()

    async def go():
        s = Session(root)
        await s.start()
        s.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=BEFORE)))
        [diag] = (await s.published(uri, 1)).diagnostics
        actions = await asyncio.wait_for(s.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]))), WAIT_S)
        edits = {a.kind: apply(BEFORE, a.edit) for a in actions if "noqa" not in a.title}
        await s.stop()
        return edits

    edits = run(go())
    assert set(edits) == {types.CodeActionKind.QuickFix, "source.fixAll.torchsync-lint"}
    for kind, text in edits.items():
        assert "pwned" not in text and text == AFTER, kind
    assert PAYLOAD not in model.read_text()
