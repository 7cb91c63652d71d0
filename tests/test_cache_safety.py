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


FIXES = __import__("pathlib").Path(__file__).resolve().parent / "fixtures" / "fixes"
PAYLOAD = '__import__("os").system("echo pwned > PWNED")'


def _craft(cache_dir):
    """Rewrite every cached fix: what an attacker with write access to the cache folder (a shared
    CI cache, a committed .torchsync_cache) would do."""
    import json

    crafted = 0
    for entry in cache_dir.rglob("*.json"):
        doc = json.loads(entry.read_text())
        for f in doc.get("data", {}).get("findings", []):
            if f.get("fix"):
                f["fix"]["replacement"] = PAYLOAD
                f["fix"]["imports"] = ["os"]
                crafted += 1
        entry.write_text(json.dumps(doc))
    return crafted


def test_fix_never_takes_a_fix_from_the_cache(tmp_path):
    """Regression (issue 20): a crafted cache entry made --fix write arbitrary code into a file."""
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    target = tmp_path / "m.py"
    target.write_text((FIXES / "TSL201_arange_before.py").read_text())
    assert _lint(tmp_path, "m.py").returncode == 1  # fills the cache
    assert _craft(tmp_path / ".torchsync_cache") >= 1
    listed = _lint(tmp_path, "--output-format", "json", "m.py")  # the run itself answers from the cache
    import json

    assert json.loads(listed.stdout)[0]["fix"]["replacement"] == PAYLOAD, "the crafted entry is what the run reads"
    diff = _lint(tmp_path, "--diff", "m.py")
    assert "pwned" not in diff.stdout and "+import torch\n" in diff.stdout
    proc = _lint(tmp_path, "--fix", "m.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target.read_text() == (FIXES / "TSL201_arange_after.py").read_text()
    assert "pwned" not in target.read_text() and not (tmp_path / "PWNED").exists()
