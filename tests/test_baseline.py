"""Fingerprints and baselines: accepted findings pass, new ones fail, across line shifts and edits."""

import json

import pytest

from torchsync_lint import cli
from torchsync_lint.adopt import baseline

HEAD = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n"
BODY = "        a = x.sum().item()\n        b = x.max().item()\n        return a + b\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def fingerprints(capsys, *argv):
    rc, out, _ = run(capsys, "--output-format", "json", *argv)
    return [(d["line"], d["fingerprint"]) for d in json.loads(out) if d["type"] == "finding"]


def test_fingerprint_survives_line_shifts_comments_and_layout(project, capsys):
    (project / "m.py").write_text(HEAD + BODY)
    before = [fp for _, fp in fingerprints(capsys, "m.py")]
    assert len(before) == len(set(before)) == 2
    shifted = "import os\n\n\n" + HEAD + "        # a comment\n" + BODY.replace("x.max().item()", "x.max( ).item()  # why")
    (project / "m.py").write_text(shifted)
    after = fingerprints(capsys, "m.py")
    assert [fp for _, fp in after] == before
    assert [line for line, _ in after] == [11, 12]


def test_identical_findings_get_their_occurrence_index(project, capsys):
    (project / "m.py").write_text(HEAD + "        a = x.item()\n        b = x.item()\n        return a + b\n")
    fps = [fp for _, fp in fingerprints(capsys, "m.py")]
    assert len(set(fps)) == 2


def test_fingerprint_depends_on_path_relative_to_the_root(project, capsys):
    (project / "a.py").write_text(HEAD + BODY)
    (project / "b.py").write_text(HEAD + BODY)
    a = {fp for _, fp in fingerprints(capsys, "a.py")}
    b = {fp for _, fp in fingerprints(capsys, "b.py")}
    assert a and b and not a & b
    sub = project / "sub"
    sub.mkdir()
    import os

    os.chdir(sub)  # the same file named from elsewhere: the same fingerprints
    assert {fp for _, fp in fingerprints(capsys, "../a.py")} == a


def test_baseline_flow_write_shift_add_one(project, capsys):
    (project / "m.py").write_text(HEAD + BODY)
    rc, out, err = run(capsys, "--write-baseline", "tsl-baseline.json", "m.py")
    assert rc == 0 and "wrote 2 finding(s)" in err
    doc = json.loads((project / "tsl-baseline.json").read_text())
    assert doc["tool"] == "torchsync-lint" and len(doc["findings"]) == 2
    assert run(capsys, "--baseline", "tsl-baseline.json", "m.py")[0] == 0
    # lines shift and a new sync appears: exactly one new finding
    (project / "m.py").write_text("import os\n" + HEAD + "        c = x.min().item()\n" + BODY)
    rc, out, _ = run(capsys, "--baseline", "tsl-baseline.json", "m.py")
    lines = [ln for ln in out.splitlines() if ": TSL" in ln]
    assert rc == 1 and len(lines) == 1 and lines[0].startswith("m.py:8:")
    assert "2 in the baseline" in out


@pytest.mark.parametrize("content, words", [
    (None, ["cannot read the baseline"]),
    (b"{not json", ["invalid JSON"]),
    (b'{"tool": "other", "findings": []}', ["not a torchsync-lint baseline"]),
    (b'{"tool": "torchsync-lint", "version": 99, "findings": []}', ["version 99"]),
    (b'{"tool": "torchsync-lint", "version": 1, "findings": [{"code": "TSL001"}]}', ["findings[0]"]),
    # crafted: json's decoder recurses per bracket (a RecursionError traceback before)
    (b"[" * 100_000 + b"]" * 100_000, ["nested too deeply"]),
    (b'{"tool": "torchsync-lint", "version": 1, "findings": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     ["nested too deeply"]),
])
def test_bad_baseline_is_one_line_and_exit_2(project, capsys, content, words):
    (project / "m.py").write_text(HEAD + BODY)
    if content is not None:
        (project / "b.json").write_bytes(content)
    rc, out, err = run(capsys, "--baseline", "b.json", "m.py")
    assert rc == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("torchsync-lint: error: b.json")
    for word in words:
        assert word in line


def test_normalise_strips_comments_and_layout():
    assert baseline.normalise("x.sum( ).item()  # c") == baseline.normalise("x.sum().item()")
    assert baseline.normalise("f(a,\n  b)") == "f ( a , b )"
    assert baseline.normalise('"""open') == '"""open'  # not tokenizable alone: whitespace only
