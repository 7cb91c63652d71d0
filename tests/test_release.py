"""scripts/release.py: one command makes a release (version, changelog, snippets, sdist and wheel,
twine check, commit, tag) in a copy of this checkout; a bad request changes nothing. And the
pre-commit snippets name a revision that exists in this repository."""

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
COPY = ["pyproject.toml", "README.md", "torchsync_lint", "scripts", "docs/changelog.md", "docs/ci.md"]
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false",
       "-c", "init.defaultBranch=main"]


def _git(cwd, *args):
    return subprocess.run(GIT + list(args), cwd=cwd, check=True, capture_output=True, text=True).stdout


def _checkout(tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    dest.mkdir()
    for name in COPY:
        src = REPO / name
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    (dest / ".gitignore").write_text("dist/\nbuild/\n*.egg-info/\n__pycache__/\n")
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "snapshot")
    return dest


def _release(repo: Path, *args):
    env_git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    import os
    return subprocess.run([sys.executable, str(repo / "scripts" / "release.py"), *args], cwd=repo,
                          capture_output=True, text=True, timeout=600, env={**os.environ, **env_git})


@pytest.mark.slow
def test_release_is_one_command(tmp_path):
    pytest.importorskip("build")
    pytest.importorskip("twine")
    repo = _checkout(tmp_path)
    old = re.search(r'__version__ = "([^"]+)"', (repo / "torchsync_lint/__init__.py").read_text()).group(1)
    major, minor, patch = map(int, old.split(".")[:3])
    new = f"{major}.{minor}.{patch + 1}"
    proc = _release(repo, new, "--no-isolation", "--date", "2030-01-02")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f'__version__ = "{new}"' in (repo / "torchsync_lint/__init__.py").read_text()
    log = (repo / "docs/changelog.md").read_text()
    assert f"## Unreleased\n\n## {new} (2030-01-02)\n" in log
    assert f"rev: v{new}\n" in (repo / "README.md").read_text()
    assert f"rev: v{new}\n" in (repo / "docs/ci.md").read_text()
    assert _git(repo, "tag", "--list").split() == [f"v{new}"]
    assert _git(repo, "log", "-1", "--format=%s").strip() == f"Release {new}"
    assert _git(repo, "status", "--porcelain") == ""  # everything it changed is in the release commit
    wheel = repo / "dist" / f"torchsync_lint-{new}-py3-none-any.whl"
    assert (repo / "dist" / f"torchsync_lint-{new}.tar.gz").is_file()
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(f"torchsync_lint-{new}.dist-info/METADATA").decode()
        assert f"Version: {new}\n" in meta
        assert "torchsync_lint/inference/data/torch_api.json" in zf.namelist()  # the data files ship
    assert "twine check" in proc.stdout and "PASSED" in proc.stdout
    assert f"publish: git push --follow-tags && twine upload" in proc.stdout

    # the same version again: refused, nothing changes
    again = _release(repo, new, "--no-isolation")
    assert again.returncode == 1 and "is not above the current version" in again.stderr
    assert again.stderr.count("\n") == 1


def test_release_refuses_a_dirty_tree_and_an_empty_changelog(tmp_path):
    repo = _checkout(tmp_path)
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nedit\n")
    proc = _release(repo, "99.0.0")
    assert proc.returncode == 1 and "working tree has changes" in proc.stderr
    _git(repo, "checkout", "--", "README.md")
    log = repo / "docs/changelog.md"
    text = log.read_text()
    head = text.index("## Unreleased\n") + len("## Unreleased\n")
    nxt = text.find("\n## ", head)
    log.write_text(text[:head] + "\n" + (text[nxt + 1:] if nxt >= 0 else ""))
    _git(repo, "commit", "-qam", "empty changelog")
    proc = _release(repo, "99.0.0")
    assert proc.returncode == 1 and "nothing under '## Unreleased'" in proc.stderr
    assert _git(repo, "tag", "--list") == ""


def test_pre_commit_snippets_name_a_revision_that_exists():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    revs = set()
    for doc in ("README.md", "docs/ci.md"):
        revs.update(re.findall(r"repo: https://github\.com/torchsync-lint/torchsync-lint\n\s+rev: (\S+)",
                               (REPO / doc).read_text()))
    assert revs, "the snippets are where the release script looks for them"
    for rev in revs:
        # a tag, a branch, or the branch of the remote this checkout came from (a clone of
        # another branch has main only as origin/main)
        refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)", f"refs/tags/{rev}", f"refs/heads/{rev}",
                               f"refs/remotes/*/{rev}"], cwd=REPO, capture_output=True, text=True).stdout.split()
        if not refs:
            shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO,
                                     capture_output=True, text=True).stdout.strip()
            if shallow == "true":
                pytest.skip("a shallow checkout (CI) holds no other branch or tag to look for")
        assert refs, f"rev: {rev} names no branch or tag of this repository"


def test_install_lines_work_before_a_release():
    """No PyPI release exists yet: every install line in the docs installs from the repository
    (a checkout, ``.`` with an extra that exists, or the git URL), and says so."""
    import sys as _sys
    if _sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    pages = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
    seen = 0
    for page in pages:
        for line in page.read_text().splitlines():
            for m in re.finditer(r"pip install (\"[^\"]+\"|'[^']+'|\S+)", line):
                target = m.group(1).strip("\"'")
                if target.startswith("-"):
                    continue
                seen += 1
                assert target != "torchsync-lint" and not target.startswith("torchsync-lint=="), \
                    f"{page.name}: {line.strip()!r} installs from PyPI, where there is no release yet"
                extra = re.match(r"^(?:\.|torchsync-lint)\[([a-z,]+)\]", target)
                if extra:
                    assert set(extra.group(1).split(",")) <= extras, f"{page.name}: unknown extra in {line!r}"
                assert target.startswith((".", "git+https://github.com/torchsync-lint/torchsync-lint")) or \
                    " @ git+https://github.com/torchsync-lint/torchsync-lint" in target, f"{page.name}: {line!r}"
    assert seen >= 5
