"""The flake8 plugin: same findings as the CLI, flake8's noqa and config apply, one LibCST parse."""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import libcst
import pytest

from torchsync_lint import cli
from torchsync_lint.flake8_plugin import TorchSyncChecker

REPO = Path(__file__).resolve().parent.parent
SEED_CASES = REPO.parent / "shared" / "cases"
SYNC = textwrap.dedent("""\
    import torch
    from torch import nn


    class Loss(nn.Module):
        def forward(self, x):
            total = x.sum().item()
            peak = x.max().item()  # noqa: TSL001
            return total + peak
""")


def flake8(args, cwd):
    proc = subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def tsl_lines(out):
    return sorted(line for line in out.splitlines() if ": TSL" in line)


def cli_lines(capsys, path):
    """The CLI's text output for one file on its own, without any pyproject settings."""
    # --quiet: no summary line; TSL901 (unused noqa) is the CLI's own, flake8 does not report it
    rc = cli.main(["--isolated", "--quiet", "--ignore", "TSL901", str(path)])
    out, err = capsys.readouterr()
    assert rc in (0, 1), err
    return sorted(out.splitlines())


def test_plugin_is_registered():
    proc = flake8(["--version"], REPO)
    assert "torchsync-lint" in proc.stdout.replace("\n", " ")


def test_flake8_picks_the_tree_plugin_kind():
    import inspect

    params = list(inspect.signature(TorchSyncChecker.__init__).parameters)
    assert params[1:] == ["tree", "lines", "filename"]


def test_one_libcst_parse_and_no_ast_parse(monkeypatch, tmp_path):
    path = tmp_path / "loss.py"
    path.write_text(SYNC)
    # once unpatched: the modules the plugin imports lazily are imported, which pytest's import
    # hook does with ast (when this test runs first)
    list(TorchSyncChecker(None, SYNC.splitlines(True), str(path)).run())
    parses = []
    real = libcst.parse_module
    monkeypatch.setattr(libcst, "parse_module", lambda *a, **k: parses.append(1) or real(*a, **k))

    def no_ast(*args, **kwargs):
        raise AssertionError("the plugin must not parse with ast again")

    monkeypatch.setattr(ast, "parse", no_ast)
    TorchSyncChecker.parse_options(SimpleNamespace(tsl_hot_functions=[], tsl_cold_functions=[],
                                                   tsl_include_cold=False, select=None, extend_select=None))
    got = list(TorchSyncChecker(None, SYNC.splitlines(True), str(path)).run())
    monkeypatch.undo()  # pytest itself parses with ast to report a failure
    assert parses == [1]
    # flake8 filters inline noqa itself, so the plugin yields line 8 too; col is 0-based
    assert [(line, col, text.split()[0]) for line, col, text, _ in got] == [(7, 16, "TSL001"), (8, 15, "TSL001")]
    assert all(kind is TorchSyncChecker for *_, kind in got)


def test_parse_options_turns_explicit_selectors_into_rule_selection():
    def opts(select=None, extend_select=None):
        return SimpleNamespace(tsl_hot_functions=["a", "B.c"], tsl_cold_functions=[], tsl_include_cold=True,
                               select=select, extend_select=extend_select)

    TorchSyncChecker.parse_options(opts())
    assert TorchSyncChecker.select == () and TorchSyncChecker.hot_functions == ("a", "B.c")
    assert TorchSyncChecker.include_cold is True
    TorchSyncChecker.parse_options(opts(select=["E", "W"]))
    assert TorchSyncChecker.select == ()
    TorchSyncChecker.parse_options(opts(select=["E", "TSL1"], extend_select=["tsl901"]))
    assert TorchSyncChecker.select == ("TSL", "TSL1", "TSL901")


def test_same_findings_as_the_cli_and_flake8_noqa(tmp_path, capsys, monkeypatch):
    (tmp_path / "loss.py").write_text(SYNC)
    monkeypatch.chdir(tmp_path)
    proc = flake8(["--select", "TSL", "loss.py"], tmp_path)
    assert proc.returncode == 1
    got = tsl_lines(proc.stdout)
    assert got == cli_lines(capsys, "loss.py")
    assert len(got) == 1 and got[0].startswith("loss.py:7:17: TSL001 ")
    # the noqa'd line is flake8's to silence: --disable-noqa brings it back
    proc = flake8(["--select", "TSL", "--disable-noqa", "loss.py"], tmp_path)
    assert [line.split(":")[1] for line in tsl_lines(proc.stdout)] == ["7", "8"]


def _lintable_files():
    files = sorted(SEED_CASES.glob("*.py")) if SEED_CASES.is_dir() else []
    files += sorted((REPO / "tests" / "fixtures").glob("*.py"))
    files += sorted((REPO / "examples").glob("*.py"))
    return files


def test_same_findings_as_the_cli_on_seed_cases_fixtures_and_examples(capsys):
    """Line for line, on every file alone (whatever rules exist at the time)."""
    files = _lintable_files()
    proc = flake8(["--isolated", "--select", "TSL", *map(str, files)], REPO)
    by_file = {}
    for line in tsl_lines(proc.stdout):
        by_file.setdefault(line.split(":", 1)[0], []).append(line)
    total = 0
    for path in files:
        want = cli_lines(capsys, path)
        total += len(want)
        assert sorted(by_file.get(str(path), [])) == want, path
    assert total > 0, "the CLI found nothing to compare"
    if SEED_CASES.is_dir():
        seeds = sum(len(cli_lines(capsys, p)) for p in SEED_CASES.glob("*_before.py"))
        assert seeds > 0, "the CLI found nothing in the seed cases"


NOQA_LINES = textwrap.dedent("""\
    import torch
    from torch import nn


    class Loss(nn.Module):
        def forward(self, x):
            a = x.item()  # noqa
            b = x.item()  # noqa: TSL001
            c = x.item()  # noqa:TSL001,E501
            d = x.item()  # noqa: E501 TSL0
            e = x.item()  # NOQA: TSL001
            f = x.item()  # noqa: tsl001
            g = x.item()  #noqa
            h = x.item()  # noqa : TSL001
            i = x.item()  # noqa: E501
            j = x.item()  # noqa:  TSL001
            k = x.item()  # type: ignore # noqa: TSL002
            m = (x.item(),
                 x.item())  # noqa: TSL001
            n = \"\"\"
            \"\"\" + str(x.item())  # noqa: TSL001
            o = x.item() + \\
                x.item()  # noqa: TSL001
            return a, b, c, d, e, f, g, h, i, j, k, m, n, o
""")


def test_noqa_pattern_is_flake8s():
    from flake8.defaults import NOQA_INLINE_REGEXP

    from torchsync_lint.check.noqa import NOQA_INLINE

    assert NOQA_INLINE is NOQA_INLINE_REGEXP  # imported, not copied: it cannot drift from flake8's


def test_noqa_is_read_as_flake8_reads_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "noqa.py").write_text(NOQA_LINES)
    monkeypatch.chdir(tmp_path)
    every = tsl_lines(flake8(["--select", "TSL", "--disable-noqa", "noqa.py"], tmp_path).stdout)
    assert len(every) == 16  # every .item() is found, so each comment is put to the test
    got = tsl_lines(flake8(["--select", "TSL", "noqa.py"], tmp_path).stdout)
    assert got == cli_lines(capsys, "noqa.py")
    assert [line.split(":")[1] for line in got] == ["12", "13", "15", "17", "18"]


def test_extend_ignore_and_select(tmp_path):
    (tmp_path / "loss.py").write_text(SYNC)
    assert tsl_lines(flake8(["--extend-ignore", "TSL001", "loss.py"], tmp_path).stdout) == []
    assert tsl_lines(flake8(["--select", "E", "loss.py"], tmp_path).stdout) == []
    assert len(tsl_lines(flake8(["loss.py"], tmp_path).stdout)) == 1  # on by default


@pytest.mark.parametrize("config_file", ["setup.cfg", ".flake8", "tox.ini"])
def test_per_file_ignores_from_flake8_config(tmp_path, config_file):
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(SYNC)
    (tmp_path / "new.py").write_text(SYNC)
    (tmp_path / config_file).write_text("[flake8]\nselect = TSL\nper-file-ignores =\n    legacy/*.py: TSL001\n")
    proc = flake8(["."], tmp_path)
    assert [line.split(":")[0] for line in tsl_lines(proc.stdout)] == ["./new.py"]


def test_hot_functions_option_and_config(tmp_path):
    src = "import torch\n\n\nclass Runner:\n    def setup(self, x: torch.Tensor):\n        return x.item()\n"
    (tmp_path / "run.py").write_text(src)
    assert tsl_lines(flake8(["--select", "TSL", "run.py"], tmp_path).stdout) == []
    hot = tsl_lines(flake8(["--select", "TSL", "--tsl-hot-functions", "other,Runner.setup", "run.py"], tmp_path).stdout)
    assert [line.split(":")[1] for line in hot] == ["6"]
    (tmp_path / ".flake8").write_text("[flake8]\nselect = TSL\ntsl-hot-functions = setup\n")
    assert tsl_lines(flake8(["run.py"], tmp_path).stdout) == hot
    (tmp_path / ".flake8").write_text("[flake8]\nselect = TSL\ntsl-include-cold = true\n")
    assert tsl_lines(flake8(["run.py"], tmp_path).stdout) == hot
    (tmp_path / ".flake8").write_text("[flake8]\nselect = TSL\ntsl-hot-functions = setup\ntsl-cold-functions = setup\n")
    assert tsl_lines(flake8(["run.py"], tmp_path).stdout) == hot  # hot wins: it runs every step


def test_file_level_noqa_applies_under_flake8(tmp_path):
    (tmp_path / "loss.py").write_text("# torchsync-lint: noqa\n" + SYNC)
    assert tsl_lines(flake8(["--select", "TSL", "loss.py"], tmp_path).stdout) == []


def test_stdin(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TSL", "-"], input=SYNC, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert [line.split(":", 3)[:3] for line in tsl_lines(proc.stdout)] == [["stdin", "7", "17"]]


def test_syntax_errors_are_flake8s_business(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\ndef f(:\n")
    proc = flake8(["--select", "TSL,E999", "bad.py"], tmp_path)
    assert "E999" in proc.stdout and "TSL" not in proc.stdout


def test_plugin_needs_no_file_on_disk():
    checker = TorchSyncChecker(None, SYNC.splitlines(True), "not/on/disk.py")
    assert [line for line, *_ in checker.run()] == [7, 8]


def test_libcst_failure_is_one_error_for_the_file(caplog, monkeypatch):
    from torchsync_lint import SourceError
    from torchsync_lint.finding import FileError

    def fails(*args, **kwargs):
        raise SourceError(FileError("x.py", "LibCST cannot parse this file: pretend", 3, 5))

    monkeypatch.setattr("torchsync_lint.flake8_plugin.lint_source", fails)
    got = list(TorchSyncChecker(None, ["import torch\n"], "x.py").run())
    assert got == [(3, 4, "TSL000 LibCST cannot parse this file: pretend", TorchSyncChecker)]
    assert "skipped x.py" in caplog.text


CRASH_ON_BOOM = textwrap.dedent("""\
    import sys
    from flake8.main.cli import main
    from torchsync_lint.check import file as check_file  # lint_source imports it when a file is checked

    real = check_file.check_source


    def buggy(source, path, *args, **kwargs):  # a bug of ours, met only in one file
        if path.endswith("boom.py"):
            raise KeyError("simulated bug")
        return real(source, path, *args, **kwargs)


    check_file.check_source = buggy
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_internal_error_is_one_error_for_that_file(tmp_path, jobs):
    (tmp_path / "boom.py").write_text(SYNC)
    (tmp_path / "loss.py").write_text(SYNC)
    argv = ["--select", "TSL", "--jobs", jobs, "boom.py", "loss.py"]
    proc = subprocess.run([sys.executable, "-c", CRASH_ON_BOOM, *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    boom, loss = tsl_lines(proc.stdout)
    assert boom == "boom.py:1:1: TSL000 internal error, please report: KeyError: 'simulated bug' (at <string>:10)"
    assert loss.startswith("loss.py:7:17: TSL001 ")  # the other file is still linted


def _null_bytes_raise_value_error():
    try:
        compile("x = 1  # \x00", "x.py", "exec")
    except ValueError:
        return True
    except SyntaxError:
        return False
    return False


@pytest.mark.parametrize("name, tail, words", [
    # flake8 falls back to latin-1 where CPython (and the CLI) refuse the file
    ("latin1.py", b"# caf\xe9\n", "cannot decode file (invalid continuation byte)"),
    # LibCST reads on; CPython stops. Where CPython says so with a ValueError (3.10, early 3.11),
    # flake8 itself stops with a traceback, before any plugin runs.
    pytest.param("nul.py", b"# a\x00b\n", "cannot contain null bytes", marks=pytest.mark.skipif(
        _null_bytes_raise_value_error(), reason="flake8 crashes on null bytes with this Python")),
])
def test_cli_and_flake8_agree_on_undecodable_files_and_null_bytes(tmp_path, capsys, monkeypatch, name, tail, words):
    (tmp_path / name).write_bytes(SYNC.encode() + tail)
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["--isolated", "--no-cache", "--quiet", name])
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")  # an error for that file, no finding
    [cli_error] = err.splitlines()
    assert cli_error.startswith(f"{name}:") and words in cli_error
    proc = flake8(["--select", "TSL,E9", name], tmp_path)
    assert proc.returncode == 1
    [flake8_error] = proc.stdout.splitlines()  # no finding either
    assert flake8_error.startswith(f"{name}:1:1: ") and words in flake8_error


@pytest.fixture(autouse=True)
def _reset_plugin_options():
    yield
    TorchSyncChecker.select = TorchSyncChecker.hot_functions = TorchSyncChecker.cold_functions = ()
    TorchSyncChecker.include_cold = False
