"""What the command imports: each command's module only when it runs, and a lint that the project
index answers (an unchanged project) imports neither LibCST nor a rule, the file check, the
inference, the fixes, the language server or the verifier's run (issue 18 (c): a warm re-run was
mostly imports). The rules' table (``run/rule_table.py``) that lets settings skip the rules is
generated, and is used only while it lists the rule modules there are."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchsync_lint.rules.registry import all_rules
from torchsync_lint.run import rule_table, settings

PROJECTS = Path(__file__).resolve().parent / "projects"

RUN_AND_LIST = """
import io, json, sys, contextlib
from torchsync_lint.cli.entry import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""

# what a warm lint must not load: the parser, any rule, the file check and its inference, the fixes,
# the language server, the verifier's run, the guard, the trace and catalog commands, process pools
HEAVY = ("libcst", "torchsync_lint.rules.tsl", "torchsync_lint.rules.registry", "torchsync_lint.check.file",
         "torchsync_lint.check.walker", "torchsync_lint.inference.evaluate", "torchsync_lint.inference.project",
         "torchsync_lint.adopt.fixes", "torchsync_lint.cli.fix", "torchsync_lint.server.lsp",
         "torchsync_lint.verify.run", "torchsync_lint.guard", "torchsync_lint.cli.trace",
         "torchsync_lint.cli.catalog", "torchsync_lint.run.checked_run", "torchsync_lint.run.project_pass",
         "concurrent.futures.process")


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(PROJECTS / "crossfile", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    return root


def _run(root: Path, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", RUN_AND_LIST, *args], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _heavy(modules) -> list:
    return sorted(m for m in modules if m.startswith(HEAVY))


def test_an_unchanged_project_is_answered_without_the_checker(tmp_path):
    root = _project(tmp_path)
    cold = _run(root, "--format", "json", ".")
    assert "libcst" in cold["modules"] and "torchsync_lint.run.checked_run" in cold["modules"]  # not vacuous
    warm = _run(root, "--format", "json", ".")
    assert warm["out"] == cold["out"] and warm["code"] == cold["code"] == 1
    assert _heavy(warm["modules"]) == []


def test_an_edited_file_loads_the_checker(tmp_path):
    root = _project(tmp_path)
    _run(root, "--format", "json", ".")
    helper = root / "src" / "detkit" / "ops" / "host.py"
    helper.write_text(helper.read_text() + "\n\ndef _added(x):\n    return x\n")
    edited = _run(root, "--format", "json", "--jobs", "1", ".")
    assert "torchsync_lint.check.file" in edited["modules"]
    assert "torchsync_lint.adopt.fixes" not in edited["modules"]  # the fixes only for --fix
    assert "concurrent.futures.process" not in edited["modules"]  # no pool without --jobs > 1
    fresh = _run(root, "--format", "json", "--no-cache", ".")
    assert edited["out"] == fresh["out"]


@pytest.mark.parametrize("args", [["--show-settings"], ["--show-files", "."], ["--version"], ["--format", "sarif", "."],
                                  ["--statistics", "."]])
def test_other_flags_load_no_rule(tmp_path, args):
    root = _project(tmp_path)
    _run(root, ".")  # warm
    got = _run(root, *args)
    assert _heavy(got["modules"]) == []


def test_each_command_module_loads_when_its_command_runs(tmp_path):
    root = _project(tmp_path)
    got = _run(root, "--list-rules")
    assert "torchsync_lint.cli.explain" in got["modules"] and "TSL001" in got["out"]
    got = _run(root, "server", "--version")
    assert "torchsync_lint.server" in got["modules"] and "torchsync_lint.cli.trace" not in got["modules"]


def test_the_rule_table_is_what_the_rules_say():
    rules = all_rules()
    assert rule_table.RULES == {code: (r.name, r.message, r.default_enabled) for code, r in rules.items()}
    assert rule_table.MODULES == tuple(sorted({r.__module__.rpartition(".")[2] for r in rules.values()}))
    assert settings.rule_info() == {code: settings.RuleInfo(r.name, r.message, r.default_enabled)
                                    for code, r in rules.items()}


def test_a_stale_rule_table_gives_way_to_the_rules(monkeypatch):
    """A rule module added or removed since the table was generated: the rules themselves answer."""
    monkeypatch.setattr(rule_table, "MODULES", rule_table.MODULES[1:])
    monkeypatch.setattr(rule_table, "RULES", {})
    settings.rule_info.cache_clear()
    try:
        assert set(settings.rule_info()) == set(all_rules())
        assert set(settings.rule_defaults()) >= set(all_rules())
    finally:
        settings.rule_info.cache_clear()


def test_docgen_writes_the_rule_table_and_flags_it_stale(tmp_path, monkeypatch, capsys):
    from torchsync_lint.cli import docgen

    monkeypatch.setattr(docgen, "DOCS", tmp_path / "rules")
    monkeypatch.setattr(docgen, "TABLE", tmp_path / "rule_table.py")
    assert docgen.main([]) == 0 and docgen.main(["--check"]) == 0
    assert docgen.TABLE.read_text() == Path(rule_table.__file__).read_text()  # the package's copy is current
    docgen.TABLE.write_text(docgen.TABLE.read_text().replace("True)", "False)", 1))
    assert docgen.main(["--check"]) == 1 and "rule_table.py" in capsys.readouterr().err
