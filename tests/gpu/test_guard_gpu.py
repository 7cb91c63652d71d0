"""The sync guard on a CUDA device: every row of the sync truth table, nesting, exceptions,
threads, the autograd engine's thread, the pytest plugin and ``torchsync-lint trace``.
Skipped without CUDA (tests/gpu/conftest.py)."""

import importlib.util
import json
import os
import sys
import textwrap
import threading
import warnings

import pytest

from torchsync_lint.guard import SyncError, no_sync
from torchsync_lint.guard import hooks, lookup

pytest_plugins = ["pytester"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
TABLE = os.path.join(ROOT, "tests", "truth", "sync_truth.json")


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def explicit_sync_call(source: str) -> bool:
    """`stream.synchronize()` of an idle side stream waits for nothing, so timing saw no sync; the
    guard reports every explicit synchronize call all the same (it is a sync point by contract)."""
    return ".synchronize(" in source


def test_every_truth_table_row(cuda_torch, tmp_path):
    torch = cuda_torch
    from truth_statements import module_source, statement_by_id

    statements = statement_by_id()
    rows = [r for r in json.load(open(TABLE)) if r["synced"] is not None and not r["ambiguous"]
            and not r["error"] and r["id"] in statements]
    assert len(rows) > 200
    problems, evidence = [], []
    for row in rows:
        st = statements[row["id"]]
        source, first, last = module_source(st)
        path = tmp_path / f"truth_{row['id'].replace('-', '_')}.py"
        path.write_text(source)
        model = load_module(str(path), path.stem).M().cuda()
        x = torch.rand(8, 8, device="cuda")
        try:
            for _ in range(2):  # lazy initialisation (cuBLAS, the allocator) may sync on first calls
                model(x)
            torch.cuda.empty_cache()  # as in the truth run: no cached block left over from earlier rows
            torch.cuda.synchronize()
            with no_sync(mode="record") as g:
                model(x)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{row['id']}: raised {type(exc).__name__}: {exc}")
            continue
        torch.cuda.synchronize()
        here = [e for e in g.events if e.path == str(path.resolve()) and first <= (e.line or 0) <= last]
        elsewhere = [e for e in g.events if e not in here]
        evidence.append({"id": row["id"], "synced": row["synced"], "guard": len(here), "ops": [e.op for e in here],
                         "codes": [e.code for e in here], "oracles": sorted({o for e in here for o in e.oracles}),
                         "stall_us": [e.stall_us for e in here]})
        expect = row["synced"] or explicit_sync_call(st.source)
        if expect and not here:
            problems.append(f"{row['id']}: synced (timing) but the guard saw nothing: {st.source!r}")
        if not expect and here:
            problems.append(f"{row['id']}: no sync (timing) but the guard reported {[e.summary() for e in here]}")
        if elsewhere:
            problems.append(f"{row['id']}: events outside the statement: {[e.summary() for e in elsewhere]}")
        for e in here:
            codes = lookup.codes_for(e.path, e.line)
            if e.code != (codes[0] if codes else "TSL900"):
                problems.append(f"{row['id']}: code {e.code}, the linter says {codes}")
    out = os.environ.get("TSL_GUARD_EVIDENCE")
    if out:
        with open(out, "w") as fh:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "rows": evidence}, fh,
                      indent=1)
    assert not problems, "\n".join(problems)


def test_error_mode_raises_at_the_line_for_each_kind(cuda_torch, tmp_path):
    src = textwrap.dedent("""\
        import torch


        def item(x):
            return x.sum().item()


        def nonzero(x):
            return torch.nonzero(x > 0.5)


        def explicit(x):
            torch.cuda.synchronize()


        def event(x):
            ev = torch.cuda.Event()
            ev.record()
            ev.synchronize()


        def pageable(x):
            return torch.ones(1 << 20).to(x.device, non_blocking=True)


        def cache(x):
            tmp = torch.empty(1 << 26, device=x.device)
            del tmp
            torch.cuda.empty_cache()
    """)
    path = tmp_path / "kinds.py"
    path.write_text(src)
    mod = load_module(str(path), "kinds")
    lines = {"item": 5, "nonzero": 9, "explicit": 13, "event": 19, "pageable": 23, "cache": 29}
    x = cuda_torch.rand(64, device="cuda")
    for name, line in lines.items():
        getattr(mod, name)(x)  # warm up
        cuda_torch.cuda.synchronize()
        with pytest.raises(SyncError) as info:
            with no_sync():
                getattr(mod, name)(x)
        ev = info.value.event
        assert (ev.path, ev.line) == (str(path.resolve()), line), (name, ev.summary())
        assert ev.stall_us is not None, name


def test_nested_guards_exceptions_and_restored_settings(cuda_torch):
    torch = cuda_torch
    x = torch.rand(16, device="cuda")
    before = (torch.cuda.get_sync_debug_mode(), warnings.showwarning, torch.cuda.synchronize,
              torch.cuda.empty_cache, torch.cuda.Event.synchronize, hooks.installed())
    with pytest.raises(SyncError) as info:
        with no_sync() as outer:
            with no_sync(allow=["Tensor.item"]):
                x.sum().item()
            with no_sync(mode="record") as inner:
                torch.nonzero(x)
            x.max().item()  # OUTER
    assert info.value.event.op == "Tensor.item" and "# OUTER" in open(__file__).read().splitlines()[
        info.value.event.line - 1]
    assert len(inner.events) == 1 and [e.allowed for e in outer.events] == [True, False, False]
    with pytest.raises(ZeroDivisionError):
        with no_sync():
            1 / 0
    after = (torch.cuda.get_sync_debug_mode(), warnings.showwarning, torch.cuda.synchronize,
             torch.cuda.empty_cache, torch.cuda.Event.synchronize, hooks.installed())
    assert after == before


def test_other_threads_are_not_blamed_but_the_autograd_engine_is(cuda_torch):
    torch = cuda_torch
    x = torch.rand(64, device="cuda", requires_grad=True)
    done = threading.Event()

    def other():
        for _ in range(20):
            torch.ones(4, device="cuda").sum().item()
        done.set()

    with no_sync(mode="record") as g:
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert done.is_set() and g.events == []
    mask = x.detach() > 0.5
    with no_sync(mode="record") as g:
        y = x * 2
        loss = y[mask].sum()  # MASK (forward: nonzero)
        loss.backward()  # BACKWARD (index_put with a boolean mask on the engine's thread)
    text = open(__file__).read().splitlines()
    marks = [text[e.line - 1].split("# ")[-1].split()[0] for e in g.events if e.path == os.path.realpath(__file__)]
    assert "MASK" in marks and "BACKWARD" in marks, [e.summary() for e in g.events]


SUITE = """
import pytest
import torch


@pytest.mark.no_sync
def test_planted():
    x = torch.ones(8, device="cuda")
    v = x.sum().item()  # PLANTED
    assert v == 8


@pytest.mark.no_sync
def test_clean():
    x = torch.ones(8, device="cuda")
    y = (x * 2).sum()
    assert y.device.type == "cuda"
"""


def test_pytest_plugin_fails_the_planted_sync_at_its_line(cuda_torch, pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p]))
    pytester.makepyfile(test_suite=SUITE)
    line = next(i for i, t in enumerate((pytester.path / "test_suite.py").read_text().splitlines(), 1) if "PLANTED" in t)
    result = pytester.runpytest_subprocess("-p", "torchsync_lint.guard.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*SyncError*test_suite.py:{line}*Tensor.item*TSL001*", "*user stack*",
                                 "*FAILED*test_planted*"])


TRAIN = textwrap.dedent("""\
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 32, device="cuda")
    for step in range(100):
        out = model(x)
        picked = torch.nonzero(out > 0)
        loss = out.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        value = loss.item()
""")


def test_trace_counts_sites_per_step_and_joins_static_findings(cuda_torch, tmp_path, monkeypatch, capsys):
    from torchsync_lint import cli

    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["trace", "--steps", "5", "--warmup", "1", "--format", "json", "--", sys.executable, "train.py"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["steps"] == 5 and doc["stopped"]
    sites = {(os.path.basename(s["path"]), s["line"]): s for s in doc["sites"]}
    assert sites[("train.py", 9)]["count"] == 4 and sites[("train.py", 14)]["count"] == 4, doc["sites"]
    assert sites[("train.py", 14)]["op"] == "Tensor.item"
    assert {s["status"] for s in doc["sites"]} <= {"confirmed", "unflagged"}
    stalls = [s["stall_us"] for s in doc["sites"]]
    assert stalls == sorted(stalls, reverse=True)


def test_no_trace_hook_noise_at_exit(cuda_torch, tmp_path):
    """A guarded program that keeps CUDA tensors alive to the end exits without torch's
    `cuda trace hook execution failed` lines (frees during finalisation call the trace hook)."""
    import subprocess
    import sys

    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, torch\n"
        "from torchsync_lint.guard import no_sync\n"
        "keep = [torch.ones(1024, device='cuda') for _ in range(50)]\n"
        "with no_sync(mode='record'):\n"
        "    torch.cuda.synchronize()\n"
        "print('done', file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "done" in out.stderr
    assert "trace hook execution failed" not in out.stderr


def test_trace_command_exits_without_trace_hook_noise(cuda_torch, tmp_path):
    """Issue 20, end to end: `torchsync-lint trace` on a training script that keeps its model and
    data on the GPU to the end. The program's finalisation frees them through torch's trace hook
    after the import machinery is gone; none of its `KeyError: '__import__'` lines are printed."""
    import subprocess

    (tmp_path / "train.py").write_text(TRAIN + "print('trained', file=__import__('sys').stderr)\n")
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "trace", "--", sys.executable, "train.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "trained" in proc.stderr and "optimizer step(s)" in proc.stdout
    assert "trace hook execution failed" not in proc.stderr.lower() and "__import__" not in proc.stderr
