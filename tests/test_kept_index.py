"""What a kept tree brings to the later checks of its text (``run.kept``, ``check.file``): the index
its first check built (not built again), the parse guard's verdict (not asked again), the ``# noqa``
table and the positions of the reported nodes (made once per list of nodes). Runs that keep
nothing are the reference: findings and interfaces are theirs."""

import json
from pathlib import Path

import libcst as cst
import pytest

from torchsync_lint import lint_paths
from torchsync_lint.check import file as check_file_mod
from torchsync_lint.check.file import check_source
from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.config import Config
from torchsync_lint.inference.project import Project
from torchsync_lint.rules.registry import all_rules
from torchsync_lint.run import checked_run, project_pass
from torchsync_lint.run import kept as kept_mod

PROJECTS = Path(__file__).parent / "projects"
FILES = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": (
        "import torch\n\n\n"
        "def scale(x, factor):\n"
        "    if x.sum() > 0:  # noqa: TSL999\n"
        "        return x.nonzero() * factor\n"
        "    return x.cpu().item()\n"
    ),
    "pkg/user.py": (
        "import torch\n\n"
        "from pkg.helpers import scale\n\n\n"
        "def go():\n"
        "    return scale(torch.ones(3, device='cuda'), 2)\n"
    ),
}


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _lint(paths, monkeypatch, budget: int):
    """Findings and final interfaces of a one-process run keeping trees of ``budget`` characters,
    and how many indexes were built per file."""
    interfaces = {}
    built = {}
    real_pass, real_index = project_pass.project_pass, check_file_mod._index

    def keep_interfaces(*a, **k):
        reports = real_pass(*a, **k)
        interfaces.update({r.path: json.dumps(r.interface, sort_keys=True, default=repr) for r in reports})
        return reports

    def counted(module, path, module_name):
        built[path] = built.get(path, 0) + 1
        return real_index(module, path, module_name)

    monkeypatch.setattr(checked_run, "project_pass", keep_interfaces)
    monkeypatch.setattr(checked_run, "Kept", lambda: kept_mod.Kept(budget=budget))
    monkeypatch.setattr(check_file_mod, "_index", counted)
    result = lint_paths([str(p) for p in paths], Config(include_cold=True, respect_gitignore=False), jobs=1)
    findings = sorted((f.path, f.line, f.col, f.end_line, f.end_col, f.code, f.message) for f in result.findings)
    monkeypatch.undo()
    return findings, interfaces, built


@pytest.mark.parametrize("name", ["dispatch", "flow", "crossfile", "cycles", "training", "lightning",
                                  "host_params", "handed_on", "held_functions", "star_imports"])
def test_fixture_projects_alike_with_kept_indexes(name, monkeypatch):
    none = _lint([PROJECTS / name], monkeypatch, budget=0)
    kept = _lint([PROJECTS / name], monkeypatch, budget=kept_mod.DEFAULT_BUDGET)
    assert kept[:2] == none[:2]
    # a later check of a kept text reads the first one's index (a file the prefilter passed over
    # on its own is parsed first when it is checked with the project: built then)
    assert all(kept[2][p] <= n for p, n in none[2].items())


def test_a_file_checked_again_reads_its_first_index(tmp_path, monkeypatch):
    _write(tmp_path, FILES)
    none = _lint([tmp_path / "pkg"], monkeypatch, budget=0)
    kept = _lint([tmp_path / "pkg"], monkeypatch, budget=kept_mod.DEFAULT_BUDGET)
    assert kept[:2] == none[:2] and none[0]
    helpers = str(tmp_path / "pkg/helpers.py")
    # callers pass `helpers.scale` a tensor: checked again in the project pass
    assert none[2][helpers] >= 2 and kept[2][helpers] == 1


def _options() -> Options:
    return Options(tuple(all_rules()), (), (), ())


class _Index:
    def __init__(self) -> None:
        self.released = 0

    def release(self) -> None:
        self.released += 1


def test_kept_indexes_are_released_when_their_trees_go():
    kept = kept_mod.Kept(budget=30)
    refs = FileReport("r.py", refs={("call", "b.f")})
    params = FileReport("p.py", open_params={"m.f"})
    first, second = _Index(), _Index()
    assert kept.offer("r.py", "r" * 20, cst.parse_module("r\n"), refs, first) == {}
    assert kept.offer("p.py", "p" * 20, cst.parse_module("p\n"), params, second) == {}  # r.py gives its room
    assert first.released == 1 and second.released == 0
    assert kept.taken("p.py", "p" * 20)[1] is second
    assert kept.offer("q.py", "q" * 20, cst.parse_module("q\n"), params, _Index()) is None  # no room
    kept.drop_trees()
    assert second.released == 1 and kept.taken("p.py", "p" * 20) is None


SOURCE = (
    "import torch\n\n\n"
    "def f(x):\n"
    "    y = x.cuda()\n"
    "    if y.sum() > 0:  # noqa: TSL999\n"
    "        return y.nonzero().item()\n"
    "    return y.cpu()\n"
)


def test_a_second_check_of_a_kept_text_reads_what_the_first_made(monkeypatch):
    """Against a check without kept trees: the same findings; the parse guard, the index, the
    ``# noqa`` table and the positions made once for both checks."""
    calls = {"guard": 0, "index": 0, "positions": 0}
    real = {n: getattr(check_file_mod, n) for n in ("pre_parse_error", "_index", "positions")}

    def counting(name, key):
        def fn(*a, **k):
            calls[key] += 1
            return real[name](*a, **k)
        return fn

    monkeypatch.setattr(check_file_mod, "pre_parse_error", counting("pre_parse_error", "guard"))
    monkeypatch.setattr(check_file_mod, "_index", counting("_index", "index"))
    monkeypatch.setattr(check_file_mod, "positions", counting("positions", "positions"))
    plain = check_source(SOURCE, "m.py", _options())
    kept = kept_mod.Kept()
    project = Project({})
    # a first check without a project leaves `f`'s parameter open: its tree is kept
    first = check_source(SOURCE, "m.py", _options(), trees=kept)
    second = check_source(SOURCE, "m.py", _options(), project=project, trees=kept)
    key = lambda r: [(f.line, f.col, f.end_line, f.end_col, f.code, f.message) for f in r.findings]  # noqa: E731
    assert key(first) == key(plain) == key(second) and key(plain)
    assert calls == {"guard": 2, "index": 2, "positions": 2}  # plain's and the first check's
    assert second.noqa is first.noqa and second.noqa.lines == plain.noqa.lines
    assert kept.reused == 1
    other = SOURCE.replace("y.cpu()", "y.cpu().numpy()")  # another text at that path: made anew
    check_source(other, "m.py", _options(), project=project, trees=kept)
    assert calls == {"guard": 3, "index": 3, "positions": 3}
