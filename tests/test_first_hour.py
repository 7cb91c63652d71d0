"""What a new user meets in the first hour (issue 20), through the real command in a child
process: stdin fixing as editors call it, the settings/files/fixes flags, honest one-line
messages (clean run, nothing checked, bad selector, full disk, closed pipe, link loop, a file too
large), fingerprints that do not depend on the folder the run starts from, and cache safety."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXES = REPO / "tests" / "fixtures" / "fixes"
BEFORE = (FIXES / "TSL201_arange_before.py").read_text()
AFTER = (FIXES / "TSL201_arange_after.py").read_text()
UNSAFE_ONLY = (FIXES / "TSL405_ex_before.py").read_text()
SYNC = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x.sum().item()\n"
CLEAN = "import torch\n\n\ndef f(x):\n    return x * 2\n"
TIMEOUT = 300


def tsl(cwd, *args, stdin=None, **kw):
    return subprocess.run([sys.executable, "-m", "torchsync_lint", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT, **kw)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    return tmp_path


# -- editors: stdin ------------------------------------------------------------------------------
def test_stdin_fix_prints_the_fixed_buffer_and_leaves_the_disk_alone(project):
    on_disk = project / "model.py"
    on_disk.write_text("# what is saved differs from the editor's buffer\n")
    proc = tsl(project, "--stdin-filename", "model.py", "--fix", "-", stdin=BEFORE)
    assert proc.stdout == AFTER  # the whole buffer, fixed: what the editor puts back
    assert on_disk.read_text() == "# what is saved differs from the editor's buffer\n"
    assert proc.returncode == 0, proc.stderr  # nothing left to report
    assert "Fixed 1 finding (TSL201: 1)." in proc.stderr


def test_stdin_fix_reports_what_is_left_on_stderr(project):
    proc = tsl(project, "--stdin-filename", "ex.py", "--fix", "-", stdin=UNSAFE_ONLY)
    assert proc.stdout == UNSAFE_ONLY  # only unsafe fixes: the buffer comes back unchanged
    assert proc.returncode == 1
    assert "ex.py:" in proc.stderr and "TSL405" in proc.stderr
    assert not (project / "ex.py").exists()


def test_stdin_fix_only_and_unsafe(project):
    proc = tsl(project, "--stdin-filename", "ex.py", "--fix-only", "--unsafe-fixes", "-", stdin=UNSAFE_ONLY)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (FIXES / "TSL405_ex_after.py").read_text()


def test_stdin_diff_is_a_diff_of_the_buffer(project):
    (project / "model.py").write_text(CLEAN)
    proc = tsl(project, "--stdin-filename", "model.py", "--diff", "-", stdin=BEFORE)
    assert proc.returncode == 1
    assert proc.stdout.startswith("--- model.py\n+++ model.py\n")
    assert "+import torch\n" in proc.stdout
    assert (project / "model.py").read_text() == CLEAN


def test_stdin_fix_of_a_broken_buffer_gives_it_back_unchanged(project):
    broken = "import torch\n\n\ndef f(:\n    pass\n"
    proc = tsl(project, "--stdin-filename", "model.py", "--fix", "-", stdin=broken)
    assert proc.returncode == 2
    assert proc.stdout == broken  # an editor that replaces the buffer with stdout loses nothing
    assert "model.py:4" in proc.stderr


# -- CI and repositories: flags --------------------------------------------------------------------
def test_fix_only_exit_non_zero_on_fix_and_show_fixes(project):
    target = project / "m.py"
    target.write_text(BEFORE)
    (project / "ex.py").write_text(UNSAFE_ONLY)
    proc = tsl(project, "--fix-only", "--show-fixes", ".")
    assert proc.returncode == 0, proc.stderr  # the unsafe findings left are not reported
    assert target.read_text() == AFTER
    assert "TSL405" not in proc.stdout
    assert "Fixed 1 finding:\n- ./m.py:\n    1 \u00d7 TSL201 (host-sequence-index)\n" in proc.stderr
    target.write_text(BEFORE)
    proc = tsl(project, "--fix", "--exit-non-zero-on-fix", "--select", "TSL201", ".")
    assert proc.returncode == 1 and target.read_text() == AFTER  # fixed, nothing left, still 1
    proc = tsl(project, "--fix", "--exit-non-zero-on-fix", "--select", "TSL201", ".")
    assert proc.returncode == 0  # nothing to fix the second time


def test_show_fixes_marks_fixable_findings_without_fixing(project):
    (project / "m.py").write_text(BEFORE)
    proc = tsl(project, "--show-fixes", "m.py")
    assert proc.returncode == 1
    assert proc.stdout.startswith("m.py:7:18: TSL201 [*] indexing a GPU tensor")
    assert "1 fixable with --fix" in proc.stdout
    assert (project / "m.py").read_text() == BEFORE


def test_extend_ignore(project):
    (project / "m.py").write_text(SYNC)
    assert tsl(project, "m.py").returncode == 1
    proc = tsl(project, "--extend-ignore", "TSL001", "m.py")
    assert proc.returncode == 0, proc.stdout


def test_show_settings_and_show_files(project):
    (project / "pyproject.toml").write_text('[tool.torchsync-lint]\nignore = ["TSL006"]\nextend-exclude = ["skip"]\n')
    (project / "a.py").write_text(SYNC)
    (project / "skip").mkdir()
    (project / "skip" / "b.py").write_text(SYNC)
    (project / "notes.txt").write_text("x")
    proc = tsl(project, "--show-files", ".")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["./a.py"]
    proc = tsl(project, "--show-settings", "a.py")
    assert proc.returncode == 0
    settings = proc.stdout
    assert str(project / "pyproject.toml") in settings
    assert "TSL006" not in settings.split("enabled")[1].split("\n")[0]
    assert "TSL001" in settings and "skip" in settings
    as_json = json.loads(tsl(project, "--show-settings", "--output-format", "json", "a.py").stdout)
    assert "TSL006" not in as_json["enabled"] and as_json["source"] == str(project / "pyproject.toml")


def test_help_lists_every_subcommand(project):
    proc = tsl(project, "--help")
    assert proc.returncode == 0
    for sub in ("trace", "catalog", "server"):
        assert f"torchsync-lint {sub}" in proc.stdout


# -- honest one-line answers ---------------------------------------------------------------------
def test_clean_run_says_so_in_one_line(project):
    (project / "m.py").write_text(CLEAN)
    proc = tsl(project, "m.py")
    assert proc.returncode == 0 and proc.stdout == "All checks passed.\n"
    assert tsl(project, "-q", "m.py").stdout == ""
    assert tsl(project, "--output-format", "json", "m.py").stdout.strip() == "[]"


def test_nothing_checked_says_so(project):
    (project / "empty").mkdir()
    proc = tsl(project, "empty")
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines() == ["torchsync-lint: warning: no Python files found in empty: nothing checked"]
    (project / "m.py").write_text(SYNC)
    (project / "pyproject.toml").write_text("[tool.torchsync-lint]\nselect = []\n")
    proc = tsl(project, "m.py")
    assert "no rules selected: nothing checked" in proc.stderr


def test_bad_select_is_one_line(project):
    proc = tsl(project, "--select", "FOO", ".")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["torchsync-lint: error: argument --select: 'FOO' is not a code prefix like "
                                        "'TSL' or 'TSL101'"]


def test_explain_knows_every_listed_code(project):
    codes = [line.split()[0] for line in tsl(project, "--list-rules").stdout.splitlines()]
    assert "TSL901" in codes
    for code in codes:
        proc = tsl(project, "--explain", code)
        assert proc.returncode == 0, code
        assert f"\n# {code} `" in "\n" + proc.stdout, code


def test_closed_pipe_ends_quietly(project):
    for i in range(30):
        (project / f"m{i}.py").write_text(SYNC)
    proc = subprocess.run(f"'{sys.executable}' -m torchsync_lint --no-cache . | head -1", shell=True, cwd=project,
                          capture_output=True, text=True, timeout=TIMEOUT,
                          preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL))
    assert proc.stdout.count("\n") == 1
    assert proc.stderr == ""
    # the exit status itself: stdout is a pipe whose reader is gone
    r, w = os.pipe()
    os.close(r)
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "--no-cache", "."], cwd=project, stdout=w,
                          stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    os.close(w)
    assert proc.returncode == 0 and proc.stderr == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_on_stdout_is_one_line(project):
    (project / "m.py").write_text(SYNC)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "m.py"], cwd=project, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["torchsync-lint: error: cannot write the report: No space left on device"]


def test_symlink_loop_on_the_command_line(project):
    os.symlink("loop_b", project / "loop_a")
    os.symlink("loop_a", project / "loop_b")
    proc = tsl(project, "loop_a")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == "loop_a: error: symbolic link loop"


def test_file_too_large_is_refused_before_parsing(project):
    from torchsync_lint.check.source import MAX_FILE_CHARS as MAX_FILE_BYTES

    big = project / "big.py"
    line = "x = torch.ones(3)\n"
    with open(big, "w") as fh:
        fh.write("import torch\n")
        fh.write(line * (MAX_FILE_BYTES // len(line) + 1))
    (project / "m.py").write_text(SYNC)
    proc = tsl(project, "--no-cache", "big.py", "m.py")
    assert proc.returncode == 2
    [err] = [line for line in proc.stderr.splitlines() if "big.py" in line]
    assert err.startswith("big.py: error: file skipped: ") and "MB" in err
    assert "m.py:7:16: TSL001" in proc.stdout


# -- fingerprints ----------------------------------------------------------------------------------
def test_baseline_written_at_the_root_matches_from_a_subfolder(tmp_path):
    (tmp_path / ".git").mkdir()  # a repository without a pyproject.toml
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(SYNC)
    assert tsl(tmp_path, "--write-baseline", "b.json", "src").returncode == 0
    proc = tsl(src, "--baseline", "../b.json", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = tsl(src, "--baseline", "../b.json", "m.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- safety --------------------------------------------------------------------------------------
def test_cache_dir_from_a_repository_config_stays_in_the_project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "elsewhere"
    (project / "pyproject.toml").write_text(f'[tool.torchsync-lint]\ncache-dir = "{outside}"\n')
    (project / "m.py").write_text(SYNC)
    proc = tsl(project, "m.py")
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert "cache-dir" in line and "outside the project" in line
    assert not outside.exists()
    (project / "pyproject.toml").write_text('[tool.torchsync-lint]\ncache-dir = "../elsewhere"\n')
    assert tsl(project, "m.py").returncode == 2 and not outside.exists()
    assert tsl(project, "--no-cache", "m.py").returncode == 1  # no cache: nothing to refuse
    (project / "pyproject.toml").write_text('[tool.torchsync-lint]\ncache-dir = "build/tsl"\n')
    assert tsl(project, "m.py").returncode == 1 and (project / "build" / "tsl").is_dir()
    (project / "pyproject.toml").write_text('[tool.torchsync-lint]\ncache-dir = "../elsewhere"\n')
    # given on the command line, it is the user's own choice
    proc = tsl(project, "--cache-dir", str(outside), "m.py")
    assert proc.returncode == 1 and outside.is_dir()


# -- one glob dialect ----------------------------------------------------------------------------
@pytest.mark.parametrize("pattern, path, hit", [
    ("tests/*", "tests/test_a.py", True),
    ("tests/*", "tests/sub/test_b.py", True),  # everything under tests/, as before
    ("tests/*", "src/tests_x.py", False),
    ("conftest.py", "a/b/conftest.py", True),  # a name alone: at any depth, as in exclude
    ("test_*.py", "pkg/test_model.py", True),
    ("scripts/run.py", "scripts/run.py", True),
    ("scripts/run.py", "other/scripts/run.py", False),  # a slash anchors it at the config's folder
    ("**/generated/*.py", "a/b/generated/x.py", True),
    ("legacy/", "legacy/old.py", True),
])
def test_per_file_ignores_speak_the_exclude_dialect(tmp_path, pattern, path, hit):
    from torchsync_lint.check.globs import spec
    from torchsync_lint.check.suppress import per_file_codes
    from torchsync_lint.config import Config

    config = Config(per_file_ignores={pattern: ["TSL001"]}, root=str(tmp_path))
    assert (per_file_codes(config, str(tmp_path / path)) == ["TSL001"]) is hit
    # the same pattern as an exclude says the same
    assert bool(spec((pattern,)).match_file(path)) is hit


def test_cache_dir_that_is_no_path_is_one_line(tmp_path):
    """Found by the crash sweep: a null byte in cache-dir was a ValueError traceback."""
    (tmp_path / "pyproject.toml").write_text('[tool.torchsync-lint]\ncache-dir = "a\\u0000b"\n')
    (tmp_path / "m.py").write_text(SYNC)
    proc = tsl(tmp_path, "m.py")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert "cache-dir" in line and "is not a path" in line
