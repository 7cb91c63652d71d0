"""The pre-commit hook, through ``pre-commit try-repo`` as a user would first meet it.

try-repo clones the hook repository's committed state (plus changes to tracked files), so the test
commits a snapshot of this checkout's package files into a temporary repository and points
try-repo at that: the hook definition and code under test are exactly those of the working tree.
pre-commit then builds a virtualenv and pip-installs the package (from PyPI: libcst, flake8).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "torchsync_lint"]
SYNC = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x.item()\n"
CLEAN = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x * 2\n"

pytestmark = pytest.mark.slow

try:
    import pre_commit  # noqa: F401
except ImportError:  # pragma: no cover
    pre_commit = None


# pip's messages when the package index cannot be reached: the test then skips (it needs the network)
OFFLINE = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
           "Could not find a version that satisfies", "No matching distribution found", "Network is unreachable")


def skip_if_offline(proc):
    if proc.returncode != 0 and any(s in proc.stdout + proc.stderr for s in OFFLINE):
        pytest.skip("pre-commit could not install the hook's dependencies (no network?)")


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid",
                    "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                   cwd=cwd, check=True, capture_output=True, text=True)


def snapshot(dest: Path) -> Path:
    dest.mkdir()
    for name in SNAPSHOT:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest / name)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return dest


def try_repo(hook_repo: Path, project: Path, env):
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "torchsync-lint",
                           "--all-files", "--color", "never"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=900)


@pytest.mark.skipif(pre_commit is None, reason="pre-commit is not installed (pip install '.[test]')")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_hook_fails_on_a_finding_and_passes_when_clean(tmp_path):
    hook_repo = snapshot(tmp_path / "hook-repo")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "model.py").write_text(SYNC)
    (project / "notes.txt").write_text("x.item()\n")  # not Python: the hook never sees it
    git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)  # the hook must run the package pre-commit installed, not this checkout

    failed = try_repo(hook_repo, project, env)
    skip_if_offline(failed)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "torchsync-lint" in failed.stdout and "Failed" in failed.stdout
    assert "model.py:7:16: TSL001" in failed.stdout
    assert "notes.txt" not in failed.stdout

    (project / "model.py").write_text(CLEAN)
    git(project, "add", "-A")
    passed = try_repo(hook_repo, project, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def readme_snippet() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## pre-commit", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_readme_snippet_names_this_version():
    """The snippet names this version's tag once it exists (scripts/release.py writes both), and
    the main branch before the first release (tests/test_release.py: the revision exists)."""
    from torchsync_lint import __version__

    snippet = readme_snippet()
    tagged = subprocess.run(["git", "tag", "--list", f"v{__version__}"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    rev = f"v{__version__}" if tagged else "main"
    assert f"rev: {rev}\n" in snippet and "- id: torchsync-lint" in snippet


@pytest.mark.skipif(pre_commit is None, reason="pre-commit is not installed (pip install '.[test]')")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_readme_snippet_works_as_written(tmp_path):
    """The README's .pre-commit-config.yaml, verbatim but for the repository URL (a local clone
    with the tag it names), fails on a sync and skips a file that the config excludes."""
    snippet = readme_snippet()
    url = next(line.split("repo:", 1)[1].strip() for line in snippet.splitlines() if "repo:" in line)
    rev = next(line.split("rev:", 1)[1].strip() for line in snippet.splitlines() if "rev:" in line)
    hook_repo = snapshot(tmp_path / "hook-repo")
    if rev != "main":  # the snapshot's branch is main already
        git(hook_repo, "tag", rev)
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(snippet.replace(url, str(hook_repo)))
    (project / "pyproject.toml").write_text('[tool.torchsync-lint]\nextend-exclude = ["legacy"]\n')
    (project / "model.py").write_text(SYNC)
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(SYNC)  # excluded: pre-commit names it, --force-exclude skips it
    git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=900)
    skip_if_offline(proc)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model.py:7:16: TSL001" in proc.stdout
    assert "legacy" not in proc.stdout
