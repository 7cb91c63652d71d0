"""The ``torchsync-lint`` command, behaviour by behaviour.

Exit codes and ``python -m`` run in a subprocess; everything else calls ``cli.main`` in-process.
The sources use TSL001 (``.item()``) only, so the tests do not depend on other rules' details.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from torchsync_lint import __version__, cli
from torchsync_lint.rules.registry import all_rules

SYNC = textwrap.dedent("""\
    import torch
    from torch import nn


    class Loss(nn.Module):
        def forward(self, x):
            total = x.sum().item()
            return total
""")
SYNC_LINE, SYNC_COL = 7, 17
CLEAN = "import torch\n\n\ndef f(x):\n    return x + 1\n"
FINDING_KEYS = {"path", "line", "col", "end_line", "end_col", "code", "name", "message"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project (its own pyproject.toml stops the config search); cwd is its root."""
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def codes_at(out):
    """(path, line, code) of each finding in text output (the closing summary line skipped)."""
    got = []
    for line in out.splitlines():
        if line.startswith("Found "):
            continue
        path, lineno, _col, rest = line.split(":", 3)
        got.append((path, int(lineno), rest.split()[0]))
    return got


# -- subprocess: exit codes, python -m, the console script ---------------------------------------


def subprocess_run(args, cwd):
    return subprocess.run([sys.executable, "-m", "torchsync_lint", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case, expected", [("clean", 0), ("findings", 1), ("usage", 2), ("missing", 2)])
def test_exit_codes(project, case, expected):
    write(project, "clean.py", CLEAN)
    write(project, "sync.py", SYNC)
    args = {"clean": ["clean.py"], "findings": ["sync.py"], "usage": ["--no-such-flag", "sync.py"],
            "missing": ["clean.py", "nope.py"]}[case]
    proc = subprocess_run(args, project)
    assert proc.returncode == expected, proc.stderr
    assert "Traceback" not in proc.stderr


def test_exit_code_for_a_bad_config(project):
    write(project, "pyproject.toml", "[tool.torchsync-lint]\nselect = 3\n")
    write(project, "sync.py", SYNC)
    proc = subprocess_run(["sync.py"], project)
    assert proc.returncode == 2
    assert "pyproject.toml" in proc.stderr and "select" in proc.stderr


def test_python_m_runs_the_linter(project):
    write(project, "sync.py", SYNC)
    proc = subprocess_run(["sync.py"], project)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"sync.py:{SYNC_LINE}:{SYNC_COL}: TSL001 ")


def test_python_m_version():
    proc = subprocess_run(["--version"], ".")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"torchsync-lint {__version__}"


def test_console_script_is_installed(project):
    script = os.path.join(os.path.dirname(sys.executable), "torchsync-lint")
    if not os.path.exists(script):
        pytest.skip("torchsync-lint is not installed next to this interpreter (pip install .)")
    write(project, "sync.py", SYNC)
    proc = subprocess.run([script, "sync.py"], cwd=project, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "TSL001" in proc.stdout


# -- in-process ---------------------------------------------------------------------------------


def test_version_in_process(capsys):
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.strip() == f"torchsync-lint {__version__}"


def test_help_exits_zero(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0 and "--select" in out and "--format" in out


def test_no_paths_is_a_usage_error(capsys):
    rc, _, err = run(capsys)
    assert rc == 2 and "no paths given" in err


@pytest.mark.parametrize("argv", [["--format", "xml", "x.py"], ["--jobs", "0", "x.py"], ["--select", "E1", "x.py"]])
def test_bad_arguments_are_usage_errors(project, capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == "" and "error" in err


def test_text_format(project, capsys):
    write(project, "sync.py", SYNC)
    rc, out, err = run(capsys, "sync.py")
    assert rc == 1 and err == ""
    message = all_rules()["TSL001"].message
    assert out == f"sync.py:{SYNC_LINE}:{SYNC_COL}: TSL001 {message}\nFound 1 finding.\n"


def test_clean_file_prints_nothing(project, capsys):
    write(project, "clean.py", CLEAN)
    assert run(capsys, "clean.py") == (0, "All checks passed.\n", "")  # one line, as Ruff says it


def test_exit_zero(project, capsys):
    write(project, "sync.py", SYNC)
    rc, out, _ = run(capsys, "--exit-zero", "sync.py")
    assert rc == 0 and "TSL001" in out


def test_directories_are_linted_recursively(project, capsys):
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/sub/deeper/model.py", SYNC)
    write(project, "pkg/sub/notes.txt", SYNC)  # not Python
    write(project, "pkg/.venv/lib/site.py", SYNC)  # excluded by default
    write(project, "pkg/build/gen.py", SYNC)  # excluded by default
    write(project, "top.py", SYNC)
    rc, out, _ = run(capsys, ".")
    paths = sorted(os.path.normpath(p) for p, _, _ in codes_at(out))
    assert rc == 1
    assert paths == [os.path.join("pkg", "sub", "deeper", "model.py"), "top.py"]


def test_exclude_and_extend_exclude_from_config(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nextend-exclude = ["generated", "old_*.py"]\n')
    write(project, "generated/a.py", SYNC)
    write(project, "old_model.py", SYNC)
    write(project, "model.py", SYNC)
    rc, out, _ = run(capsys, ".")
    assert [os.path.normpath(p) for p, _, _ in codes_at(out)] == ["model.py"]


def test_json_format(project, capsys):
    write(project, "sync.py", SYNC)
    rc, out, _ = run(capsys, "--format", "json", "sync.py")
    data = json.loads(out)
    assert rc == 1 and isinstance(data, list) and len(data) == 1
    f = data[0]
    assert FINDING_KEYS <= set(f)
    assert (f["path"], f["line"], f["col"], f["code"], f["name"]) == ("sync.py", SYNC_LINE, SYNC_COL, "TSL001", "item-call")
    assert f["end_line"] == SYNC_LINE and f["end_col"] > f["col"]
    assert isinstance(f["message"], str) and f["message"]


def test_json_format_when_clean_is_an_empty_array(project, capsys):
    write(project, "clean.py", CLEAN)
    rc, out, _ = run(capsys, "--format", "json", "clean.py")
    assert rc == 0 and json.loads(out) == []


def check_sarif(doc):
    """The parts of SARIF 2.1.0 that the schema requires, and that code scanning reads."""
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    assert isinstance(doc["runs"], list) and len(doc["runs"]) == 1
    run_ = doc["runs"][0]
    driver = run_["tool"]["driver"]
    assert isinstance(driver["name"], str) and driver["name"]
    rules = driver.get("rules", [])
    for r in rules:
        assert isinstance(r["id"], str)
        assert isinstance(r["shortDescription"]["text"], str)
    for res in run_["results"]:
        assert isinstance(res["message"]["text"], str) and res["message"]["text"]
        assert res["level"] in ("none", "note", "warning", "error")
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        for loc in res["locations"]:
            phys = loc["physicalLocation"]
            assert isinstance(phys["artifactLocation"]["uri"], str)
            region = phys["region"]
            assert region["startLine"] >= 1 and region["startColumn"] >= 1
            assert region["endLine"] >= region["startLine"]
    for inv in run_.get("invocations", []):
        assert isinstance(inv["executionSuccessful"], bool)
        for note in inv.get("toolExecutionNotifications", []):
            assert isinstance(note["message"]["text"], str)
            assert note["level"] in ("none", "note", "warning", "error")
    return run_


def test_sarif_format(project, capsys):
    write(project, "sync.py", SYNC)
    rc, out, _ = run(capsys, "--format", "sarif", "sync.py")
    run_ = check_sarif(json.loads(out))
    assert rc == 1
    [res] = run_["results"]
    assert res["ruleId"] == "TSL001"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (SYNC_LINE, SYNC_COL)
    assert run_["invocations"][0]["executionSuccessful"] is True


def test_sarif_reports_unreadable_files_as_notifications(project, capsys):
    write(project, "sync.py", SYNC)
    write(project, "broken.py", "import torch\ndef f(:\n")
    rc, out, _ = run(capsys, "--format", "sarif", "sync.py", "broken.py")
    run_ = check_sarif(json.loads(out))
    assert rc == 2
    assert run_["invocations"][0]["executionSuccessful"] is False
    [note] = run_["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_github_format(project, capsys):
    write(project, "sync.py", SYNC)
    write(project, "broken.py", "import torch\ndef f(:\n")
    rc, out, _ = run(capsys, "--format", "github", "sync.py", "broken.py")
    lines = out.splitlines()
    assert rc == 2
    assert lines[0].startswith(f"::warning file=sync.py,line={SYNC_LINE},col={SYNC_COL},")
    assert "title=TSL001 item-call::" in lines[0]
    assert lines[1].startswith("::error file=broken.py,line=2,")


def test_explain_by_code_and_by_name(capsys):
    rc, out, _ = run(capsys, "--explain", "TSL001")
    assert rc == 0
    assert out.splitlines()[2] == "# TSL001 `item-call`"
    for section in ("## What it does", "## Example", "## Use instead"):
        assert section in out
    assert run(capsys, "--explain", "item-call")[1] == out
    assert run(capsys, "--explain", "tsl001")[1] == out


def test_explain_unknown_code(capsys):
    rc, out, err = run(capsys, "--explain", "TSL999")
    assert rc == 2 and out == "" and "unknown rule 'TSL999'" in err


def test_list_rules(capsys):
    rc, out, _ = run(capsys, "--list-rules")
    assert rc == 0
    from torchsync_lint.check.noqa import META_RULES

    assert [line.split()[0] for line in out.splitlines()] == sorted([*all_rules(), *(r.code for r in META_RULES)])


@pytest.mark.parametrize("argv, expect", [
    ([], True),
    (["--select", "TSL"], True),
    (["--select", "TSL0"], True),
    (["--select", "TSL001"], True),
    (["--select", "TSL1"], False),
    (["--select", "tsl2,TSL3"], False),
    (["--ignore", "TSL"], False),
    (["--ignore", "TSL00"], False),
    (["--ignore", "TSL002"], True),
    (["--select", "TSL001", "--ignore", "TSL0"], True),  # the longer prefix wins
    (["--select", "TSL0", "--ignore", "TSL001"], False),
    (["--select", "TSL1", "--extend-select", "TSL001"], True),
])
def test_select_and_ignore_by_prefix(project, capsys, argv, expect):
    write(project, "sync.py", SYNC)
    rc, out, _ = run(capsys, *argv, "sync.py")
    assert ("TSL001" in out) is expect
    assert rc == (1 if expect else 0)


def test_config_from_nearest_pyproject(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nignore = ["TSL001"]\n')
    write(project, "sub/pyproject.toml", '[tool.torchsync-lint]\nselect = ["TSL"]\n')
    write(project, "sub/a.py", SYNC)
    write(project, "b.py", SYNC)
    assert run(capsys, "b.py")[0] == 0  # the root config ignores TSL001
    assert run(capsys, "sub/a.py")[0] == 1  # the nearer config does not
    assert run(capsys, "--isolated", "b.py")[0] == 1  # no config at all
    assert run(capsys, "--config", "sub/pyproject.toml", "b.py")[0] == 1
    rc, _, err = run(capsys, "--config", "missing.toml", "b.py")
    assert rc == 2 and "missing.toml" in err


def test_pyproject_without_our_table_is_passed_over(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nignore = ["TSL001"]\n')
    write(project, "sub/pyproject.toml", '[project]\nname = "sub"\n[tool.other]\nx = 1\n')
    write(project, "sub/a.py", SYNC)
    assert run(capsys, "sub/a.py")[0] == 0  # the root's settings apply


@pytest.mark.parametrize("table, expect", [
    ('extend-select = ["TSL001"]', True),
    ('select = ["TSL1"]\nextend-select = ["TSL001"]', True),
    ('extend-select = ["TSL001"]\nselect = ["TSL1"]', True),  # key order does not matter
    ('select = ["TSL1"]', False),
])
def test_extend_select_in_config(project, capsys, table, expect):
    write(project, "pyproject.toml", "[tool.torchsync-lint]\n" + table + "\n")
    write(project, "sync.py", SYNC)
    assert run(capsys, "sync.py")[0] == (1 if expect else 0)


def test_config_hot_functions_include_cold_and_cli_flags(project, capsys):
    src = textwrap.dedent("""\
        import torch

        scale = torch.ones(1, device="cuda").item()


        def helper(x: torch.Tensor):
            return x.item()


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bias = torch.zeros(1, device="cuda").item()
    """)
    write(project, "m.py", src)
    rc, out, _ = run(capsys, "m.py")
    assert [ln for _, ln, _ in codes_at(out)] == [7]  # module level and __init__ are cold
    rc, out, _ = run(capsys, "--include-cold", "m.py")
    assert [ln for _, ln, _ in codes_at(out)] == [3, 7, 13]
    write(project, "pyproject.toml", "[tool.torchsync-lint]\ninclude-cold = true\n")
    assert [ln for _, ln, _ in codes_at(run(capsys, "m.py")[1])] == [3, 7, 13]
    write(project, "pyproject.toml", '[tool.torchsync-lint]\ncold-functions = ["helper"]\n')
    assert codes_at(run(capsys, "m.py")[1]) == []
    assert codes_at(run(capsys, "--cold-function", "helper", "--isolated", "m.py")[1]) == []


def test_hot_function_flag_and_config(project, capsys):
    # set-up methods are cold (not reported); naming one hot reports it
    src = textwrap.dedent("""\
        import torch


        class Runner:
            def setup(self, x: torch.Tensor):
                return x.item()
    """)
    write(project, "m.py", src)
    assert run(capsys, "m.py")[0] == 0
    rc, out, _ = run(capsys, "--hot-function", "setup", "m.py")
    assert rc == 1 and [ln for _, ln, _ in codes_at(out)] == [6]
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nhot-functions = ["Runner.setup"]\n')
    assert [ln for _, ln, _ in codes_at(run(capsys, "m.py")[1])] == [6]


def test_per_file_ignores(project, capsys):
    write(project, "pyproject.toml",
          '[tool.torchsync-lint.per-file-ignores]\n"legacy/*.py" = ["TSL0"]\n"scripts/run.py" = "TSL001"\n')
    write(project, "legacy/old.py", SYNC)
    write(project, "scripts/run.py", SYNC)
    write(project, "model.py", SYNC)
    rc, out, _ = run(capsys, ".")
    assert [os.path.normpath(p) for p, _, _ in codes_at(out)] == ["model.py"]
    # patterns are relative to the pyproject's folder, wherever the command runs
    os.chdir(project / "legacy")
    assert run(capsys, "old.py")[0] == 0


NOQA_CASES = [
    ("# noqa", False),
    ("# noqa: TSL001", False),
    ("# noqa:TSL001", False),
    ("# NOQA: TSL001", False),
    ("# noqa: tsl001", True),  # flake8 compares codes case-sensitively
    ("# noqa: TSL0", False),  # prefix, as flake8 matches
    ("# noqa: E501, TSL001", False),
    ("# noqa: E501 TSL001", False),
    ("# noqa:TSL001,W291", False),
    ("#noqa", True),  # flake8 wants "# noqa", with the space
    ("# type: ignore  # noqa: TSL001", False),
    ("# noqa: E501", True),
    ("# noqa: TSL002", True),
    ("# noqa : TSL001", False),  # flake8 reads a bare "# noqa" here: every code
    ("# not noqa'd", True),
]


@pytest.mark.parametrize("comment, reported", NOQA_CASES)
def test_inline_noqa(project, capsys, comment, reported):
    write(project, "sync.py", SYNC.replace("x.sum().item()", "x.sum().item()  " + comment))
    rc, out, _ = run(capsys, "sync.py")
    assert ("TSL001" in out) is reported, (comment, out)


def test_noqa_only_silences_its_own_line(project, capsys):
    src = SYNC.replace("return total", "return total + x.max().item()  # noqa: TSL001")
    write(project, "sync.py", src)
    assert [ln for _, ln, _ in codes_at(run(capsys, "sync.py")[1])] == [SYNC_LINE]


@pytest.mark.parametrize("header, reported", [
    ("# torchsync-lint: noqa", False),
    ("# torchsync-lint: noqa: TSL001", False),
    ("# torchsync-lint: noqa: TSL0", False),
    ("#torchsync-lint:noqa", False),
    ("# torchsync-lint: noqa: TSL1", True),
    ("x = 1  # torchsync-lint: noqa", True),  # file level only as a comment line of its own
])
def test_file_level_noqa(project, capsys, header, reported):
    write(project, "sync.py", header + "\n" + SYNC)
    rc, out, _ = run(capsys, "sync.py")
    assert ("TSL001" in out) is reported


def test_stdout_has_findings_and_stderr_has_errors(project, capsys):
    write(project, "sync.py", SYNC)
    rc, out, err = run(capsys, "sync.py", "missing.py")
    assert rc == 2
    assert out.startswith("sync.py:") and "missing.py" not in out
    assert err.strip() == "missing.py: error: no such file or directory"


def test_parallel_run_gives_the_same_result(project, capsys):
    for i in range(20):
        write(project, f"pkg/m{i:02}.py", SYNC if i % 3 == 0 else CLEAN)
    serial = run(capsys, "--jobs", "1", "pkg")
    parallel = run(capsys, "--jobs", "2", "pkg")
    assert serial == parallel and serial[0] == 1
    assert len(codes_at(serial[1])) == 7
