"""Bad input: one clear message naming the file (and line), the other files still linted, no traceback."""

import os
import subprocess
import sys

import pytest

from torchsync_lint import cli

SYNC = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x.item()\n"
GOOD_FINDING = "good.py:7:16: TSL001 "


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    (tmp_path / "good.py").write_text(SYNC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


BAD_FILES = {
    # name: (bytes, the message on stderr)
    "syntax.py": (b"import torch\n\ndef f(x:\n    return x\n", "syntax.py:3:6: error: syntax error: '(' was never closed"),
    "indent.py": (b"import torch\nx = 1\n  y = 2\n", "indent.py:3:2: error: syntax error: unexpected indent"),
    "no_torch_syntax.py": (b"def f(:\n    pass\n", "no_torch_syntax.py:1:7: error: syntax error: "),
    "latin1.py": ("import torch\nname = 'caf\u00e9'\n".encode("latin-1"),
                  "latin1.py: error: cannot decode file"),
    "bad_coding.py": (b"# -*- coding: no-such-codec -*-\nimport torch\n", "bad_coding.py: error: cannot decode file"),
    "nul.py": (b"import torch\nx = 1\x00\n", "nul.py"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_unreadable_or_unparsable_file(project, capsys, name):
    data, message = BAD_FILES[name]
    (project / name).write_bytes(data)
    rc, out, err = lint(capsys, name, "good.py")
    assert rc == 2
    assert out.startswith(GOOD_FINDING)  # the other file is still linted
    [line] = err.splitlines()  # one message
    assert line.startswith(message), line


def test_unparsable_file_found_in_a_directory(project, capsys):
    (project / "pkg").mkdir()
    (project / "pkg" / "broken.py").write_text("import torch\nclass :\n")
    (project / "pkg" / "model.py").write_text(SYNC)
    rc, out, err = lint(capsys, ".")
    assert rc == 2
    assert "pkg/model.py:7:16: TSL001" in out and "good.py:7:16" in out
    assert err.strip().startswith("./pkg/broken.py:2:")


def test_empty_file_given_explicitly_is_a_note(project, capsys):
    (project / "empty.py").write_text("")
    (project / "blank.py").write_text("\n\n   \n")
    rc, out, err = lint(capsys, "empty.py", "blank.py", "good.py")
    assert rc == 1  # the findings decide, not the empty files
    assert out.startswith(GOOD_FINDING)
    assert err.splitlines() == ["empty.py: note: empty file, nothing to check",
                                "blank.py: note: empty file, nothing to check"]
    assert lint(capsys, "empty.py") == (0, "All checks passed.\n", "empty.py: note: empty file, nothing to check\n")


def test_empty_files_in_directories_are_silent(project, capsys):
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "empty.py").write_text("")
    rc, out, err = lint(capsys, "pkg")
    assert (rc, out, err) == (0, "All checks passed.\n", "")


def test_missing_path(project, capsys):
    rc, out, err = lint(capsys, "missing.py", "good.py", "no_dir/")
    assert rc == 2
    assert out.startswith(GOOD_FINDING)
    assert err.splitlines() == ["missing.py: error: no such file or directory",
                                "no_dir/: error: no such file or directory"]


def test_unreadable_file_in_a_directory(project, capsys):
    (project / "pkg").mkdir()
    (project / "pkg" / "model.py").write_text(SYNC)
    (project / "pkg" / "dangling.py").symlink_to(project / "gone.py")  # listed, but cannot be opened
    rc, out, err = lint(capsys, "pkg")
    assert rc == 2 and out.startswith("pkg/model.py:7:16: TSL001")
    assert err.strip() == "pkg/dangling.py: error: cannot read: No such file or directory"


@pytest.mark.parametrize("toml, words", [
    ('[tool.torchsync-lint]\ninclude-cold = "yes"\n', ["include-cold", "expected a bool", "'yes'"]),
    ('[tool.torchsync-lint]\nselect = ["E501"]\n', ["select", "'E501'", "code prefix"]),
    ('[tool.torchsync-lint]\nignore = "TSL001"\n', ["ignore", "expected a list"]),
    ('[tool.torchsync-lint]\nhot-functions = [1]\n', ["hot-functions", "list of strings"]),
    ('[tool.torchsync-lint]\nper-file-ignores = {"a.py" = 3}\n', ["per-file-ignores.a.py", "list of codes"]),
    ('[tool.torchsync-lint]\nno-such-key = 1\n', ["unknown key 'no-such-key'"]),
    ('[tool.torchsync-lint]\nselect = ["TSL" "X"]\nignore = []\n', ["invalid TOML", "line 2"]),
    ('[tool]\ntorchsync-lint = 3\n', ["must be a table"]),
])
def test_bad_config_value(project, capsys, toml, words):
    (project / "pyproject.toml").write_text(toml)
    rc, out, err = lint(capsys, "good.py")
    assert rc == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("torchsync-lint: error: ") and str(project / "pyproject.toml") in line
    for word in words:
        assert word in line


def test_no_traceback_from_a_subprocess_on_every_kind_of_bad_input(project):
    for name, (data, _) in BAD_FILES.items():
        (project / name).write_bytes(data)
    (project / "empty.py").write_text("")
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", ".", "missing.py", "empty.py"], cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("./good.py:7:16: TSL001")
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert len(errors) == len(BAD_FILES) + 1
    assert "empty.py: note: empty file, nothing to check" in proc.stderr


def test_internal_error_in_a_rule_is_reported_per_file(project, capsys, monkeypatch):
    from torchsync_lint.check import file as file_check

    real = file_check.check_source

    def flaky(source, path, *args, **kwargs):
        if path.endswith("boom.py"):
            raise KeyError("simulated bug")
        return real(source, path, *args, **kwargs)

    monkeypatch.setattr(file_check, "check_source", flaky)
    (project / "boom.py").write_text(SYNC)
    rc, out, err = lint(capsys, "boom.py", "good.py")
    assert rc == 2 and out.startswith(GOOD_FINDING)
    assert err.startswith("boom.py: error: internal error, please report: KeyError")


CHAIN = " + ".join(["1"] * 20_000)
TOO_COSTLY = {
    # name: (text, the start of the message on stderr, and words in it); LibCST would take minutes
    # on the first two, and crash (stack overflow) on the others (CPython rejects the first of them)
    "chain.py": (f"import torch\nx = {CHAIN}\n", "chain.py:2: error: file skipped: ",
                 "19999 chained operations over 39998 tokens"),
    "chain_no_torch.py": ("import os\n\n\ndef f():\n    return (\n        " + CHAIN.replace(" + ", "\n        + ")
                          + "\n    )\n", "chain_no_torch.py:5: error: file skipped: ", "19999 chained operations"),
    "deep.py": ("import torch\nx = " + "[" * 5000 + "]" * 5000 + "\n", "deep.py:2:",
                "error: syntax error: too many nested parentheses"),
    "elifs.py": ("import torch\nif x: pass\n" + "elif x: pass\n" * 20_000, "elifs.py:2: error: file skipped: ",
                 "an if statement with 20000 elif clauses"),
    "ands.py": ("import torch\nx = " + " and ".join(["a"] * 20_000) + "\n", "ands.py:2: error: file skipped: ",
                "19999 chained operations"),
}


def test_files_too_costly_for_libcst_are_skipped_quickly(project):
    for name, (text, _, _) in TOO_COSTLY.items():
        (project / name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "--no-cache", *TOO_COSTLY, "good.py"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stdout.startswith(GOOD_FINDING)
    lines = proc.stderr.splitlines()
    assert len(lines) == len(TOO_COSTLY)
    for (_, start, words), line in zip(TOO_COSTLY.values(), lines):
        assert line.startswith(start) and words in line, line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_pipes_and_devices_are_not_read(project):
    (project / "pkg").mkdir()
    (project / "pkg" / "model.py").write_text(SYNC)
    os.mkfifo(project / "pkg" / "fifo.py")  # opening it blocks until someone writes
    (project / "pkg" / "zero.py").symlink_to("/dev/zero")  # reading it never ends
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "--no-cache", "pkg"], cwd=project,
                          capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stderr) == (1, "")  # skipped in a folder
    assert proc.stdout.startswith("pkg/model.py:7:16: TSL001")
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "--no-cache", "pkg/fifo.py", "pkg/zero.py"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["pkg/fifo.py: error: not a regular file (a pipe, socket or device)",
                                        "pkg/zero.py: error: not a regular file (a pipe, socket or device)"]
