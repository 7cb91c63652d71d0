"""The house: imports run one way, down the stages (docs/architecture.md), with no cycle.

Every ``import`` in the package counts, at module level or inside a function: an import tucked into
a function to dodge a cycle is still an arrow.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "torchsync_lint"

# Top to bottom; a module may import its own stage and the stages below it.
STAGES = [
    ("front doors", ("cli", "flake8_plugin", "engine", "__main__", "server")),
    ("tree run", ("run",)),
    ("adoption", ("adopt",)),
    ("runtime", ("verify", "guard")),
    ("file check", ("check",)),
    ("rules", ("rules",)),
    ("inference", ("inference",)),
    ("catalog", ("catalog",)),
    ("syntax helpers", ("syntax",)),
    ("records", ("config", "finding")),
]
RANK = {part: i for i, (_, parts) in enumerate(STAGES) for part in parts}


def _modules():
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: pathlib.Path, known) -> set:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                up = here[: len(here) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name and not name.startswith(t + "."):  # a package's face is not an arrow
                found.add(t)
    return found


def _graph():
    mods = _modules()
    return {name: _imports(name, path, mods) for name, path in mods.items()}


def _stage(module: str):
    parts = module.split(".")
    return RANK.get(parts[1]) if len(parts) > 1 else None


def test_every_module_belongs_to_a_stage():
    loose = [m for m in _modules() if m != "torchsync_lint" and _stage(m) is None]
    assert loose == [], "add the new module or package to a stage in STAGES and docs/architecture.md"


def test_imports_only_run_down_the_stages():
    upward = []
    for module, targets in sorted(_graph().items()):
        here = _stage(module)
        for t in sorted(targets):
            there = _stage(t)
            if here is not None and there is not None and there < here:
                upward.append(f"{module} -> {t} ({STAGES[here][0]} importing {STAGES[there][0]})")
    assert upward == []


def test_no_import_cycles():
    graph = _graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_file_check_never_imports_the_tree_run():
    graph = _graph()
    bad = [(m, t) for m, ts in graph.items() if m.startswith("torchsync_lint.check")
           for t in ts if t.startswith(("torchsync_lint.run", "torchsync_lint.cli", "torchsync_lint.adopt"))]
    assert bad == []


@pytest.mark.parametrize("record", ["torchsync_lint.config", "torchsync_lint.finding"])
def test_records_import_nothing_of_the_package(record):
    assert {t for t in _graph()[record] if t.startswith("torchsync_lint.")} == set()


def test_the_checker_catches_an_upward_arrow(tmp_path, monkeypatch):
    """The walk above must see function-level and relative imports (else the tests pass vacuously)."""
    src = "def f():\n    from ..run import tree\n"
    known = {"torchsync_lint.check.x": None, "torchsync_lint.run.tree": None, "torchsync_lint.run": None}
    path = tmp_path / "x.py"
    path.write_text(src)
    assert _imports("torchsync_lint.check.x", path, known) == {"torchsync_lint.run", "torchsync_lint.run.tree"}


def test_the_public_api_is_where_users_import_it():
    import torchsync_lint
    from torchsync_lint import engine

    assert torchsync_lint.lint_source is engine.lint_source
    assert torchsync_lint.lint_paths is engine.lint_paths
    assert callable(__import__("torchsync_lint.cli", fromlist=["main"]).main)
