"""LibCST through its public names: no module imports a private ``libcst._...`` module (the
fixes' code generation included: ``rules._fixes.code`` goes through ``Module.code``)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "torchsync_lint"
# file (relative to the package) -> the private names it may import, and why: none
ALLOWED: dict = {}


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


def test_fix_text_keeps_the_nodes_own_layout_with_the_indent_marker():
    """A node's code for a fix: its own whitespace and comments, continuation lines marked with
    INDENT (the enclosing block's indentation, found later in the file), parentheses on request."""
    import libcst as cst

    from torchsync_lint.finding import INDENT
    from torchsync_lint.rules._fixes import code

    source = "def f():\n    y = (torch.tensor(  # data\n        [1.0, 2.0],\n    ))\n    assert x.all(), 'm'\n"
    body = cst.parse_module(source).body[0].body.body
    value = body[0].body[0].value
    assert code(value) == f"torch.tensor(  # data\n{INDENT}    [1.0, 2.0],\n{INDENT})"
    assert code(value, parens=True) == f"(torch.tensor(  # data\n{INDENT}    [1.0, 2.0],\n{INDENT}))"
    assert code(body[1].body[0]) == "assert x.all(), 'm'"


def test_walk_sees_every_public_node_class():
    import inspect

    import libcst as cst

    from torchsync_lint.syntax import walk

    public = {c for c in vars(cst).values() if inspect.isclass(c) and issubclass(c, cst.CSTNode)}
    assert set(walk._concrete_node_classes()) <= public
    assert cst.Name in walk.inert_classes() and cst.Comma in walk.inert_classes()
    assert cst.Call not in walk.inert_classes()
