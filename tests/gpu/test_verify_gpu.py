"""``--verify`` on a CUDA device: statuses, oracles, stall figures, entry mode, unflagged syncs, fixes.

Each test runs the real CLI (the verifier's child process does the CUDA work), so these also
check the protocol end to end. Skipped without CUDA (tests/gpu/conftest.py).
"""

import json
import os
import textwrap

import pytest

from torchsync_lint import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "examples", "seed_cases")

LOSS = textwrap.dedent("""\
    import torch
    from torch import nn


    class Loss(nn.Module):
        def forward(self, x):
            total = x.sum().item()
            maybe = x.sum().item() if x.dim() > 5 else 0.0
            picked = x[x > 0]
            return x.mean() + total + maybe + picked.sum()
""")
ITEM_LINE, NEVER_LINE, MASK_LINE = 7, 8, 9


def run_json(capsys, *argv):
    code = cli.main(["--isolated", "--format", "json", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_snippet_statuses_and_oracles(cuda_torch, project, capsys):
    (project / "loss_mod.py").write_text(LOSS)
    code, findings, err = run_json(capsys, "--verify", "loss_mod.py")
    by_line = {f["line"]: f for f in findings}
    item = by_line[ITEM_LINE]["verify"]
    assert item["status"] == "confirmed", item
    assert "timing" in item["oracles"] and "debug-mode" in item["oracles"], item
    assert item["syncs"] >= 1 and item["stall_us"] is not None and item["stall_us"] > 0, item
    never = by_line[NEVER_LINE]["verify"]
    assert never["status"] == "refuted", never  # the conditional expression never calls .item()
    assert by_line[MASK_LINE]["verify"]["status"] == "confirmed"
    assert code == 1


def test_entry_mode_attributes_and_reports_unflagged(cuda_torch, project, capsys):
    (project / "loss_mod.py").write_text(LOSS + textwrap.dedent("""\


        def helper_call(x):
            return hidden.total(x)
    """))
    # a sync in a file that is not linted lands on the linted line that called it: TSL900
    (project / "hidden.py").write_text("def total(x):\n    return x.sum().tolist()\n")
    (project / "entries.py").write_text(textwrap.dedent("""\
        import torch
        import hidden
        import loss_mod
        loss_mod.hidden = hidden


        def step():
            loss = loss_mod.Loss()
            x = torch.randn(64, 32, device="cuda")

            def run(x):
                loss_mod.helper_call(x)
                return loss(x)

            return run, (x,)
    """))
    code, findings, err = run_json(capsys, "--verify-entry", "entries:step", "loss_mod.py")
    by_line = {(f["code"], f["line"]): f for f in findings}
    assert by_line[("TSL001", ITEM_LINE)]["verify"]["status"] == "confirmed"
    assert by_line[("TSL001", NEVER_LINE)]["verify"]["status"] == "refuted"
    unflagged = [f for f in findings if f["code"] == "TSL900"]
    assert unflagged and unflagged[0]["path"].endswith("loss_mod.py"), findings
    assert unflagged[0]["line"] == LOSS.count("\n") + 4, unflagged
    assert unflagged[0]["verify"]["status"] == "confirmed"


def test_seed_before_cases_all_confirmed(cuda_torch, capsys):
    paths = [os.path.join(CASES, f) for f in ("seed000_loss_before.py", "seed001_masked_before.py")]
    code, findings, err = run_json(capsys, "--verify", *paths)
    assert len(findings) >= 8
    bad = [(f["line"], f["code"], f["verify"]) for f in findings if f["verify"]["status"] != "confirmed"]
    assert not bad, bad
    assert all(f["verify"]["stall_us"] is not None for f in findings)


def test_seed_after_entries_have_no_sync(cuda_torch, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(ROOT)
    paths = [os.path.join(CASES, f) for f in ("seed000_loss_after.py", "seed001_masked_after.py")]
    code, findings, err = run_json(capsys, "--verify-entry", "examples.seed_entries:loss000_after",
                                   "--verify-entry", "examples.seed_entries:loss001_after", *paths)
    assert [f for f in findings if f["code"] == "TSL900"] == []
    assert "had no frame in user code" not in err, err


def test_fixes_are_checked(cuda_torch, capsys):
    paths = [os.path.join(CASES, "seed000_loss_before.py")]
    code, findings, err = run_json(capsys, "--verify", "--verify-fixes", *paths)
    fixes = {f["code"]: f["verify"].get("fix") for f in findings}
    assert fixes["TSL301"]["sync_free"] is True, fixes
    assert fixes["TSL201"]["sync_free"] is True and fixes["TSL201"]["same_values"] is True, fixes
    assert fixes["TSL202"]["status"] == "no-rewrite"


def test_debug_mode_restored_in_process(cuda_torch):
    from torchsync_lint.verify import oracles
    from torchsync_lint.verify.stacks import Roots

    torch = cuda_torch
    log = oracles.EventLog()
    before = torch.cuda.get_sync_debug_mode()
    x = torch.ones(4, device="cuda")
    with oracles.Observer(torch, Roots(torch), log):
        x.sum().item()
    assert torch.cuda.get_sync_debug_mode() == before
    assert log.syncs and "debug-mode" in log.syncs[0]["oracles"], log.syncs
    assert log.syncs[0]["op"].endswith("item"), log.syncs
