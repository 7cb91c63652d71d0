"""The engine's speed-ups must not change what it finds.

- ``walk.Walker`` meets the same nodes, in the same order, as ``node.visit(CSTVisitor)``;
- the memoised ``FileContext.value``/``qualname`` answer what the evaluator answers;
- crashes seen on the public corpus (bench/robustness.py) stay fixed.
"""

from __future__ import annotations

import pathlib

import libcst as cst
import pytest

from torchsync_lint.check.lint_source import lint_source
from torchsync_lint.run.tree import lint_paths
from torchsync_lint.check import file as file_check
from torchsync_lint.check.walker import RuleWalker
from torchsync_lint.run import cached_check
from torchsync_lint.syntax import walk
from torchsync_lint.config import Config
from torchsync_lint.inference.context import FileContext
from torchsync_lint.rules.registry import all_rules

TESTS = pathlib.Path(__file__).parent
FIXTURES = sorted((TESTS / "fixtures").glob("*.py"))

# Every construct whose children LibCST visits in a particular order, or only sometimes
# (an f-string's format spec is visited only when present: both orders of first meeting).
VARIED = '''\
"""Module docstring."""
# a comment
from __future__ import annotations
import torch as th, os.path
from . import sibling
from ..pkg import (a as b, c)
from x import *
global_value: int = 1

@decorator(arg)
@other
async def f(x, /, y: int = 2, *args, z=3, **kw) -> "th.Tensor":
    global g
    def inner():
        nonlocal x
    s = f"{x}" f"{y:>{z}}" f"{x!r:8.3f}" f"{y=}" f"{x}"
    if (n := len(args)) > 1 and not x or y:
        pass
    elif x:
        ...
    else:
        del x
    for i, (j, k) in enumerate(zip(a, b)):
        continue
    else:
        break
    while True:
        async with th.no_grad() as ctx, open(p):
            await x
    try:
        raise ValueError("v") from None
    except* (TypeError, ValueError) as e:
        yield from e
    finally:
        lambda q, *r: q[1:2, ::3, ...]
    return [v for v in x if v] + {k: v for k, v in y.items()} | {*s} and (w for w in z)

class C(Base, metaclass=Meta):
    x: list[int] = []
    def method(self):
        return self.x[0] @ y ** -z // 2 >> 1 if a is not b else c in d

match command.split():
    case [action, *rest] if action:
        pass
    case {"key": value, **others} | Point(x=0, y=_) as p:
        pass
    case None | True | 1.5 | -1j | "s":
        pass
assert x, "message"
print(*args, sep="", **kw); x += 1; y @= z
'''


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events = []

    def on_visit(self, node) -> bool:
        self.events.append(("visit", node))
        return True

    def on_leave(self, node) -> None:
        self.events.append(("leave", node))


def _libcst_events(module):
    rec = _Recorder()
    module.visit(rec)
    return rec.events


def _walk_events(module, names):
    events = []
    visits = {n: [lambda node: events.append(("visit", node))] for n in names}
    leaves = {n: [lambda node: events.append(("leave", node))] for n in names}
    walk.Walker(visits, leaves).walk(module)
    return events


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b))


SOURCES = {"varied": VARIED, **{p.name: p.read_text(encoding="utf-8") for p in FIXTURES}}
ALL_TYPES = frozenset(c.__name__ for c in walk._concrete_node_classes())
SUBSETS = {
    "all types": ALL_TYPES,
    "rules' types": {"Call", "Subscript", "Assign", "FunctionDef", "For", "If", "Assert"},
    "tokens inside inert nodes": {"Name", "Comment", "Integer", "LeftParen"},
}


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("subset", sorted(SUBSETS))
def test_walk_meets_nodes_in_libcst_order(name, subset):
    module = cst.parse_module(SOURCES[name])
    types = SUBSETS[subset]
    want = [(kind, node) for kind, node in _libcst_events(module) if type(node).__name__ in types]
    assert _same(_walk_events(module, types), want)


def test_format_spec_seen_after_an_fstring_without_one():
    """The field plan of a node type is recorded once; a field LibCST visits only when set
    (``format_spec``) must be in it even when the first f-string met has none."""
    walk._FIELDS.clear()
    module = cst.parse_module('a = f"{x}"\nb = f"{y:{width}}"\n')
    names = [n.value for kind, n in _walk_events(module, {"Name"}) if kind == "visit"]
    assert names == ["a", "x", "b", "y", "width"]


def test_iter_children_matches_children():
    module = cst.parse_module(VARIED)
    for kind, node in _libcst_events(module):
        if kind == "visit":
            assert list(walk.iter_children(node)) == list(node.children), type(node).__name__


def test_visitor_return_false_prunes_like_libcst():
    class Outer(cst.CSTVisitor):
        def __init__(self):
            self.names = []

        def visit_FunctionDef(self, node):
            return False

        def visit_Name(self, node):
            self.names.append(node.value)

    module = cst.parse_module("a = 1\ndef f(b):\n    c = 2\nd = 3\n")
    ours, theirs = Outer(), Outer()
    walk.visit(module, ours)
    module.visit(theirs)
    assert ours.names == theirs.names == ["a", "d"]


def _findings(source: str, path: str):
    config = Config(select=list(all_rules()), include_cold=True)
    return [(f.line, f.col, f.end_line, f.end_col, f.code, f.message, f.temperature)
            for f in lint_source(source, path, config)]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fast_paths_find_what_the_plain_paths_find(path, monkeypatch):
    """The fast walk + memoised context + per-statement positions against LibCST's visit + the
    evaluator asked each time + positions from generating the whole module."""
    source = path.read_text(encoding="utf-8")
    fast = _findings(source, str(path))
    monkeypatch.setattr(RuleWalker, "run", lambda self, module: module.visit(self) and {})
    monkeypatch.setattr(file_check, "places", lambda *args: None)
    monkeypatch.setattr(file_check.walk, "visit", lambda module, visitor: module.visit(visitor))
    monkeypatch.setattr(FileContext, "value", lambda self, expr: self._infer(expr))
    monkeypatch.setattr(FileContext, "qualname", lambda self, expr: self.aliases.qualify(expr))
    assert fast == _findings(source, str(path))


def test_value_memo_is_dropped_when_a_name_is_rebound():
    source = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        y = x.item()\n"
        "        x = [1.0]\n"
        "        for x in range(3):\n"
        "            pass\n"
        "        return x.item()\n"
    )
    got = [(f.line, f.code) for f in lint_source(source, "m.py", Config(select=["TSL001"]))]
    assert got == [(4, "TSL001")]


def test_forward_input_declared_as_another_class_is_not_a_tensor():
    """transformers' Sam2VideoModel.forward(self, inference_session: Sam2VideoInferenceSession):
    the first forward input is a tensor only when nothing says otherwise."""
    source = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, session: InferenceSession, x):\n"
        "        if session.get_obj_num() == 0:  # ok: a session object, not a tensor\n"
        "            return x\n"
        "        return [x for _ in range(session.count())]\n"
        "    def other(self, frames: 'torch.Tensor'):\n"
        "        pass\n"
    )
    assert _findings(source, "m.py") == []


def _every_node_by_statement(module):
    """All nodes (tokens aside) with their top-level statement."""
    owner = {}
    nodes = []
    for stmt in module.body:
        seen = []
        walk.Walker({n: [seen.append] for n in ALL_TYPES}, {}).walk(stmt)
        for node in seen:
            if type(node) not in walk.inert_classes() or type(node).__name__ == "Name":
                owner[id(node)] = stmt
                nodes.append(node)
    return nodes, owner


POSITION_CASES = {
    **SOURCES,
    "no final newline": "import torch\nx = torch.ones(2)\ny = x.item()",
    "duplicate statements": "y = x.item()\ndef f():\n    y = x.item()\ny = x.item()\n",
    "crlf": "import torch\r\nx = t.item()\r\nif x:\r\n    y = t[0]\r\n",
    "trailing comment": "x = t.item()\n# the end\n",
    "continuation": "x = t \\\n    .item()\nz = (\n  a[1]\n)\n",
}


@pytest.mark.parametrize("name", sorted(POSITION_CASES))
def test_positions_per_statement_match_whole_module(name):
    from torchsync_lint.check.positions import positions

    source = POSITION_CASES[name]
    module = cst.parse_module(source)
    nodes, owner = _every_node_by_statement(module)
    fast = positions(module, nodes, source, {k: [(stmt, "")] for k, stmt in owner.items()})
    slow = positions(module, nodes)
    assert {id(n): fast.get(n) for n in nodes} == {id(n): slow.get(n) for n in nodes}


NESTED = '''\
import torch
class M(torch.nn.Module):
  def forward(self, x):
    def inner(t):
        return t.item()
    if x.sum():
        def under_if(t):
            return t.item()
    return inner(x) + x.item()
  def other(self, x):
    return x.item()
def top(x):
	return x.item()
class M2(torch.nn.Module):
  def forward(self, x):
    return x.item()
class M3(torch.nn.Module):
  def forward(self, x):
    return x.item()
'''


@pytest.mark.parametrize("source", [NESTED, NESTED.replace("\n", "\r\n")], ids=["lf", "crlf"])
def test_positions_from_function_statements(source, monkeypatch):
    """Each finding placed through its function (methods, nested defs, tabs, a def under an
    `if`, duplicate method text) where it was placed from the whole module before."""
    fast = _findings(source, "m.py")
    monkeypatch.setattr(file_check, "places", lambda *args: None)
    assert fast == _findings(source, "m.py")
    assert [f[0] for f in fast if f[4] == "TSL001"] == [5, 8, 9, 11, 13, 16, 19]


def test_report_cache_reuses_unchanged_files_only(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    model = pkg / "model.py"
    model.write_text("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x.item()\n        return x\n")
    (pkg / "train.py").write_text("from .model import M\ndef helper(t):\n    return t.tolist()\n")
    cache_dir = str(tmp_path / "cache")
    config = Config(select=list(all_rules()))

    def run():
        return [(f.path, f.line, f.code, f.temperature) for f in lint_paths([str(pkg)], config, jobs=1,
                                                                                  cache_dir=cache_dir).findings]

    first = run()
    assert first and first == [(f.path, f.line, f.code, f.temperature)
                               for f in lint_paths([str(pkg)], config, jobs=1).findings]
    checked = []
    real = cached_check.check_data
    monkeypatch.setattr(cached_check, "check_data", lambda data, path, options, *rest: checked.append(path) or real(
        data, path, options, *rest))
    assert run() == first and checked == []  # every report from the cache
    model.write_text(model.read_text().replace("x.item()", "pass"))  # its interface is unchanged
    second = run()
    assert checked == [str(model)] and all(p != str(model) for p, *_ in second)
    model.write_text(model.read_text().replace("return x", "return 1"))  # what M returns changed
    checked.clear()
    got, rechecked = run(), list(checked)
    assert got == [(f.path, f.line, f.code, f.temperature) for f in lint_paths([str(pkg)], config, jobs=1).findings]
    # train.py imports M but asks nothing about what it returns (run/tracked_project.py): its
    # report is kept (tests/test_incremental.py: a file that asks is checked again)
    assert rechecked == [str(model)]
    checked.clear()
    config.select = ["TSL002"]  # other options, other keys: every file checked again
    assert {c for _p, _l, c, _t in run()} <= {"TSL002"}
    assert len(checked) == 3


def test_cache_fingerprint_covers_every_stage_of_the_package(tmp_path, monkeypatch):
    """A change to a rule or to inference (not only to run/) must invalidate cached reports."""
    import torchsync_lint
    from torchsync_lint.run import cache as cache_mod

    pkg_root = pathlib.Path(torchsync_lint.__file__).parent
    seen = []
    real_walk = cache_mod.os.walk
    monkeypatch.setattr(cache_mod.os, "walk", lambda root: seen.append(root) or real_walk(root))
    cache_mod.code_fingerprint.cache_clear()
    try:
        cache_mod.code_fingerprint()
    finally:
        cache_mod.code_fingerprint.cache_clear()
    assert seen and pathlib.Path(seen[0]).resolve() == pkg_root.resolve()


STATEMENT_LINES = '''\
import torch
class M(torch.nn.Module):
    def forward(self, x):
        # a comment above the line
        a = x.item()
        if x.sum():
            for i in range(3):
                while i:
                    with torch.no_grad():
                        try:
                            b = x.item()
                        except ValueError:
                            c = x.tolist()
                        else:
                            d = x.item()
                        finally:
                            e = x.item()
        else:
            f = x.item()
        if x.any(): g = x.item()
        a = x.item()
        return x.item()
def top(x):
\th = x.item()
\tif x:
\t    k = x.tolist()
\treturn h
def dup(x):
    a = x.item()
    return a
'''


@pytest.mark.parametrize("source", [STATEMENT_LINES, STATEMENT_LINES.replace("\n", "\r\n")], ids=["lf", "crlf"])
def test_positions_from_statement_lines(source, monkeypatch):
    """A finding is placed from the statement line that holds it (indented blocks of every kind,
    a comment above it, tabs), else from its function (a line whose text occurs twice, a one-line
    suite, a header), where it was placed from the whole module before."""
    from torchsync_lint.check import positions as positions_module

    generated = []
    real = positions_module._generate

    def spy(module, root, nodes, indent=""):
        generated.append(type(root).__name__)
        return real(module, root, nodes, indent)

    monkeypatch.setattr(positions_module, "_generate", spy)
    fast = _findings(source, "m.py")
    if "\r" not in source:  # lone CRs: the whole module is generated
        assert "SimpleStatementLine" in generated
    monkeypatch.setattr(file_check, "places", lambda *args: None)
    assert fast == _findings(source, "m.py")
    assert sorted({f[0] for f in fast}) == [5, 6, 11, 13, 15, 17, 19, 20, 21, 22, 24, 29]
