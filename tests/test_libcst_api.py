"""LibCST through its public names: no module imports a private ``libcst._...`` module, except
the one listed here with its reason (covered by the version range pyproject.toml pins and the
suite, which tox's `lowest` environment runs on the oldest LibCST allowed)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "torchsync_lint"
# file (relative to the package) -> the private names it may import, and why
ALLOWED = {
    "rules/_fixes.py": {"CodegenState"},  # a node's code with its own whitespace; LibCST exports no public way
}


def _private_imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("libcst._"):
                yield path.relative_to(PACKAGE).as_posix(), node.module, {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("libcst._"):
                        yield path.relative_to(PACKAGE).as_posix(), alias.name, {alias.name}


def test_no_private_libcst_modules():
    bad = [(f, m, sorted(n)) for f, m, n in _private_imports() if not n <= ALLOWED.get(f, set())]
    assert bad == [], "import these from libcst or libcst.metadata (public), or list them in ALLOWED with a reason"


def test_walk_sees_every_public_node_class():
    import inspect

    import libcst as cst

    from torchsync_lint.syntax import walk

    public = {c for c in vars(cst).values() if inspect.isclass(c) and issubclass(c, cst.CSTNode)}
    assert set(walk._concrete_node_classes()) <= public
    assert cst.Name in walk.inert_classes() and cst.Comma in walk.inert_classes()
    assert cst.Call not in walk.inert_classes()
