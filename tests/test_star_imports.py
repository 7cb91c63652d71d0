"""``from .imports import *``: what a star import binds, as Python binds it (``inference.stars``).
The end-to-end case is the fixture project ``tests/projects/star_imports``."""

import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst

from torchsync_lint import lint_paths
from torchsync_lint.config import Config
from torchsync_lint.inference.defs import declared_all
from torchsync_lint.inference.index import FileIndex
from torchsync_lint.inference.project import Project
from torchsync_lint.inference.stars import exports

PROJECT = Path(__file__).parent / "projects" / "star_imports"


def _iface(module, aliases=None, functions=(), classes=(), values=(), stars=(), all_=None):
    return {"module": module, "aliases": dict(aliases or {}), "stars": list(stars), "all": all_,
            "functions": {f"{module}.{f}": {} for f in functions},
            "classes": {f"{module}.{c}": {} for c in classes},
            "values": {v: {} for v in values}}


def test_without_all_every_public_name_goes_imports_included():
    iface = _iface("pkg.imports", aliases={"torch": "torch", "F": "torch.nn.functional", "_np": "numpy"},
                   functions=["helper", "_hidden"], classes=["Box"], values=["EPS"])
    got = exports("pkg.imports", iface, lambda m: {})
    assert got == {"torch": "torch", "F": "torch.nn.functional", "helper": "pkg.imports.helper",
                   "Box": "pkg.imports.Box", "EPS": "pkg.imports.EPS"}


def test_all_lists_what_goes_private_names_included():
    iface = _iface("pkg.utils", aliases={"torch": "torch"}, functions=["probs", "_norm"], all_=["probs", "_norm"])
    assert exports("pkg.utils", iface, lambda m: {}) == {"probs": "pkg.utils.probs", "_norm": "pkg.utils._norm"}


def test_a_module_own_names_win_over_what_its_star_imports_bring():
    iface = _iface("pkg.ops", functions=["unique"], stars=["pkg.imports"])
    got = exports("pkg.ops", iface, lambda m: {"unique": "torch.unique", "torch": "torch"})
    assert got == {"unique": "pkg.ops.unique", "torch": "torch"}


def test_star_chains_and_cycles_through_the_project():
    p = Project({
        "pkg.imports": _iface("pkg.imports", aliases={"torch": "torch"}),
        "pkg.layers": _iface("pkg.layers", functions=["block"], stars=["pkg.imports", "pkg.models"]),
        "pkg.models": _iface("pkg.models", functions=["net"], stars=["pkg.layers"]),  # a cycle
        "pkg": _iface("pkg", stars=["pkg.layers"]),
    })
    assert p.exported("pkg.models") == {"torch": "torch", "block": "pkg.layers.block", "net": "pkg.models.net"}
    assert p.locate("pkg.block") == ("function", "pkg.layers.block")  # a package re-exporting through a star
    assert p.external_module("pkg.layers.torch.nn") == "torch.nn"
    assert p.exported("pkg.missing") == {}


def _all(source):
    index = FileIndex("m")
    cst.parse_module(source).visit(index)
    return declared_all(index.module_bindings)


def test_declared_all_reads_literal_lists_and_their_extensions():
    assert _all("__all__ = ['a', 'b']\n__all__ += ('c',)\n") == ["a", "b", "c"]
    assert _all("x = 1\n") is None
    assert _all("__all__ = [name for name in dir()]\n") is None  # not literal: every public name


def test_flake8_on_a_warm_tree_follows_star_imports(tmp_path):
    """flake8 sees one file; the cached interfaces of the modules it star-imports answer."""
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'tskit'\n")
    cli = lint_paths([str(root)], Config(), jobs=1, cache_dir=str(root / ".torchsync_cache"))
    want = {(str(Path(f.path).resolve()), f.line, f.col, f.code) for f in cli.findings}
    assert any(f.code == "TSL102" for f in cli.findings)  # torch.unique, torch from the star import
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "TSL", str(root / "tskit" / "train.py"),
                          str(root / "tskit" / "utils.py")], capture_output=True, text=True, cwd=root)
    got = set()
    for line in out.stdout.splitlines():
        path, line_no, col, rest = line.split(":", 3)
        got.add((str(Path(path).resolve()), int(line_no), int(col), rest.split()[0]))
    assert got == want, out.stderr


def test_an_edit_behind_a_star_import_reaches_the_cached_reports(tmp_path):
    """A check that took a name through star imports recorded the tables it read: editing the
    module the name comes from gives the findings of an uncached run of the edited tree."""
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    cache = str(tmp_path / "cache")

    def run(**kw):
        return sorted((Path(f.path).name, f.line, f.code) for f in lint_paths([str(root)], Config(), jobs=1, **kw).findings)

    before = run(cache_dir=cache)
    assert ("train.py", 16, "TSL302") not in before  # the host table, placed by imports.HOST
    assert ("train.py", 19, "TSL102") in before  # torch.unique, torch from the star import
    imports = root / "tskit" / "imports.py"
    imports.write_text(imports.read_text().replace('torch.device("cpu")', 'torch.device("cuda")'))
    after = run(cache_dir=cache)
    assert after == run() and ("train.py", 16, "TSL302") in after
    # `torch` there is numpy's now: train.py (checked after utils.py, which asked the same star
    # import first) must not keep its cached report
    imports.write_text(imports.read_text().replace("import torch\n", "import numpy as torch\n", 1))
    edited = run(cache_dir=cache)
    assert edited == run() and ("train.py", 19, "TSL102") not in edited
