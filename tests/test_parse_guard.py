"""parse_guard: the files LibCST must not be given are refused quickly; ordinary code never is."""

import glob
import os
import time

import pytest

import libcst as cst

from torchsync_lint.check import parse_guard
from torchsync_lint.check.parse_guard import MAX_COST, MAX_DEPTH, MAX_ELIF, refusal

N = 20_000
PATHOLOGICAL = {
    # name: (source, line named)
    "sum": ("x = " + " + ".join(["1"] * N), 1),
    "sum over lines": ("import os\n\n\ndef f():\n    return (1\n" + "        + 1\n" * N + "    )", 5),
    "backslashes": ("x = 1 \\\n" + "    + 1 \\\n" * N + "    + 1", 1),
    "attributes": ("x = a" + ".b" * N, 1),
    "method chain": ("x = a" + ".b(1, 2)" * (N // 2), 1),
    "subscripts": ("x = a" + "[0]" * N, 1),
    "unary": ("x = " + "-" * N + "a", 1),
    "not": ("x = " + "not " * N + "a", 1),
    "ternaries": ("x = " + "a if a else " * N + "a", 1),
    "nested brackets": ("x = " + "[" * N + "]" * N, 1),
    "nested over lines": ("x = " + "[\n" * N + "]\n" * N, 1),
    "after a docstring with a stray bracket": ('"""doc ( unbalanced\n"""\nx = (1\n' + "    + 1\n" * N + ")", 3),
    # no slower than a list, but nested: LibCST's stack overflows
    "and": ("x = " + " and ".join(["a"] * N), 1),
    "or over lines": ("x = (a\n" + "     or a\n" * N + ")", 1),
    "elif clauses": ("import os\nif x:\n    pass\n" + "elif x:\n    pass\n" * N, 2),
    # the analysis is quadratic in their depth
    "nested lambdas": ("f = " + "lambda: " * (MAX_DEPTH + 1) + "1", 1),
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_refused_quickly(name):
    source, line = PATHOLOGICAL[name]
    t0 = time.process_time()
    got = refusal(source + "\n")
    assert time.process_time() - t0 < 2  # LibCST would take minutes (or crash) on each
    assert got is not None and got.line == line, got


ORDINARY = {
    "long list": "x = [" + ", ".join(["-1.5e-3"] * N) + "]\n",
    "long dict of short sums": "x = {" + ", ".join(f"'k{i}': a.b + {i}" for i in range(N)) + "}\n",
    "call with many arguments": "f(" + ", ".join(f"k{i}=g(a.b, -c)" for i in range(N // 4)) + ")\n",
    "brackets in a docstring": 'def f():\n    """' + "(" * N + '"""\n    return (a +\n            b)\n',
    "brackets in comments": "# ((((\n" * N + "x = (1 +\n     2)\n",
    "brackets in strings": "x = [\n" + "    '(((',\n" * N + "]\n",
    "200 nested brackets": "x = " + "(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH + "\n",
    "1,000-term sum": "x = 1" + " + 1" * 1000 + "\n",
    "many lambdas": "x = {" + ", ".join(f"{i}: lambda x: x + {i}" for i in range(N)) + "}\n",
    "elif clauses allowed": "if x:\n    pass\n" + "elif x:\n    pass\n" * MAX_ELIF,
    "many if statements": ("if x:\n    pass\n" + "elif x:\n    pass\n" * 500) * 10,
    "nested if statements": "if x:\n" + "    if x:\n        pass\n    elif x:\n        pass\n" * 3000,
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_code_is_not_refused(name):
    assert refusal(ORDINARY[name]) is None


def _sum(n):
    return "x = 1" + " + 1" * (n - 1) + "\n"


def test_the_limits_are_exact():
    # a sum of n terms: n - 1 links over 2n - 1 tokens (after ``x =``)
    largest = max(n for n in range(2000, 4000) if (n - 1) * (2 * n - 1) <= MAX_COST)
    assert refusal(_sum(largest)) is None
    assert refusal(_sum(largest + 1)) is not None
    assert refusal("x = " + "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1) + "\n") is not None
    assert refusal("if x:\n    pass\n" + "elif x:\n    pass\n" * (MAX_ELIF + 1)) is not None
    assert refusal("f = " + "lambda: " * MAX_DEPTH + "1\n") is None


def test_own_sources_are_not_refused():
    root = os.path.dirname(os.path.dirname(parse_guard.__file__))  # the whole package
    files = glob.glob(os.path.join(root, "**", "*.py"), recursive=True)
    assert len(files) > 50
    for path in files:
        with open(path, encoding="utf-8") as fh:
            assert refusal(fh.read()) is None, path


# Long chains LibCST parses in well under a second or two: the guard must let them through
# (it used to count every '.', '(' and '[' as an operator and refuse them).
PARSE_IN_TIME = {
    "334-term sum of subscripted attributes": "x = " + " + ".join(["t.a[0]"] * 334) + "\n",
    "334-term sum": "x = " + " + ".join(["a"] * 334) + "\n",
    "600-call method chain": "x = a" + ".b(1, 2)" * 600 + "\n",
    "600-call chain over lines": "x = (\n    a\n" + "    .b(1, 2)\n" * 600 + ")\n",
    "1,500 attributes": "x = a" + ".b" * 1500 + "\n",
    "1,000 subscripts": "x = a" + "[0]" * 1000 + "\n",
    "2,000 and terms": "x = " + " and ".join(["a"] * 2000) + "\n",
}


@pytest.mark.parametrize("name", sorted(PARSE_IN_TIME))
def test_long_chains_that_parse_in_time_are_accepted(name):
    source = PARSE_IN_TIME[name]
    assert refusal(source) is None
    t0 = time.process_time()
    cst.parse_module(source)
    # CPU time, not wall time: a loaded machine does not fail it; the budget is ~1.5 s on an idle one
    assert time.process_time() - t0 < 15


def test_refusal_message_names_the_chain():
    got = refusal("x = a" + ".b(1, 2)" * 3000 + "\n")
    assert got is not None and got.line == 1
    assert got.why.startswith("an expression of 6000 chained operations over 20997 tokens;"), got.why
