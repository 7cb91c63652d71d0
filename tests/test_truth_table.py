"""Lint every statement of the GPU-measured sync truth table in a hot context and compare.

The table (tests/truth/sync_truth.json) was measured by bench/truth_run.py on a CUDA GPU; see
docs/truth-table.md. A statement counts as flagged when any TSL finding starts on its lines.
"""

import functools
import json
import os
import re
import sys

import pytest

from torchsync_lint import lint_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from truth_statements import prelude_source, statement_by_id, module_source  # noqa: E402

TABLE = os.path.join(ROOT, "tests", "truth", "sync_truth.json")
REQUIRED = ("id", "family", "statement", "torch", "device", "synced", "method")
MIN_AGREEMENT = 0.97


def load():
    with open(TABLE, encoding="utf-8") as fh:
        return json.load(fh)


@functools.lru_cache(maxsize=None)
def lint_statement(statement):
    source, first, last = module_source(statement)
    return sorted({f.code for f in lint_source(source, "truth_case.py") if first <= f.line <= last})


def test_table_shape():
    rows = load()
    assert len(rows) >= 100
    assert len({r["id"] for r in rows}) == len(rows)
    known = statement_by_id()
    for r in rows:
        missing = [k for k in REQUIRED if k not in r]
        assert not missing, f"{r.get('id')}: missing {missing}"
        assert isinstance(r["synced"], bool), f"{r['id']}: synced must be measured"
        assert re.match(r"^\d+\.\d+\.\d+", r["torch"]), f"{r['id']}: torch version {r['torch']!r}"
        assert r["device"].startswith("NVIDIA"), f"{r['id']}: {r['device']} is not a measured GPU"
        assert r["id"] in known and known[r["id"]].source == r["statement"], f"{r['id']}: statement changed"
    synced = sum(r["synced"] for r in rows)
    assert 0 < synced < len(rows)


def test_prelude_lints_clean():
    findings = lint_source(prelude_source(), "truth_prelude.py")
    assert not findings, [(f.line, f.code) for f in findings]


def test_linter_agrees_with_gpu():
    rows = load()
    statements = statement_by_id()
    disagreements = []
    for r in rows:
        codes = lint_statement(statements[r["id"]])
        if bool(codes) != r["synced"]:
            kind = "missed sync" if r["synced"] else "false alarm"
            disagreements.append(f"{kind}: {r['id']} {r['statement']!r} synced={r['synced']} codes={codes}")
    agreement = 1 - len(disagreements) / len(rows)
    print(f"\nagreement {agreement:.1%} ({len(rows) - len(disagreements)}/{len(rows)})")
    print("\n".join(disagreements))
    assert agreement >= MIN_AGREEMENT, f"agreement {agreement:.1%} < {MIN_AGREEMENT:.0%}:\n" + "\n".join(disagreements)


@pytest.mark.parametrize("rule_row", [r for r in load() if r["synced"] and r.get("rule")], ids=lambda r: r["id"])
def test_expected_rule_when_flagged(rule_row):
    """A flagged sync should carry the rule the table names (informative: skipped when not flagged)."""
    codes = lint_statement(statement_by_id()[rule_row["id"]])
    if not codes:
        pytest.skip("not flagged yet (counted in test_linter_agrees_with_gpu)")
    assert rule_row["rule"] in codes, f"{rule_row['statement']!r}: expected {rule_row['rule']}, got {codes}"


def test_page_matches_table():
    import truth_run

    with open(truth_run.DOC_PATH, encoding="utf-8") as fh:
        page = fh.read()
    assert page == truth_run.render(load()), "docs/truth-table.md is stale: run `python bench/truth_run.py --render`"
