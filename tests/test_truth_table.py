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
# The rows the linter may disagree with, each with the reason. The list is exact: a row that
# starts to disagree fails, and so does a listed row that agrees now (take it off the list).
KNOWN_DISAGREEMENTS = {
    # missed syncs
    "h2d-14": "a large pageable copy with non_blocking=True still blocks; the size is not known statically",
    "idxput-11": "x[0, 1] = 1.0: a Python scalar written through integer indices; told apart from a free "
                 "write only by the index types at run time",
    # false alarms
    "syncapi-06": "self.side.synchronize() on a stream with no queued work: returns at once when measured",
    "cache-01": "torch.cuda.empty_cache() with nothing cached: nothing to free, no wait when measured",
    "load-02": "torch.load without map_location of a checkpoint saved from host tensors: what the file holds "
               "decides, and it is not known statically",
}


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


def _disagreements():
    rows = load()
    statements = statement_by_id()
    out = {}
    for r in rows:
        codes = lint_statement(statements[r["id"]])
        if bool(codes) != r["synced"]:
            kind = "missed sync" if r["synced"] else "false alarm"
            out[r["id"]] = f"{kind}: {r['id']} {r['statement']!r} synced={r['synced']} codes={codes}"
    return out


def test_linter_agrees_with_gpu():
    """Every row agrees with the GPU, except the rows named in KNOWN_DISAGREEMENTS."""
    found = _disagreements()
    rows = load()
    print(f"\nagreement {1 - len(found) / len(rows):.1%} ({len(rows) - len(found)}/{len(rows)})")
    new = [found[i] for i in sorted(set(found) - set(KNOWN_DISAGREEMENTS))]
    assert not new, "rows that disagree with the GPU and are not listed:\n" + "\n".join(new)
    fixed = sorted(set(KNOWN_DISAGREEMENTS) - set(found))
    assert not fixed, f"listed rows agree now, take them off KNOWN_DISAGREEMENTS: {fixed}"


def test_known_disagreements_name_real_rows():
    ids = {r["id"] for r in load()}
    assert set(KNOWN_DISAGREEMENTS) <= ids
    assert all(reason.strip() for reason in KNOWN_DISAGREEMENTS.values())


@pytest.mark.parametrize("rule_row", [r for r in load() if r["synced"] and r.get("rule")], ids=lambda r: r["id"])
def test_expected_rule_when_flagged(rule_row):
    """A measured sync is flagged, with the rule the table names. A row that stops being flagged
    fails (no skip): only the rows of KNOWN_DISAGREEMENTS may go unflagged."""
    codes = lint_statement(statement_by_id()[rule_row["id"]])
    if rule_row["id"] in KNOWN_DISAGREEMENTS:
        assert not codes, f"{rule_row['id']} is flagged now: take it off KNOWN_DISAGREEMENTS"
        return
    assert codes, f"{rule_row['statement']!r} synced on the GPU and is no longer flagged (expected {rule_row['rule']})"
    assert rule_row["rule"] in codes, f"{rule_row['statement']!r}: expected {rule_row['rule']}, got {codes}"


def test_page_matches_table():
    import truth_run

    with open(truth_run.DOC_PATH, encoding="utf-8") as fh:
        page = fh.read()
    assert page == truth_run.render(load()), "docs/truth-table.md is stale: run `python bench/truth_run.py --render`"
