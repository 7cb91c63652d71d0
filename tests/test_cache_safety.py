"""The report cache: it keeps itself out of git, and nothing read from it can write code into a
user's file."""

import json
import subprocess
import sys

import pytest

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
    CI cache, a committed .torchsync_cache) would do. Per-file entries and the reports a folder
    run stores for its project index alike."""
    import json

    crafted = 0

    def walk(node):
        nonlocal crafted
        if isinstance(node, dict):
            if "replacement" in node and "applicability" in node:
                node["replacement"] = PAYLOAD
                node["imports"] = ["os"]
                crafted += 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for entry in cache_dir.rglob("*.json"):
        try:
            doc = json.loads(entry.read_text())
        except ValueError:
            continue
        walk(doc)
        entry.write_text(json.dumps(doc))
    return crafted


@pytest.mark.parametrize("target", ["m.py", "."], ids=["file", "folder with a project index"])
def test_fix_never_takes_a_fix_from_the_cache(tmp_path, target):
    """Regression (issue 20): a crafted cache entry made --fix write arbitrary code into a file.
    A folder run also stores its final reports for the project index, which a later check of an
    unchanged file answers from: --fix and --diff must not take their fixes from those either."""
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    target_file = tmp_path / "m.py"
    target_file.write_text((FIXES / "TSL201_arange_before.py").read_text())
    assert _lint(tmp_path, target).returncode == 1  # fills the cache
    assert (tmp_path / ".torchsync_cache" / "index").exists() == (target == ".")
    assert _craft(tmp_path / ".torchsync_cache") >= 1
    listed = _lint(tmp_path, "--output-format", "json", target)  # the run itself answers from the cache
    assert json.loads(listed.stdout)[0]["fix"]["replacement"] == PAYLOAD, "the crafted entry is what the run reads"
    diff = _lint(tmp_path, "--diff", target)
    assert "pwned" not in diff.stdout and "+import torch\n" in diff.stdout
    proc = _lint(tmp_path, "--fix", target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target_file.read_text() == (FIXES / "TSL201_arange_after.py").read_text()
    assert "pwned" not in target_file.read_text() and not (tmp_path / "PWNED").exists()


def test_an_entry_that_cannot_be_encoded_is_said_once_and_not_written(tmp_path, capsys, monkeypatch):
    """A value the cache format does not cover is the linter's bug: not written (the run goes on),
    but told on stderr once per process and counted, so that it cannot hide as a slow run."""
    from torchsync_lint.run import cache

    monkeypatch.setattr(cache, "unencodable", 0)
    cache.write_json(str(tmp_path / "a.json"), {"v": object()})
    cache.write_json(str(tmp_path / "b.json"), {"v": object()})
    assert cache.unencodable == 2
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "b.json").exists()
    assert capsys.readouterr().err.count("could not be encoded") == 1
    cache.write_json(str(tmp_path / "c.json"), {"v": [1, "x"]})
    assert json.loads((tmp_path / "c.json").read_text()) == {"v": [1, "x"]}


def test_every_fixture_project_caches_all_it_derives(tmp_path, monkeypatch):
    """Each fixture project, linted with a cache: every interface and report encodes."""
    from pathlib import Path

    from torchsync_lint import lint_paths
    from torchsync_lint.config import Config
    from torchsync_lint.run import cache

    monkeypatch.setattr(cache, "unencodable", 0)
    projects = Path(__file__).parent / "projects"
    for root in sorted(p for p in projects.iterdir() if p.is_dir()):
        lint_paths([str(root)], Config(hot_tests=True), jobs=1, cache_dir=str(tmp_path / root.name))
    assert cache.unencodable == 0
