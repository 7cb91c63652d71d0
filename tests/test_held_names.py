"""``held_sites._stored_sites`` finds calls of a module-level function made through an attribute
or a local name that holds it; its candidates are built once per file (``held_names.held_by_name``)
instead of reading every attribute's assignments and every function's bindings for each function
asked. The plain reading is kept here as the reference: the same sites, in the same order."""

from pathlib import Path

import libcst as cst

from torchsync_lint.check.file import _index
from torchsync_lint.inference.held_sites import shadowed as _shadowed
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.held_names import held_function_names
from torchsync_lint.syntax.parse import parse_module

TESTS = Path(__file__).parent
HELD = '''
import torch


def robust(x):
    return x.median()


def std(x):
    return x.std()


def step(t, y):
    return y + t


class Solver:
    def __init__(self, kind):
        self.solver = step
        self.stats = {"robust": robust, "std": std}[kind]
        self.pick = robust if kind else std

    def run(self, x):
        stat = self.stats(x)
        return self.solver(0.1, x) + self.pick(x) + stat


def pick(kind, x):
    f = robust if kind == "r" else std
    g = [robust, std][0]
    robust = None  # shadowed from here: not a call of the module's function
    return f(x) + g(x)
'''


def _reference(ev, func):
    """The reading before the table: every attribute's rows and every function's bindings."""
    if func.parent is not None or func.cls is not None:
        return []
    out = []
    for cls in ev.index.classes.values():
        for attr, rows in cls.attrs.items():
            if any(f is not None and func.name in held_function_names(e) and not _shadowed(f, func.name)
                   for f, e in rows):
                out.extend(s for s in ev.index.call_sites.get("self." + attr, [])
                           if s.caller is not None and s.caller.cls is cls)
    for caller in ev.index.functions.values():
        if _shadowed(caller, func.name):
            continue
        for b in caller.bindings:
            if (b[0] == "assign" and len(b[1]) == 1 and type(b[1][0]) is cst.Name
                    and type(b[2]) is not cst.Name and func.name in held_function_names(b[2])):
                out.extend(s for s in ev.index.call_sites.get(b[1][0].value, []) if s.caller is caller)
    return out


def _sites(source, path="m.py"):
    index = _index(parse_module(source), path, "m")
    ev = Evaluator(index)
    got = 0
    for func in index.functions.values():
        want = _reference(ev, func)
        assert [id(s) for s in ev._stored_sites(func)] == [id(s) for s in want], func.key
        got += len(want)
    return got


def test_the_same_sites_as_the_plain_reading():
    assert _sites(HELD) >= 4


def test_the_same_sites_on_every_fixture():
    found = 0
    for path in sorted((TESTS / "fixtures").glob("*.py")) + sorted((TESTS / "projects").rglob("*.py")):
        found += _sites(path.read_text(encoding="utf-8"), str(path))
    assert found > 0
