"""The project pass without the work it can skip (``run.kept``, ``run.second_pass``): trees of the
first check serve the later ones, and a file whose parameters other files pass keeps its first
findings where every entry its check read is the same in the whole project. Findings and
interfaces are those of the full second check."""

import json
from pathlib import Path

import pytest

from torchsync_lint import lint_paths
from torchsync_lint.config import Config
from torchsync_lint.run import kept as kept_mod
from torchsync_lint.run import checked_run, project_pass, second_pass

PROJECTS = Path(__file__).parent / "projects"

# an override in another file than its base class's `self.step(...)`: the base is an earlier
# import wave, so the override's first check already saw what the whole project passes it
FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "import torch\n\n\n"
        "class Base:\n"
        "    def run(self, n):\n"
        "        x = torch.ones(n, device='cuda')\n"
        "        return self.step(x)\n\n"
        "    def step(self, x):\n"
        "        return x\n"
    ),
    "pkg/impl.py": (
        "import torch\n\n"
        "from pkg.base import Base\n\n\n"
        "class Impl(Base):\n"
        "    def step(self, x):\n"
        "        if x.sum() > 0:\n"
        "            return x.nonzero()\n"
        "        return x\n"
    ),
    "pkg/user.py": (
        "import torch\n\n"
        "from pkg.impl import Impl\n\n\n"
        "def make():\n"
        "    return Impl()\n"
    ),
}

# callers pass a tensor to a parameter the check knew from its annotation, and nothing to the one
# it asked the project about: the answers it read are the same in the whole project (helpers.py
# imports a file of the project: it is checked with an import wave's project)
UNASKED = {
    "pkg/__init__.py": "",
    "pkg/consts.py": "import math\n\nLIMIT = math.floor(3.5)\n",
    "pkg/helpers.py": (
        "import torch\n\n"
        "from pkg.consts import LIMIT\n\n\n"
        "def scale(x: torch.Tensor, factor=None):\n"
        "    if x.sum() > 0:\n"
        "        return x.nonzero()\n"
        "    return x\n"
    ),
    "pkg/user.py": (
        "import torch\n\n"
        "from pkg.helpers import scale\n\n\n"
        "def go():\n"
        "    return scale(torch.ones(3, device='cuda'))\n"
    ),
}


def _lint(paths, monkeypatch, skip: bool):
    """Findings and final interfaces of a one-process run; ``skip`` False: every file the project
    pass names is checked again in full (the run before ``second_pass``)."""
    interfaces = {}
    made = []
    real_pass, real_reuse = project_pass.project_pass, second_pass.reuse

    def keep_interfaces(*a, **k):
        reports = real_pass(*a, **k)
        interfaces.update({Path(r.path).name + ":" + r.path: json.dumps(r.interface, sort_keys=True, default=repr)
                           for r in reports})
        return reports

    def reuse(*a, **k):
        got = real_reuse(*a, **k) if skip else None
        made.append(got is not None)
        return got

    monkeypatch.setattr(checked_run, "project_pass", keep_interfaces)
    monkeypatch.setattr(project_pass, "reuse", reuse)
    result = lint_paths([str(p) for p in paths], Config(include_cold=True, respect_gitignore=False), jobs=1)
    findings = sorted((f.path, f.line, f.col, f.code, f.message) for f in result.findings)
    return findings, interfaces, made


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_unchanged_answers_keep_the_first_findings(tmp_path, monkeypatch):
    _write(tmp_path, FILES)
    full = _lint([tmp_path / "pkg"], monkeypatch, skip=False)
    skipped = _lint([tmp_path / "pkg"], monkeypatch, skip=True)
    assert skipped[0] == full[0] and skipped[1] == full[1]
    # the override's own class is not in its wave's project: `self.step(x)` reaches it only in the
    # whole one, so its parameter's answer changed and it is checked again
    assert skipped[2] == [False]


def test_parameters_never_asked_keep_the_first_findings(tmp_path, monkeypatch):
    _write(tmp_path, UNASKED)
    full = _lint([tmp_path / "pkg"], monkeypatch, skip=False)
    skipped = _lint([tmp_path / "pkg"], monkeypatch, skip=True)
    assert skipped[0] == full[0] and skipped[1] == full[1]
    assert skipped[2] == [True]
    assert {f[3] for f in full[0]} >= {"TSL302", "TSL101"}
    assert any(f[3] == "TSL302" for f in full[0])  # the override's `if x.sum() > 0` on a GPU tensor


@pytest.mark.parametrize("name", ["dispatch", "flow", "crossfile", "cycles", "training", "lightning"])
def test_fixture_projects_alike(name, monkeypatch):
    full = _lint([PROJECTS / name], monkeypatch, skip=False)
    skipped = _lint([PROJECTS / name], monkeypatch, skip=True)
    assert skipped[:2] == full[:2]


def test_cached_run_after_a_skip_matches_a_cold_one(tmp_path, monkeypatch):
    """The report made without the walk is stored as the full check's would be: an edit later
    gives the findings of a cold run of the edited tree."""
    _write(tmp_path, FILES)
    cfg = Config(include_cold=True, respect_gitignore=False, cache_dir=str(tmp_path / ".cache"))
    first = lint_paths([str(tmp_path / "pkg")], cfg, jobs=1)
    (tmp_path / "pkg/user.py").write_text(FILES["pkg/user.py"] + "\n\ndef more():\n    return Impl().step(torch.ones(2))\n")
    again = lint_paths([str(tmp_path / "pkg")], cfg, jobs=1)
    cold = lint_paths([str(tmp_path / "pkg")], Config(include_cold=True, respect_gitignore=False), jobs=1)
    key = lambda r: sorted((f.path, f.line, f.code, f.message) for f in r.findings)  # noqa: E731
    assert key(again) == key(cold)
    assert first.findings


def test_trees_of_files_whose_parameters_others_pass_come_first():
    """Over the budget, a tree kept for references only gives its room (oldest first) to a file
    whose functions take parameters other files pass; never the other way round."""
    import libcst as cst

    from torchsync_lint.check.report import FileReport

    kept = kept_mod.Kept(budget=30)
    refs = lambda p: FileReport(p, refs={("call", "b.f")})  # noqa: E731
    params = lambda p: FileReport(p, open_params={"m.f"})  # noqa: E731
    for path in ("r1.py", "r2.py"):
        kept.offer(path, "r" * 10, cst.parse_module("r\n"), refs(path))
    kept.offer("p1.py", "p" * 15, cst.parse_module("p\n"), params("p1.py"))  # r1 goes
    assert kept.take("r1.py", "r" * 10) is None and kept.take("r2.py", "r" * 10) is not None
    assert kept.take("p1.py", "p" * 15) is not None
    kept.offer("r3.py", "r" * 10, cst.parse_module("r\n"), refs("r3.py"))  # no room: not kept
    assert kept.take("r3.py", "r" * 10) is None
    kept.offer("p2.py", "q" * 15, cst.parse_module("q\n"), params("p2.py"))  # r2 goes; p1 stays
    assert kept.take("r2.py", "r" * 10) is None and kept.take("p1.py", "p" * 15) is not None
    assert kept.take("p2.py", "q" * 15) is not None and kept.used == 30
    kept.offer("p3.py", "s" * 5, cst.parse_module("s\n"), params("p3.py"))  # nothing left to give room
    assert kept.take("p3.py", "s" * 5) is None


def test_trees_serve_only_their_own_text():
    import libcst as cst

    from torchsync_lint.check.report import FileReport

    kept = kept_mod.Kept(budget=100)
    report = FileReport("a.py", refs={("call", "b.f")})
    module = cst.parse_module("x = 1\n")
    kept.offer("a.py", "x = 1\n", module, report)
    assert kept.take("a.py", "x = 1\n") is module
    assert kept.take("a.py", "x = 2\n") is None  # edited since: parsed again
    kept.offer("b.py", "y" * 200, cst.parse_module("y\n"), report)  # over the budget: not kept
    assert kept.take("b.py", "y" * 200) is None
    kept.offer("c.py", "z = 1\n", cst.parse_module("z = 1\n"), FileReport("c.py"))  # nothing to ask again
    assert kept.take("c.py", "z = 1\n") is None
