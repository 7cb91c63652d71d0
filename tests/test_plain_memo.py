"""What every evaluator of a file answers alike, made once (``FileIndex.plain_annotations``,
``plain_declared``): an annotation read without the file's names or the project, and declared
types made of such annotations. A run that shares them gives the findings and the interfaces (first
pass and final) of a run whose evaluators each compute everything afresh."""

import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from torchsync_lint import lint_paths
from torchsync_lint.check.file import check_source
from torchsync_lint.check.report import Options
from torchsync_lint.config import Config
from torchsync_lint.inference import index as index_mod
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.index import FileIndex
from torchsync_lint.rules.registry import all_rules
from torchsync_lint.run import checked_run

TESTS = Path(__file__).parent
PROJECTS = TESTS / "projects"


class _Forgets(dict):
    """A memo that keeps nothing: every evaluator computes every answer itself."""

    def __setitem__(self, key, value) -> None:
        pass


def _unshared(monkeypatch) -> None:
    real = FileIndex.__init__

    def init(self, *a, **k):
        real(self, *a, **k)
        self.plain_annotations, self.plain_declared = _Forgets(), _Forgets()

    monkeypatch.setattr(index_mod.FileIndex, "__init__", init)


def _index(source: str, module: str = "pkg.m") -> tuple:
    tree = cst.parse_module(textwrap.dedent(source))
    index = FileIndex(module)
    tree.visit(index)
    return tree, index


def test_annotations_that_read_the_file_or_the_project_stay_with_their_evaluator():
    _tree, index = _index("""
        from typing import Optional
        import torch
        from pkg.other import Config

        Batch = torch.Tensor

        class Local:
            pass

        def f(a: Optional[torch.Tensor], b: Batch, c: Config, d: Local, e: "list[torch.Tensor]"):
            return a
    """)
    func = index.functions["pkg.m.f"]
    anns = {p.name.value: p.annotation.annotation for p in func.node.params.params}
    first = Evaluator(index)
    declared = first.declared(func)
    assert declared["a"].kind == "tensor" and declared["e"].kind == "list"
    plain = {id(node) for node, _v in index.plain_annotations.values()}
    assert id(anns["a"]) in plain and id(anns["e"]) in plain
    # a name of this file (an alias, a class) or of another file: read through the evaluator
    assert not plain & {id(anns["b"]), id(anns["c"]), id(anns["d"])}
    assert id(func) not in index.plain_declared  # made of some of those

    # a second evaluator of the file (here one that assumes tensors in parameters) takes the
    # plain ones as they are and computes the others itself, with the same answers
    second = Evaluator(index, assume_params="cpu")
    assert second.annotation_value(anns["a"]) is index.plain_annotations[id(anns["a"])][1]
    assert second.declared(func) == declared
    index.release()
    assert not index.plain_annotations and not index.plain_declared


def test_declared_types_of_plain_annotations_are_shared():
    _tree, index = _index("""
        import torch

        def g(x: torch.Tensor, n: int):
            '''
            Args:
                y (torch.Tensor): documented only
            '''
            return x
    """)
    func = index.functions["pkg.m.g"]
    made = Evaluator(index).declared(func)
    assert index.plain_declared[id(func)] == (func, made)
    assert Evaluator(index, assume_params="any").declared(func) is made


def _fixture_reports(monkeypatch, share: bool):
    if not share:
        _unshared(monkeypatch)
    options = Options(tuple(all_rules()), (), (), ())
    out = {}
    for path in sorted((TESTS / "fixtures").glob("*.py")):
        source = path.read_text()
        report = check_source(source, str(path), options, module_name=path.stem)
        out[path.name] = (json.dumps(report.interface, sort_keys=True, default=repr),
                          [(f.line, f.col, f.code, f.message) for f in report.findings])
    return out


def test_fixture_files_alike_with_and_without_sharing(monkeypatch):
    shared = _fixture_reports(monkeypatch, True)
    with monkeypatch.context() as m:
        fresh = _fixture_reports(m, False)
    assert shared == fresh and len(shared) > 50


def _run(paths, monkeypatch, share: bool):
    """Findings, first-pass and final interfaces of a one-process run."""
    seen = {}
    real_first, real_pass = checked_run.first_pass, checked_run.project_pass

    def keep(name, real):
        def wrapped(*a, **k):
            reports = real(*a, **k)
            seen[name] = {r.path: json.dumps(r.interface, sort_keys=True, default=repr) for r in reports}
            return reports
        return wrapped

    with monkeypatch.context() as m:
        if not share:
            _unshared(m)
        m.setattr(checked_run, "first_pass", keep("first", real_first))
        m.setattr(checked_run, "project_pass", keep("final", real_pass))
        result = lint_paths([str(p) for p in paths], Config(include_cold=True, respect_gitignore=False), jobs=1)
    return sorted((f.path, f.line, f.col, f.code, f.message) for f in result.findings), seen


@pytest.mark.parametrize("name", ["typealias", "typed_dicts", "crossfile", "dispatch", "handed_back", "training"])
def test_fixture_projects_alike_with_and_without_sharing(name, monkeypatch):
    shared = _run([PROJECTS / name], monkeypatch, True)
    fresh = _run([PROJECTS / name], monkeypatch, False)
    assert shared == fresh and shared[1]["first"] and shared[1]["final"]
