"""Which files a run checks: .gitignore, gitignore-style excludes, --force-exclude."""

import os

import pytest

from torchsync_lint import cli

SYNC = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x.item()\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root, rel, text=SYNC):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def linted(capsys, *argv):
    rc = cli.main(["--quiet", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return sorted({os.path.normpath(line.split(":", 1)[0]) for line in out.splitlines()})


def test_gitignore_is_respected_by_default(project, capsys):
    write(project, ".gitignore", "generated/\n*_pb2.py\n# a comment\n")
    write(project, "generated/a.py")
    write(project, "msg_pb2.py")
    write(project, "model.py")
    write(project, "sub/.gitignore", "local.py\n")  # a nested .gitignore, relative to its folder
    write(project, "sub/local.py")
    write(project, "sub/kept.py")
    assert linted(capsys, ".") == ["model.py", os.path.join("sub", "kept.py")]
    assert len(linted(capsys, "--no-respect-gitignore", ".")) == 5


def test_gitignore_above_the_linted_folder_applies_up_to_the_repository_root(project, capsys):
    (project / ".git").mkdir()
    write(project, ".gitignore", "pkg/skip/\n")
    write(project, "pkg/skip/a.py")
    write(project, "pkg/b.py")
    assert linted(capsys, "pkg") == [os.path.join("pkg", "b.py")]


def test_config_can_turn_gitignore_off(project, capsys):
    write(project, "pyproject.toml", "[tool.torchsync-lint]\nrespect-gitignore = false\n")
    write(project, ".gitignore", "a.py\n")
    write(project, "a.py")
    assert linted(capsys, ".") == ["a.py"]


@pytest.mark.parametrize("pattern, kept", [
    ("pkg/sub", ["pkg/a.py", "pkg/generated/g.py", "pkg/other/sub/c.py"]),  # a slash anchors it at the root
    ("sub", ["pkg/a.py", "pkg/generated/g.py"]),  # a name alone matches at any depth
    ("**/generated/*.py", ["pkg/a.py", "pkg/other/sub/c.py", "pkg/sub/b.py"]),
    ("pkg/*.py", ["pkg/generated/g.py", "pkg/other/sub/c.py", "pkg/sub/b.py"]),
])
def test_extend_exclude_takes_gitignore_patterns(project, capsys, pattern, kept):
    write(project, "pyproject.toml", f'[tool.torchsync-lint]\nextend-exclude = ["{pattern}"]\n')
    for rel in ("pkg/a.py", "pkg/sub/b.py", "pkg/other/sub/c.py", "pkg/generated/g.py"):
        write(project, rel)
    assert linted(capsys, ".") == [os.path.normpath(k) for k in kept]


def test_exclude_replaces_the_defaults(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nexclude = ["skip"]\n')
    write(project, "build/a.py")  # excluded by default, no longer
    write(project, "skip/b.py")
    assert linted(capsys, ".") == [os.path.join("build", "a.py")]


def test_patterns_are_relative_to_the_configuration_folder(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nextend-exclude = ["pkg/sub"]\n')
    write(project, "pkg/sub/b.py")
    write(project, "pkg/a.py")
    os.chdir(project / "pkg")
    assert linted(capsys, ".") == ["a.py"]


def test_files_named_explicitly_are_checked_unless_force_exclude(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nextend-exclude = ["legacy", "gen_*.py"]\n')
    write(project, "legacy/old.py")
    write(project, "gen_x.py")
    write(project, "model.py")
    names = ["legacy/old.py", "gen_x.py", "model.py"]
    assert linted(capsys, *names) == sorted(os.path.normpath(n) for n in names)
    assert linted(capsys, "--force-exclude", *names) == ["model.py"]
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nextend-exclude = ["legacy", "gen_*.py"]\nforce-exclude = true\n')
    assert linted(capsys, *names) == ["model.py"]


def test_force_exclude_of_an_explicit_folder(project, capsys):
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nextend-exclude = ["legacy"]\n')
    write(project, "legacy/old.py")
    assert linted(capsys, "legacy") == [os.path.join("legacy", "old.py")]
    assert linted(capsys, "--force-exclude", "legacy") == []


def test_precommit_hook_passes_force_exclude():
    from pathlib import Path

    text = (Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "args: [--force-exclude]" in text


def test_a_git_ignored_folder_named_explicitly_is_walked(project, capsys):
    write(project, ".gitignore", "vendored/\n")
    write(project, "vendored/lib.py")
    write(project, "vendored/sub/.gitignore", "skip.py\n")  # its own .gitignore files still apply
    write(project, "vendored/sub/skip.py")
    write(project, "model.py")
    assert linted(capsys, ".") == ["model.py"]
    assert linted(capsys, "vendored") == [os.path.join("vendored", "lib.py")]


def test_gitignore_negation_and_classes_in_excludes_and_per_file_ignores(project, capsys):
    """One dialect, read by pathspec for both settings: a negated pattern takes a file back and a
    character class matches, as in a .gitignore (a hand-written fnmatch reader ignored `!`)."""
    write(project, "pyproject.toml", '[tool.torchsync-lint]\nextend-exclude = ["gen/*.py", "!gen/keep.py"]\n'
                                     '[tool.torchsync-lint.per-file-ignores]\n"model[0-9].py" = ["TSL001"]\n')
    for rel in ("gen/a.py", "gen/keep.py", "model1.py", "modelx.py"):
        write(project, rel)
    assert linted(capsys, ".") == [os.path.normpath("gen/keep.py"), "modelx.py"]


def test_name_only_excludes_match_as_pathspec_does():
    """``globs.matcher`` tests each part of a path for patterns that are names alone (the default
    excludes) instead of asking pathspec: the same answer for every path, folders included; any
    other pattern goes to pathspec."""
    import random

    import pathspec

    from torchsync_lint.check import globs
    from torchsync_lint.config import DEFAULT_EXCLUDE

    names = ["build", "src", "a.egg-info", ".git", "x.py", "test_a.py", "venv", "a b", "buildx", "xbuild",
             ".venv", "node_modules", "__pycache__", "dist", "m.pyi", "x_y_z", ".eggs", "ab"]
    plain = list(DEFAULT_EXCLUDE) + ["x*y", "*", "a b", "*.py", "test_*", "_*_"]
    assert all(globs._NAME_ONLY.match(p) for p in plain)
    other = ["a/b", "/build", "build/", "!x", "#c", "a?", "[ab]", "**", "a**", " x", "x ", "a\\b", "**/x"]
    assert not any(globs._NAME_ONLY.match(p) for p in other)
    rng = random.Random(7)
    for _ in range(1500):
        pats = tuple(rng.sample(plain + other, rng.randint(0, 5)))
        fast, slow = globs.matcher(pats), pathspec.GitIgnoreSpec.from_lines(pats).match_file
        for _ in range(10):
            rel = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) + rng.choice(["", "/"])
            assert fast(rel) == slow(rel), (pats, rel)
