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
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "torchsync-lint" in failed.stdout and "Failed" in failed.stdout
    assert "model.py:7:16: TSL001" in failed.stdout
    assert "notes.txt" not in failed.stdout

    (project / "model.py").write_text(CLEAN)
    git(project, "add", "-A")
    passed = try_repo(hook_repo, project, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
