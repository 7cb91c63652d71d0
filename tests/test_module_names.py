"""``check.source.ModuleNames`` (the walk of a tree for one-file checks, ``run.ondemand``) names
every file as ``module_name_for`` does, each folder's package looked up once."""

import os
from pathlib import Path

from torchsync_lint.check import source
from torchsync_lint.check.source import ModuleNames, module_name_for

ROOT = Path(__file__).parent.parent


def test_the_same_names_as_module_name_for(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    for folder in (tmp_path / "a", tmp_path / "a" / "b", deep):
        (folder / "__init__.py").write_text("")
    (deep / "m.py").write_text("")
    (tmp_path / "a" / "loose").mkdir()
    (tmp_path / "a" / "loose" / "n.py").write_text("")
    paths = [str(p) for p in sorted(tmp_path.rglob("*.py"))] + [
        os.path.join(d, f) for d, _, fs in os.walk(ROOT / "torchsync_lint") for f in fs if f.endswith(".py")]
    names = ModuleNames()
    assert [names(p) for p in paths] == [module_name_for(p) for p in paths]
    assert names(str(deep / "m.py")) == ("a.b.c.m", False)


def test_each_folder_is_asked_once(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(20):
        (pkg / f"m{i}.py").write_text("")
    asked = []
    real = source.os.path.isfile
    monkeypatch.setattr(source.os.path, "isfile", lambda p: asked.append(p) or real(p))
    names = ModuleNames()
    got = {names(str(p))[0] for p in pkg.glob("m*.py")}
    assert got == {f"pkg.m{i}" for i in range(20)}
    assert len(asked) == 2  # pkg/__init__.py, then the folder above
