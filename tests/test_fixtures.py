"""Every fixture line marked ``# error: CODE`` gets exactly that finding; every other line none."""

from pathlib import Path

import pytest

from fixture_markers import expected, fixture_config, fixture_files, ok_lines
from torchsync_lint import lint_source
from torchsync_lint.rules.registry import all_rules

FILES = fixture_files()


@pytest.mark.parametrize("name", sorted(FILES))
def test_fixture(name):
    path = FILES[name]
    source = path.read_text(encoding="utf-8")
    got = {(f.line, f.code) for f in lint_source(source, str(path), fixture_config(source))}
    want = expected(source)
    missing = sorted(want - got)
    extra = sorted(got - want)
    assert not missing and not extra, f"{name}: missing {missing}, unexpected {extra}"


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_every_rule_has_positive_and_negative_fixtures(code):
    files = [p for n, p in FILES.items() if n.startswith(code)]
    assert files, f"no fixture file tests/fixtures/{code}*.py"
    sources = [p.read_text(encoding="utf-8") for p in files]
    assert any((line, c) for s in sources for line, c in expected(s) if c == code), f"{code}: no positive case"
    assert sum(len(ok_lines(s)) for s in sources) >= 1, f"{code}: no negative case marked '# ok'"


# The seed articles' kinds of sync (``# EXPECT: <kind>`` in examples/seed_cases/) and our codes.
SEED_KINDS = {
    "assert-on-tensor": "TSL301",
    "range-index": "TSL201",
    "h2d-in-forward": "TSL202",
    "bool-mask-index": "TSL103",
    "nonzero": "TSL101",
    "index-put-python-scalar": "TSL203",
    "unique": "TSL102",
}
SEED_CASES = sorted((Path(__file__).parent.parent / "examples" / "seed_cases").glob("*.py"))


@pytest.mark.parametrize("path", SEED_CASES, ids=lambda p: p.name)
def test_seed_case(path):
    """Every `# EXPECT:` line of the seed cases gets its code; the fixed (`*_after`) files none."""
    source = path.read_text(encoding="utf-8")
    want = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        if "# EXPECT:" in line:
            want.add((lineno, SEED_KINDS[line.split("# EXPECT:")[1].split()[0]]))
    got = {(f.line, f.code) for f in lint_source(source, str(path))}
    assert got == want
    assert bool(want) == path.name.endswith("_before.py")
