"""docs/editors.md, the set-up for VS Code, Neovim and PyCharm: every snippet is valid in its own
language and names commands that work as written (the server, the stdin fix editors pipe a buffer
through, PyCharm's output filter against the real output)."""

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
FIXES = REPO / "tests" / "fixtures" / "fixes"
TIMEOUT = 300


def _blocks(language: str):
    return re.findall(rf"```{language}\n(.*?)```", PAGE, flags=re.S)


def _tsl(cwd, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "torchsync_lint", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT)


def test_the_page_covers_vs_code_neovim_and_pycharm():
    headings = re.findall(r"^## (.+)$", PAGE, flags=re.M)
    for editor in ("VS Code", "Neovim", "PyCharm"):
        assert editor in headings
    assert "(docs/editors.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_vs_code_settings_are_json_and_start_the_server():
    blocks = [json.loads(b) for b in _blocks("json")]
    assert len(blocks) >= 3
    client = next(b for b in blocks if "glspc.server.command" in b)
    assert [client["glspc.server.command"], *client["glspc.server.commandArguments"]] == ["torchsync-lint", "server"]
    on_save = next(b for b in blocks if "[python]" in b)
    assert "source.fixAll.torchsync-lint" in on_save["[python]"]["editor.codeActionsOnSave"]
    schema = next(b for b in blocks if "evenBetterToml.schema.associations" in b)
    url = next(iter(schema["evenBetterToml.schema.associations"].values()))
    assert (REPO / url.split("/main/", 1)[1]).is_file()  # the schema the URL names is in the repository


def test_neovim_snippets_start_the_server():
    blocks = _blocks("lua")
    assert len(blocks) == 2
    for block in blocks:
        assert 'cmd = { "torchsync-lint", "server" }' in block
        assert block.count("(") == block.count(")") and block.count("{") == block.count("}")


def test_the_server_command_the_page_names_exists(tmp_path):
    proc = _tsl(tmp_path, "server", "--help")
    assert proc.returncode == 0 and "language server" in proc.stdout.lower()


def test_the_stdin_command_works_as_written(tmp_path):
    """`torchsync-lint --stdin-filename PATH --fix -`, as the page gives it to tools that pipe a buffer."""
    [command] = set(re.findall(r"`torchsync-lint (--stdin-filename PATH --fix -)`", PAGE))
    args = command.replace("PATH", "model.py").split()
    before = (FIXES / "TSL201_arange_before.py").read_text()
    proc = _tsl(tmp_path, *args, stdin=before)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (FIXES / "TSL201_arange_after.py").read_text()
    assert not (tmp_path / "model.py").exists()


def test_pycharms_output_filter_matches_the_text_output(tmp_path):
    [arguments] = re.findall(r"arguments `([^`]+)`", PAGE)
    [output_filter] = re.findall(r"output filter\s+`([^`]+)`", PAGE)
    (tmp_path / "model.py").write_text((FIXES / "TSL201_arange_before.py").read_text())
    proc = _tsl(tmp_path, *arguments.replace("$FilePath$", "model.py").split())
    assert proc.returncode == 1
    pattern = re.escape(output_filter).replace(re.escape("$FILE_PATH$"), r"(?P<file>[^:]+)") \
        .replace(re.escape("$LINE$"), r"(?P<line>\d+)").replace(re.escape("$COLUMN$"), r"(?P<col>\d+)") \
        .replace(re.escape(".*"), ".*")
    findings = [line for line in proc.stdout.splitlines() if "TSL" in line]
    assert findings
    for line in findings:
        m = re.fullmatch(pattern, line)
        assert m and m.group("file") == "model.py" and int(m.group("line")) >= 1, line


def test_the_server_extra_the_page_installs_exists():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "torchsync-lint[server]" in PAGE and {"pygls>=2,<3", "lsprotocol>=2025"} <= set(extras["server"])
