"""``syntax.parse.parse_module``: LibCST's parse without the nodes' re-validation gives the very
tree LibCST gives (the fixtures, the fixture projects and a slice of a real tree), refuses what it
refuses, and leaves validation on for nodes built by hand, during and after a parse."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from torchsync_lint.syntax import parse

TESTS = Path(__file__).resolve().parent
CORPUS = TESTS.parent / "bench" / "corpus" / "torchvision-0.26.0"


def _sources():
    paths = sorted(TESTS.joinpath("fixtures").rglob("*.py")) + sorted(TESTS.joinpath("projects").rglob("*.py"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.py"))[:60]
    for p in paths:
        try:
            yield p, p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue


def _outcome(fn, source):
    try:
        return fn(source), None
    except Exception as exc:  # the type and message LibCST raises
        return None, (type(exc).__name__, str(exc))


def test_same_trees_and_same_refusals_as_libcst():
    seen = 0
    for path, source in _sources():
        want, want_err = _outcome(cst.parse_module, source)
        got, got_err = _outcome(parse.parse_module, source)
        assert got_err == want_err, path
        if want is not None:
            assert got.deep_equals(want), path
            assert got.code == source, path
        seen += 1
    assert seen > 50


@pytest.mark.parametrize("source", ["def f(:\n    pass\n", "x = (1,\n", "print 'a'\n", "\tif x:\n  y\n"])
def test_syntax_errors_raise_as_libcst_does(source):
    assert _outcome(parse.parse_module, source)[1] == _outcome(cst.parse_module, source)[1]
    assert _outcome(parse.parse_module, source)[1] is not None


def test_validation_stays_on_for_nodes_built_by_hand():
    parse.parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    try:
        parse.parse_module("def f(:\n")
    except cst.ParserSyntaxError:
        pass
    with pytest.raises(cst.CSTValidationError):  # restored after a failed parse too
        cst.Name("")
    assert cst.CSTNode.__dict__["__post_init__"] is parse._VALIDATING


def test_parses_from_several_threads():
    source = "import torch\n\ndef f(x):\n    return x.item() + (1, 2)[0]\n" * 50
    want = cst.parse_module(source)
    out, errors = [], []

    def work():
        try:
            for _ in range(5):
                out.append(parse.parse_module(source))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(out) == 20
    assert all(m.deep_equals(want) for m in out)
    assert cst.CSTNode.__dict__["__post_init__"] is parse._VALIDATING
