"""A one-file check expands a star import only where the module's text could bind the name asked
(``run.star_text``): ``from ... import helper`` in a model of a package whose ``__init__``
star-imports every model package made the check derive the interface of every model (transformers:
200, the on-demand limit, for ``from ... import initialization``), and none bound the name."""

import shutil
from pathlib import Path

import pytest

from torchsync_lint.check.file import interface_only
from torchsync_lint.check.report import FileReport
from torchsync_lint.check.source import module_name_for
from torchsync_lint.flake8_plugin import TorchSyncChecker
from torchsync_lint.inference.defs import declared_all
from torchsync_lint.inference.index import FileIndex
from torchsync_lint.inference.project import Project
from torchsync_lint.run import ondemand
from torchsync_lint.run.star_text import StarText, _read, _stars, last_all, literal_all, masked
from torchsync_lint.syntax import walk
from torchsync_lint.syntax.parse import parse_module

TESTS = Path(__file__).parent
PACKAGE = TESTS.parent / "torchsync_lint"

MODEL = """import torch
from ... import helper

# the helper's initialization
def run_{n}(batches):
    total = 0.0
    for batch in batches:
        total += helper.loss(batch).item()
    return total


__all__ = ["run_{n}"]
"""
FILES = {
    "pkg/__init__.py": "from .models import *\n",
    "pkg/helper.py": "import torch\n\n\ndef loss(x):\n    return torch.ones(3, device='cuda').sum()\n",
    "pkg/models/__init__.py": "from .a import *\nfrom .b import *\nfrom .c import *\n",
    **{f"pkg/models/{n}/__init__.py": f"from .modeling_{n} import *\n" for n in "abc"},
    **{f"pkg/models/{n}/modeling_{n}.py": MODEL.format(n=n) for n in "abc"},
}


def _declared(text):
    index = FileIndex("m")
    walk.visit(parse_module(text), index)
    return declared_all(index.module_bindings)


def _literal(text):
    return literal_all(text, masked(text)[0])


@pytest.mark.parametrize("text, want", [
    ('import torch\n\n\n__all__ = [\n    "A",  # it\'s "B"\n    \'C\',\n]\n\n# end\n', ["A", "C"]),
    ('__all__ = []\n', []),
])
def test_an_all_that_ends_the_file_is_read_from_its_last_lines(text, want):
    assert last_all(text) == want == _declared(text) == _literal(text)


@pytest.mark.parametrize("text", [
    'x = """\n__all__ = ["a"]  # """\n',  # the line of a string that a comment's quotes close
    'f(\n__all__ = ["a"]\n)\n',  # a keyword argument: a bracket closes after it
    'x = 1 + \\\n__all__ = ["a"]\n',  # a continued line
    'x = \\\r\n__all__ = ["a"]\n',  # continued with a CRLF: `x = __all__ = [...]`
    '__all__ = ["a"]\n__all__ += ["b"]\n',  # named twice
    '"""__all__"""\n__all__ = ["a"]\n',
    '__all__ = ["a"]\nx = 1\n',  # not the end
    '__all__ = ("a",)\n',
])
def test_an_all_the_last_lines_cannot_tell_is_left_to_the_whole_text(text):
    assert last_all(text) is None


@pytest.mark.parametrize("text, want", [
    ('__all__ = ["a", "b"]\n', ["a", "b"]),
    ('x = 1\n__all__ = [\n    "a",  # it\'s "b"\n    \'c\',\n]\n', ["a", "c"]),
    ('__all__ = ("a", "b")\n', ["a", "b"]),
    ('__all__ = ("a")\n', None),  # a string in parentheses, not a tuple
    ('__all__ = ["a"]\n__all__ += ["b"]\n', ["a", "b"]),
    ('__all__ = ["a"]\n__all__ = __all__ + ["b"]\n', ["a", "b"]),
    ('__all__: list = ["a"]\n', ["a"]),
    ('__all__ = ["a"] + OTHER\n', None),
    ('__all__ = ["a" "b"]\n', None),  # implicit concatenation: not a plain string
    ('__all__ = [r"a"]\n', None),
    ('__all__ = ["a"]\n__all__.append("b")\n', ["a"]),  # a call binds nothing: the index reads no more
    ('import x\n', None),
])
def test_a_literal_all_is_read_as_the_index_reads_it(text, want):
    assert _declared(text) == want
    assert _literal(text) == want


@pytest.mark.parametrize("text", [
    '"""Use __all__ = ["x"] to list names."""\n__all__ = ["y"]\n',  # a docstring names it
    'x = """\n__all__ = ["x"]\n"""\n',  # a line of a string
    '# __all__ = ["x"]\n__all__ = ["y"]\n',  # a comment
    'if True:\n    __all__ = ["a"]\n',  # indented
    'names = [\n__all__ ]\n',  # inside brackets
    'x = 1 + \\\n__all__\n',  # a continued line
    'f"{(__all__ := [1])}"\n',  # bound inside an f-string's field
    '__all__ = ["a"]\r\n',
])
def test_an_all_the_text_cannot_tell_is_unknown(text):
    assert _literal(text) is None


def _python_files():
    out = sorted(PACKAGE.rglob("*.py")) + sorted((TESTS / "fixtures").rglob("*.py")) \
        + sorted((TESTS / "projects").rglob("*.py"))
    return [p for p in out if "__all__" in p.read_text(encoding="utf-8")]


def test_every_literal_all_read_from_text_is_the_index_s():
    files = _python_files()
    assert len(files) > 10
    read = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        for got in (_literal(text), last_all(text)):
            if got is not None:
                read += 1
                assert got == _declared(text), path
    assert read > 5


def _project(tmp_path):
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    return root


def _interfaces(root):
    out = {}
    for path in sorted(root.rglob("*.py")):
        module = module_name_for(str(path))[0]
        report = FileReport(str(path))
        interface_only(path.read_text(), str(path), module, report)
        out[module] = report.interface
    return out


@pytest.mark.parametrize("project", ["made", "star_imports", "reexport"])
def test_a_star_import_ruled_out_never_exports_the_name(project, tmp_path):
    if project == "made":
        root = _project(tmp_path)
    else:
        root = tmp_path / "proj"
        shutil.copytree(TESTS / "projects" / project, root)
    interfaces = _interfaces(root)
    whole = Project(dict(interfaces))
    paths = {module_name_for(str(p))[0]: str(p) for p in root.rglob("*.py")}
    text = StarText(lambda: paths)
    names = {w for p in root.rglob("*.py") for w in p.read_text().replace(".", " ").replace("(", " ").split()
             if w.isidentifier()} | {"helper", "initialization", "nothing_binds_this"}
    ruled_out = 0
    for module in paths:
        exported = whole.exported(module)
        for name in sorted(names):
            if not text.may_export(module, name):
                ruled_out += 1
                assert name not in exported, (module, name)
    assert ruled_out > 0


CYCLES = {  # star-import cycles, a module that is not there, one unreadable, one whose stars are unknown
    "cyc/__init__.py": "from .a import *\nfrom cyc.c import *\n",
    "cyc/a/__init__.py": "from .b import *\nfrom cyc import *\nalpha = 1\n",
    "cyc/a/b.py": "from cyc.a import *\nfrom cyc.gone import *\n\n\ndef beta():\n    return 'gamma'\n",
    "cyc/c.py": "__all__ = ['delta']\ndelta = epsilon = 1\n",
    "cyc/d.py": "from .e import *\nfrom .f import *\nzeta = 2\n",
    "cyc/e.py": "from .d import *\neta = 3  # theta\n",
    "cyc/f.py": "import os; from .g import *\ndef (:\n",
    "cyc/h.py": "from .bad import *\nfrom .c import *\n",
}


def _followed(paths, module, name, seen):
    """The answer followed one module at a time, each module once per question (the walk
    ``may_export`` made for every name before it kept what a module reaches)."""
    if module in seen:
        return False
    seen.add(module)
    path = paths.get(module)
    if path is None:
        return False
    facts = _read(path)
    if facts is None:
        return True
    if facts.all is not None:
        return name in facts.all
    if facts.binds(name):
        return True
    stars = _stars(facts.text, module, facts.package)
    return stars is None or any(_followed(paths, star, name, seen) for star in stars)


@pytest.mark.parametrize("project", ["made", "cycles", "star_imports", "reexport"])
def test_what_a_module_reaches_answers_as_the_walk_for_each_name(project, tmp_path):
    root = tmp_path / "proj"
    if project in ("made", "cycles"):
        for rel, text in (FILES if project == "made" else CYCLES).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        if project == "cycles":
            (root / "cyc" / "bad.py").write_bytes(b"from .c import *\nx = '\xff'\n")  # not UTF-8
    else:
        shutil.copytree(TESTS / "projects" / project, root)
    paths = {module_name_for(str(p))[0]: str(p) for p in root.rglob("*.py")}
    names = {w for p in root.rglob("*.py") for w in p.read_bytes().decode("latin-1").replace(".", " ").replace(
        "(", " ").replace("'", " ").split() if w.isidentifier()} | {"nothing_binds_this"}
    text = StarText(lambda: paths)
    answers = set()
    for module in sorted(paths) + ["cyc.gone"]:
        for name in sorted(names):
            got = text.may_export(module, name)
            assert got == _followed(paths, module, name, set()), (module, name)
            answers.add(got)
    assert answers == {True, False}


def _checked(root, monkeypatch, may_export=None):
    ondemand._PROJECTS.clear()
    shutil.rmtree(root / ".torchsync_cache", ignore_errors=True)
    if may_export is not None:
        monkeypatch.setattr(StarText, "may_export", may_export)
    monkeypatch.setattr(TorchSyncChecker, "include_cold", True)
    loaded = []
    real = ondemand.OnDemand._load
    monkeypatch.setattr(ondemand.OnDemand, "_load", lambda self, m: loaded.append(m) or real(self, m))
    path = root / "pkg" / "models" / "a" / "modeling_a.py"
    found = list(TorchSyncChecker(None, path.read_text().splitlines(True), str(path)).run())
    ondemand._PROJECTS.clear()
    return {f[:3] for f in found}, set(loaded)


def test_a_one_file_check_derives_no_model_for_a_name_no_model_binds(tmp_path, monkeypatch):
    root = _project(tmp_path)
    found, loaded = _checked(root, monkeypatch)
    assert "pkg.helper" in loaded and "pkg" in loaded
    assert not loaded & {"pkg.models", "pkg.models.b", "pkg.models.b.modeling_b", "pkg.models.c.modeling_c"}
    # every star import expanded, as before: the same findings, from every model's interface
    every, loaded_all = _checked(root, monkeypatch, may_export=lambda self, module, name: True)
    assert {"pkg.models.b.modeling_b", "pkg.models.c.modeling_c"} <= loaded_all
    assert found == every and found


@pytest.mark.parametrize("text, want", [
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import *\n    from ..b.c import *  # c\n",
     ["pkg.sub.a", "pkg.b.c"]),
    ("from . import *\nfrom pkg.d import *\n", ["pkg.sub", "pkg.d"]),
    ("from .x \\\n    import *\n", ["pkg.sub.x"]),  # a continued line: CPython's parse
    ("import os; from .y import *\n", ["pkg.sub.y"]),  # not alone on its line: CPython's parse
    ("import os\n", []),
])
def test_star_imports_are_read_as_the_index_reads_them(text, want):
    assert sorted(_stars(text, "pkg.sub", True)) == sorted(want)
    index = FileIndex("pkg.sub", True)
    walk.visit(parse_module(text), index)
    assert sorted(index.aliases.stars) == sorted(want)
