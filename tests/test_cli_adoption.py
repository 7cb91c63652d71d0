"""CLI flags for adopting the linter: stdin, --statistics, --quiet, --output-file, the full format,
the summary line, JSON/SARIF error entries and fingerprints, --add-noqa, unused noqa (TSL901)."""

import io
import json
import sys
from collections import Counter

import pytest

from torchsync_lint import cli
from torchsync_lint.finding import FileError, Finding
from torchsync_lint.cli.output import Extras, summary_line

HEAD = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n"
SYNC = HEAD + "        a = x.sum().item()\n        b = x.max().item()\n        return a + b\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


class FakeStdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def test_stdin_with_a_filename(project, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", FakeStdin(SYNC.encode()))
    rc, out, _ = run(capsys, "--stdin-filename", "pkg/model.py", "-")
    assert rc == 1
    assert [ln.split(":")[:2] for ln in out.splitlines() if ": TSL" in ln] == [["pkg/model.py", "7"], ["pkg/model.py", "8"]]


def test_stdin_filename_alone_reads_stdin_and_per_file_ignores_apply(project, capsys, monkeypatch):
    (project / "pyproject.toml").write_text('[tool.torchsync-lint.per-file-ignores]\n"legacy/*" = ["TSL001"]\n')
    monkeypatch.setattr(sys, "stdin", FakeStdin(SYNC.encode()))
    assert run(capsys, "--stdin-filename", "legacy/m.py") == (0, "All checks passed.\n", "")


def test_stdin_errors_and_force_exclude(project, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"import torch\ndef f(:\n"))
    rc, _, err = run(capsys, "-")
    assert rc == 2 and err.startswith("-:2:")
    (project / "pyproject.toml").write_text('[tool.torchsync-lint]\nextend-exclude = ["gen"]\n')
    monkeypatch.setattr(sys, "stdin", FakeStdin(SYNC.encode()))
    assert run(capsys, "--force-exclude", "--stdin-filename", "gen/m.py", "-") == (0, "", "")
    rc, _, err = run(capsys, "-", "other.py")
    assert rc == 2 and "stdin" in err


def test_statistics(project, capsys):
    (project / "m.py").write_text(SYNC + "    def g(self, x):\n        return x.tolist()\n")
    rc, out, _ = run(capsys, "--statistics", "m.py")
    assert rc == 1
    rows = [ln.split("\t") for ln in out.splitlines()]
    assert rows[0][1:] == ["TSL001", "item-call"] and int(rows[0][0]) == 2
    assert all(len(r) == 3 for r in rows)
    rc, out, _ = run(capsys, "--statistics", "--output-format", "json", "m.py")
    assert json.loads(out)[0] == {"code": "TSL001", "name": "item-call", "count": 2}


def test_quiet_drops_the_summary_and_notes(project, capsys):
    (project / "m.py").write_text(SYNC)
    (project / "empty.py").write_text("")
    rc, out, err = run(capsys, "m.py", "empty.py")
    assert out.endswith("Found 2 findings.\n") and "note" in err
    rc, out, err = run(capsys, "--quiet", "m.py", "empty.py")
    assert rc == 1 and "Found" not in out and len(out.splitlines()) == 2 and err == ""


def test_output_file(project, capsys):
    (project / "m.py").write_text(SYNC)
    rc, out, _ = run(capsys, "--output-file", "report.json", "--output-format", "json", "m.py")
    assert rc == 1 and out == ""
    assert len(json.loads((project / "report.json").read_text())) == 2
    rc, _, err = run(capsys, "--output-file", "no/such/dir/r.txt", "m.py")
    assert rc == 2 and "cannot write" in err


def test_full_format_shows_the_line_and_a_caret(project, capsys, monkeypatch):
    (project / "m.py").write_text(SYNC)
    rc, out, _ = run(capsys, "--output-format", "full", "m.py")
    lines = out.splitlines()
    i = lines.index("7 |         a = x.sum().item()")
    assert lines[i - 1] == "  |" and lines[i + 1] == "  |             " + "^" * len("x.sum().item()")
    assert "\x1b[" not in out  # not a terminal: no colour
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in run(capsys, "--output-format", "full", "m.py")[1]
    assert "\x1b[" not in run(capsys, "--output-format", "full", "--output-file", "r.txt", "m.py")[1]
    assert run(capsys, "--format", "full", "m.py")[0] == 1  # --format stays an alias


def test_summary_counts_hidden_baseline_and_fixable():
    f = Finding("m.py", 1, 1, 1, 2, "TSL001", "item-call", "m")
    assert summary_line([f], [], Extras()) == "Found 1 finding.\n"
    assert summary_line([], [], Extras()) == "All checks passed.\n"
    assert summary_line([], [], Extras(checked=False)) == ""  # nothing checked: no claim about it
    extras = Extras(hidden=Counter({"once": 2, "periodic": 1}), baseline=3)
    assert summary_line([f, f], [FileError("x.py", "bad")], extras) == \
        "Found 2 findings (3 hidden: 1 periodic, 2 once; 3 in the baseline; 1 file error).\n"
    from types import SimpleNamespace

    f.fix = SimpleNamespace(applicability="safe")
    assert "1 fixable with --fix" in summary_line([f], [], Extras())
    g = Finding("m.py", 2, 1, 2, 2, "TSL405", "linalg-without-ex", "m")
    g.fix = SimpleNamespace(applicability="unsafe")  # counted apart: --fix alone does not apply it
    assert summary_line([f, g], [], Extras()) == "Found 2 findings (1 fixable with --fix; 1 with --unsafe-fixes).\n"


def test_summary_uses_the_hidden_findings_the_engine_gives(project, capsys, monkeypatch):
    from torchsync_lint.cli import lint as adoption

    real = adoption.lint_paths

    def with_hidden(*args, **kwargs):
        result = real(*args, **kwargs)
        hidden = Finding("m.py", 9, 1, 9, 2, "TSL001", "item-call", "m")
        hidden.frequency = "once"
        result.hidden = [hidden]
        return result

    monkeypatch.setattr(adoption, "lint_paths", with_hidden)
    (project / "m.py").write_text(SYNC)
    assert run(capsys, "m.py")[1].endswith("Found 2 findings (1 hidden: 1 once).\n")


def test_json_has_errors_as_entries_and_fingerprints(project, capsys):
    (project / "m.py").write_text(SYNC)
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    rc, out, _ = run(capsys, "--output-format", "json", "m.py", "broken.py", "missing.py")
    data = json.loads(out)
    assert rc == 2
    assert [d["type"] for d in data] == ["finding", "finding", "error", "error"]
    errors = {d["path"]: d for d in data if d["type"] == "error"}
    assert errors["broken.py"]["line"] == 2 and "syntax error" in errors["broken.py"]["message"]
    assert errors["missing.py"]["line"] is None
    assert all(len(d["fingerprint"]) == 20 for d in data if d["type"] == "finding")


def test_sarif_partial_fingerprints_match_json(project, capsys):
    (project / "m.py").write_text(SYNC)
    fps = [d["fingerprint"] for d in json.loads(run(capsys, "--output-format", "json", "m.py")[1])]
    doc = json.loads(run(capsys, "--output-format", "sarif", "m.py")[1])
    assert [r["partialFingerprints"]["torchsyncLint/v1"] for r in doc["runs"][0]["results"]] == fps


def test_add_noqa_silences_every_finding_and_is_idempotent(project, capsys):
    src = SYNC.replace("a = x.sum().item()", "a = x.sum().item()  # noqa: E501").replace(
        "return a + b", "return a + torch.tensor([1.0, 2.0]).cuda().sum()")
    (project / "m.py").write_text(src)
    before = run(capsys, "--quiet", "m.py")[1].splitlines()
    assert len(before) >= 2
    rc, _, err = run(capsys, "--add-noqa", "m.py")
    assert rc == 0 and f"added {len({ln.split(':')[1] for ln in before})} noqa comment(s) to 1 file(s)" in err
    text = (project / "m.py").read_text()
    assert "a = x.sum().item()  # noqa: E501, TSL001\n" in text
    assert "b = x.max().item()  # noqa: TSL001\n" in text
    assert run(capsys, "m.py") == (0, "All checks passed.\n", "")  # and no unused-noqa either
    assert run(capsys, "--add-noqa", "m.py")[2].startswith("torchsync-lint: added 0 noqa")
    assert (project / "m.py").read_text() == text


def test_add_noqa_keeps_crlf_and_the_encoding(project, capsys):
    src = ("# -*- coding: latin-1 -*-\n" + SYNC.replace("return a + b", "return a + b  # caf\u00e9")).replace("\n", "\r\n")
    (project / "m.py").write_bytes(src.encode("latin-1"))
    assert run(capsys, "--add-noqa", "m.py")[0] == 0
    data = (project / "m.py").read_bytes().decode("latin-1")
    assert "x.max().item()  # noqa: TSL001\r\n" in data and "caf\u00e9" in data and "\n" not in data.replace("\r\n", "")


def test_unused_and_unknown_noqa_codes_are_tsl901(project, capsys):
    src = SYNC.replace("a = x.sum().item()", "a = x.sum().item()  # noqa: TSL001").replace(
        "return a + b", "return a + b  # noqa: TSL002, TSL999, E501")
    (project / "m.py").write_text(src)
    rc, out, _ = run(capsys, "--quiet", "m.py")
    got = [(ln.split(":")[1], ln.split()[1], ln.split(" ", 2)[2]) for ln in out.splitlines()]
    assert rc == 1
    assert got == [("8", "TSL001", got[0][2]),
                   ("9", "TSL901", "unused `# noqa` code TSL002: nothing on this line to silence"),
                   ("9", "TSL901", "unknown code TSL999 in `# noqa`: no rule has it")]
    assert "TSL901" not in run(capsys, "--ignore", "TSL901", "m.py")[1]
    # a code of a rule this run does not check is not called unused
    assert "TSL002" not in run(capsys, "--ignore", "TSL002", "m.py")[1]


def test_unused_noqa_is_listed_and_selectable(capsys):
    rc, out, _ = run(capsys, "--list-rules")
    assert any(ln.startswith("TSL901  unused-noqa") for ln in out.splitlines())
    assert run(capsys, "--select", "TSL901", "--help")[0] == 0


def test_sarif_help_links_point_at_pages_that_exist(project, capsys):
    from pathlib import Path

    from torchsync_lint.cli.output import DOCS_BASE

    (project / "m.py").write_text(SYNC.replace("return a + b", "return a + b  # noqa: TSL002"))
    doc = json.loads(run(capsys, "--output-format", "sarif", "m.py")[1])
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {"TSL001", "TSL901"}
    docs = Path(__file__).resolve().parent.parent / "docs"
    for r in rules:
        page, _, anchor = r["helpUri"][len(DOCS_BASE):].partition("#")
        text = (docs / page).read_text(encoding="utf-8")
        if anchor:  # the heading that MkDocs and GitHub turn into this anchor
            assert any(line.startswith("#") and anchor == "-".join(
                "".join(ch for ch in line.lstrip("# ").lower() if ch.isalnum() or ch in " -").split())
                for line in text.splitlines()), r["helpUri"]


def test_noqa_text_inside_a_string_is_not_a_directive(project, capsys):
    src = SYNC.replace("        return a + b\n", '        """silence it with `# noqa: TSL109`"""\n        return a + b\n')
    (project / "m.py").write_text(src)
    assert "TSL901" not in run(capsys, "m.py")[1]


def test_add_noqa_never_edits_a_string(project, capsys):
    from torchsync_lint.adopt.add_noqa import add_noqa

    src = 'x = f("# noqa: E1", t.item())\ny = g(t.item())  # keep\n'
    out, n = add_noqa(src, {1: ["TSL001"], 2: ["TSL001"]})
    assert n == 2
    assert out == 'x = f("# noqa: E1", t.item())  # noqa: TSL001\ny = g(t.item())  # keep  # noqa: TSL001\n'
    assert add_noqa(out, {1: ["TSL001"], 2: ["TSL001"]}) == (out, 0)
