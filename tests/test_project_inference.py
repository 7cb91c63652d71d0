"""Inference across files: fixture projects under tests/projects/, expectations inline in each file."""

from pathlib import Path

import pytest

from fixture_markers import expected
from torchsync_lint.config import Config
from torchsync_lint import lint_paths, lint_source

PROJECTS = Path(__file__).parent / "projects"


def _expectations(root: Path):
    want = set()
    for path in root.rglob("*.py"):
        for line, code in expected(path.read_text(encoding="utf-8")):
            want.add((str(path.resolve()), line, code))
    return want


@pytest.mark.parametrize("name", sorted(p.name for p in PROJECTS.iterdir() if p.is_dir()))
@pytest.mark.parametrize("jobs", [1, 2, 8])  # 8: waves of a few files go to pools (``project_pass.pooled``)
def test_project(name, jobs):
    root = PROJECTS / name
    result = lint_paths([str(root)], Config(hot_tests=True), jobs=jobs)  # they live under tests/
    assert not result.errors
    got = {(f.path, f.line, f.code) for f in result.findings}
    want = _expectations(root)
    got = {(str(Path(p).resolve()), line, code) for p, line, code in got}
    assert not (want - got), f"missing {sorted(want - got)}"
    assert not (got - want), f"unexpected {sorted(got - want)}"


def test_one_file_alone_sees_less_but_never_crashes():
    """Without the project a cross-file value is unknown: today's behaviour, no false certainty."""
    path = PROJECTS / "crossfile" / "src" / "detkit" / "heads" / "det.py"
    alone = {(f.line, f.code) for f in lint_source(path.read_text(), str(path), Config(), module_name="detkit.heads.det")}
    together = {(f.line, f.code) for f in lint_paths([str(PROJECTS / "crossfile")], Config(hot_tests=True), jobs=1).findings
                if f.path.endswith("det.py")}
    assert alone < together


def test_flake8_gives_the_cli_findings_on_a_warm_tree(tmp_path):
    """flake8 sees one file at a time; on a tree a CLI run has cached, it reads the other files'
    interfaces from the cache and reports exactly what the CLI reports."""
    import shutil
    import subprocess
    import sys

    root = tmp_path / "proj"
    shutil.copytree(PROJECTS / "crossfile", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'detkit'\n")
    cli = lint_paths([str(root / "src")], Config(), jobs=1, cache_dir=str(root / ".torchsync_cache"))
    want = {(str(Path(f.path).resolve()), f.line, f.col, f.code) for f in cli.findings}
    assert any(f.path.endswith("host.py") for f in cli.findings)  # a parameter's callers in another file
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "TSL", str(root / "src")],
                         capture_output=True, text=True, cwd=root)
    got = set()
    for line in out.stdout.splitlines():
        path, line_no, col, rest = line.split(":", 3)
        got.add((str(Path(path).resolve()), int(line_no), int(col), rest.split()[0]))
    assert got == want, out.stderr


def test_cache_answers_an_unchanged_tree_and_ignores_corrupt_entries(tmp_path, monkeypatch):
    import shutil

    from torchsync_lint.run import cached_check

    root = tmp_path / "proj"
    shutil.copytree(PROJECTS / "crossfile", root)
    cache = str(tmp_path / "cache")

    def run():
        return sorted((f.path, f.line, f.code, f.frequency) for f in
                      lint_paths([str(root)], Config(), jobs=1, cache_dir=cache).findings)

    cold = run()
    assert cold == sorted((f.path, f.line, f.code, f.frequency)
                          for f in lint_paths([str(root)], Config(), jobs=1).findings)
    checked = []
    real = cached_check.check_data
    monkeypatch.setattr(cached_check, "check_data", lambda *a, **k: checked.append(a[1]) or real(*a, **k))
    assert run() == cold and checked == []  # warm: every answer from the cache
    entries = list(Path(cache).rglob("*.json"))
    assert entries
    for i, entry in enumerate(entries):  # truncated, foreign, not JSON at all
        entry.write_text(["{", '{"key": "other", "data": {}}', "\x00garbage"][i % 3])
    assert run() == cold and checked  # rebuilt, same answers
    assert all(e.read_text().startswith('{"key":') for e in entries)


@pytest.mark.parametrize("depth", [1, 20, 400])
def test_values_flow_down_a_chain_of_helpers_of_any_depth(depth):
    """A parameter fed by a caller that is itself being summarised is not memoised half-known, and
    a chain deeper than Python's default stack (400 functions each returning the next) is analysed."""
    lines = ["import torch", ""]
    for i in range(depth):
        lines += [f"def f{i}(x):", f"    return f{i + 1}(x)", ""]
    lines += [f"def f{depth}(x):", "    return x.nonzero()", ""]
    lines += ["class M(torch.nn.Module):", "    def forward(self, x):", "        y = f0(x)", "        return y.tolist()", ""]
    source = "\n".join(lines)
    got = {(f.line, f.code) for f in lint_source(source, "chain.py", Config())}
    n = len(lines)
    assert got == {(3 * depth + 4, "TSL101"), (n - 1, "TSL002")}


def test_hot_entry_points_from_config_make_their_callees_hot_across_files(tmp_path):
    pkg = tmp_path / "mylib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .api import solve\n")
    (pkg / "api.py").write_text("from .util import settle\n\n\ndef solve(x):\n    return settle(x)\n")
    (pkg / "util.py").write_text("import torch\n\n\ndef settle(x):\n    torch.cuda.synchronize()\n    return x\n")
    # TSL401 is a hot-only rule: in code of unknown temperature it stays quiet
    assert not lint_paths([str(pkg)], Config(), jobs=1).findings
    found = lint_paths([str(pkg)], Config(hot_functions=["mylib.solve"]), jobs=1).findings
    assert [(Path(f.path).name, f.code, f.temperature) for f in found] == [("util.py", "TSL401", "hot")]
