"""Re-measure a sample of the sync truth table on this GPU and check it still holds."""

import os
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

# Clear cases on both sides, across the rule families (DESIGN.md section 4 claims among them).
SAMPLE = (
    "item-01", "host-01", "host-05", "mask-05", "mask-08", "idxput-01", "idxput-06", "h2d-01",
    "h2d-15", "hostidx-02", "hostidx-09", "onehot-01", "onehot-03", "dist-01", "dist-06",
    "clip-02", "syncapi-01",
)


def test_sample_matches_table(cuda_torch):
    import truth_run
    from truth_statements import statement_by_id

    table = {r["id"]: r for r in truth_run.load_table(os.environ.get("TSL_TRUTH_TABLE", truth_run.TABLE_PATH))}
    statements = statement_by_id()
    ids = [i for i in SAMPLE if i in table and table[i]["synced"] is not None and not table[i]["ambiguous"]]
    assert {table[i]["synced"] for i in ids} == {True, False}, "the sample needs synced and sync-free rows"
    rows = truth_run.measure([statements[i] for i in ids])
    mismatches = [
        f"{r['id']}: {r['statement']!r} table synced={table[r['id']]['synced']} "
        f"({table[r['id']]['device']}), now synced={r['synced']} stall_us={r['stall_us']} ({r['device']})"
        for r in rows
        if r["synced"] != table[r["id"]]["synced"]
    ]
    assert not mismatches, "\n".join(mismatches)
    errors = [f"{r['id']}: {r['error']}" for r in rows if r["error"]]
    assert not errors, "\n".join(errors)
