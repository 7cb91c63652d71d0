"""The project index (``run.project_index``): a one-file check (the flake8 plugin) answers what a
whole-project run answers, from what that run stored, loading only what it reaches; after an
edit, what a cold run of the edited tree answers."""

import shutil
from pathlib import Path

import pytest

from torchsync_lint import lint_paths
from torchsync_lint.config import Config
from torchsync_lint.flake8_plugin import TorchSyncChecker
from torchsync_lint.run import ondemand

PROJECTS = Path(__file__).parent / "projects"
NAMES = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())


def _copy(name, tmp_path):
    root = tmp_path / "proj"
    shutil.copytree(PROJECTS / name, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    return root


def _cli(root, cache=True):
    result = lint_paths([str(root)], Config(), jobs=1,
                        cache_dir=str(root / ".torchsync_cache") if cache else None)
    return {(str(Path(f.path).resolve()), f.line, f.col - 1, f.code) for f in result.findings}


def _plugin(root):
    ondemand._PROJECTS.clear()  # a fresh process: the project is read again
    got = set()
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines(True)
        for line, col, text, _ in TorchSyncChecker(None, lines, str(path)).run():
            got.add((str(path.resolve()), line, col, text.split()[0]))
    return {g for g in got if g[3] != "TSL000"}


@pytest.fixture(autouse=True)
def _fresh_projects():
    ondemand._PROJECTS.clear()
    yield
    ondemand._PROJECTS.clear()


def _noqa_free(findings, root):
    """flake8 applies line noqa itself: compare without the lines that carry one."""
    out = set()
    for f in findings:
        text = Path(f[0]).read_text(encoding="utf-8").splitlines()
        if "noqa" not in text[f[1] - 1]:
            out.add(f)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_warm_index_answers_as_the_whole_run_without_parsing(name, tmp_path, monkeypatch):
    root = _copy(name, tmp_path)
    want = _cli(root)
    import torchsync_lint.check.file as check_file_module  # lint_source imports it for a file to check

    parses = []
    real = check_file_module.check_source
    monkeypatch.setattr(check_file_module, "check_source", lambda *a, **k: parses.append(a[1]) or real(*a, **k))
    got = _plugin(root)
    assert _noqa_free(got, root) == _noqa_free(want, root)
    assert parses == []  # every file answered from the run's stored report


WARM_FLAKE8 = """
import sys
from flake8.main.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m == "libcst" or m.startswith(("torchsync_lint.rules.", "torchsync_lint.inference.evaluate")))
print("HEAVY", heavy)
"""


def test_a_stored_answer_loads_no_parser_and_no_rule(tmp_path):
    """flake8 on a file of an unchanged project is answered from the index: neither LibCST nor a
    rule is imported (they cost more than flake8's own checks)."""
    root = _copy("crossfile", tmp_path)
    import subprocess
    import sys

    cli = subprocess.run([sys.executable, "-m", "torchsync_lint", "--isolated", "."], cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert cli.returncode in (0, 1), cli.stderr
    target = str(sorted(root.rglob("*.py"))[0].relative_to(root))
    proc = subprocess.run([sys.executable, "-c", WARM_FLAKE8, "--select", "TSL", target], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert "HEAVY []" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", NAMES)
def test_checked_again_with_the_index_gives_the_same(name, tmp_path, monkeypatch):
    """The stored reports refused: each file is parsed and checked with interfaces loaded on demand,
    the callers' table and the hot set from the index."""
    root = _copy(name, tmp_path)
    want = _cli(root)
    monkeypatch.setattr(ondemand.OnDemand, "stored_report", lambda self, source, path: None)
    loaded = []
    real = ondemand.OnDemand._cached
    monkeypatch.setattr(ondemand.OnDemand, "_cached", lambda self, m: loaded.append(m) or real(self, m))
    assert _noqa_free(_plugin(root), root) == _noqa_free(want, root)


@pytest.mark.parametrize("edit", ["leaf", "base"])
def test_after_an_edit_the_plugin_answers_as_a_cold_run_of_the_edited_tree(edit, tmp_path):
    root = _copy("crossfile", tmp_path)
    _cli(root)  # the index of the tree before the edit
    target = root / "src" / "detkit" / ("ops/pairs.py" if edit == "leaf" else "heads/base.py")
    target.write_text(target.read_text() + "\n\ndef added_helper(x):\n    return x.sum().item()\n")
    want = _cli(root, cache=False)
    assert _noqa_free(_plugin(root), root) == _noqa_free(want, root)


def test_one_file_loads_only_the_interfaces_it_reaches(tmp_path, monkeypatch):
    root = _copy("crossfile", tmp_path)
    _cli(root)
    monkeypatch.setattr(ondemand.OnDemand, "stored_report", lambda self, source, path: None)
    loaded = []
    real = ondemand.OnDemand._cached
    monkeypatch.setattr(ondemand.OnDemand, "_cached", lambda self, m: loaded.append(m) or real(self, m))
    leaf = root / "src" / "detkit" / "ops" / "pairs.py"
    list(TorchSyncChecker(None, leaf.read_text().splitlines(True), str(leaf)).run())
    total = len(list(root.rglob("*.py")))
    assert len(set(loaded)) < total - 1


def test_the_cache_stays_bounded_over_edits_and_a_warm_run_still_hits(tmp_path, monkeypatch):
    from torchsync_lint.run import cache_prune, cached_check

    root = _copy("crossfile", tmp_path)
    cache = root / ".torchsync_cache"
    _cli(root)
    first = cache_prune.size(str(cache))
    stray = cache / "ab" / ("ab" + "0" * 62 + ".json")  # an entry no index lists (an older linter's)
    stray.parent.mkdir(exist_ok=True)
    stray.write_text('{"key": "x", "data": {}}')
    target = root / "src" / "detkit" / "ops" / "pairs.py"
    for i in range(4):
        target.write_text(target.read_text() + f"\n\ndef added_{i}(x):\n    return x\n")
        _cli(root)
    assert not stray.exists()
    assert cache_prune.size(str(cache))[0] <= first[0]  # one entry per file and role, edits replace
    checked = []
    real = cached_check.check_data
    monkeypatch.setattr(cached_check, "check_data", lambda *a, **k: checked.append(a[1]) or real(*a, **k))
    result = lint_paths([str(root)], Config(), jobs=1, cache_dir=str(cache))
    assert checked == [] and result.cache_size[0] > 0


def test_pruning_with_the_keys_just_written_keeps_what_reading_them_back_keeps(tmp_path, monkeypatch):
    """A run hands ``cache_prune`` the keys its index lists (not read back from the file it just
    wrote): the same entries live as when every index is read."""
    from torchsync_lint.run import cache_prune, index_write

    root = _copy("crossfile", tmp_path)
    cache = str(root / ".torchsync_cache")
    written = []
    real = index_write.write
    monkeypatch.setattr(index_write, "write", lambda *a, **k: written.append(real(*a, **k)) or written[-1])
    _cli(root)
    name, keys = written[-1]
    assert name.startswith("graph-") and keys
    assert cache_prune._live_keys(cache, written[-1]) == cache_prune._live_keys(cache) == set(keys)


def test_a_stored_answer_labels_run_once_functions_as_the_whole_run(tmp_path):
    """A helper called only from the set-up code of a training loop runs once: the whole run hides
    its sync by default, and so does the plugin answering from the index (not only the hot set)."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "train.py").write_text(
        "from pkg.util import report\n\n\ndef train(model, loader, opt):\n    report(model)\n"
        "    for x in loader:\n        loss = model(x)\n        loss.backward()\n        opt.step()\n")
    (root / "pkg" / "util.py").write_text("import torch\n\n\ndef report(model):\n    print(model.weight.sum().item())\n")
    result = lint_paths([str(root)], Config(), jobs=1, cache_dir=str(root / ".torchsync_cache"))
    assert result.findings == [] and [f.frequency for f in result.hidden] == ["once"]
    assert _plugin(root) == set()
