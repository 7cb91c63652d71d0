"""The report cache: it keeps itself out of git, and nothing read from it can write code into a
user's file."""

import subprocess
import sys

SYNC = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x.sum().item()\n"


def _lint(cwd, *args):
    return subprocess.run([sys.executable, "-m", "torchsync_lint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_cache_folder_writes_its_own_gitignore(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    (tmp_path / "m.py").write_text(SYNC)
    assert _lint(tmp_path, "m.py").returncode == 1
    ignore = tmp_path / ".torchsync_cache" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"
    # git agrees: nothing of the cache is listed as untracked
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                            capture_output=True, text=True, check=True).stdout
    assert ".torchsync_cache" not in status and "m.py" in status
    # a user's own .gitignore there is left as it is
    ignore.write_text("# mine\n*\n")
    assert _lint(tmp_path, "m.py").returncode == 1
    assert ignore.read_text() == "# mine\n*\n"
