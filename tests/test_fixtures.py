"""Every fixture line marked ``# error: CODE`` gets exactly that finding; every other line none."""

import pytest

from fixture_markers import expected, fixture_config, fixture_files, ok_lines
from torchsync_lint.engine import lint_source
from torchsync_lint.registry import all_rules

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
