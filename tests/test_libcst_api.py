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


def test_concrete_node_classes_have_no_subclasses():
    """The inference and the rules test node types as ``type(node) is cst.Name`` (an
    ``isinstance`` against LibCST's abstract-base metaclass costs five times as much when it
    fails): the same answer only while no concrete node class is subclassed, in LibCST or here."""
    import inspect

    import libcst as cst

    concrete = [c for c in vars(cst).values()
                if inspect.isclass(c) and issubclass(c, cst.CSTNode) and not inspect.isabstract(c)]
    assert len(concrete) > 100
    assert [c.__name__ for c in concrete if c.__subclasses__()] == []


def test_no_isinstance_against_a_concrete_node_class_in_the_check():
    """Kept that way in the stages every file check runs (``check/``, ``inference/``, ``rules/``,
    ``syntax/``): ``type(x) is cst.C`` / ``type(x) in (cst.A, cst.B)`` instead."""
    import inspect

    import libcst as cst

    concrete = {n for n, c in vars(cst).items()
                if inspect.isclass(c) and issubclass(c, cst.CSTNode) and not inspect.isabstract(c)}

    def is_concrete(e):
        return (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "cst"
                and e.attr in concrete)

    bad = []
    for stage in ("check", "inference", "rules", "syntax"):
        for path in sorted((PACKAGE / stage).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                        and len(node.args) == 2):
                    cls = node.args[1]
                    if is_concrete(cls) or (isinstance(cls, ast.Tuple) and cls.elts and all(map(is_concrete, cls.elts))):
                        bad.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert bad == []
