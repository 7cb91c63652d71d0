"""Verifier fixes of issue 10 (CPU): one child for every file of a run, a restart after a crash or a
broken CUDA context with the later findings still measured, and a death reason that quotes the
cause rather than a warning printed after it. A stand-in child (a script speaking the protocol)
plays the crashing process; the real child runs in predict mode."""

import json
import os
import stat
import sys
import textwrap

import pytest

from torchsync_lint.verify import runner

FAKE_CHILD = textwrap.dedent("""\
    #!{python}
    # A stand-in for `python -m torchsync_lint.verify.child`: the first start runs task 0 and then
    # {first}; later starts run every task they are given.
    import json, os, sys
    state = {state!r}
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    job = json.loads(sys.stdin.read())
    def send(**d):
        print("@@TSL " + json.dumps(d), flush=True)
    send(event="ready", cuda=True, torch="fake")
    for task in job["tasks"]:
        send(event="begin", id=task["id"])
        if n == 0 and task["id"] == 0 and "{first}" == "dies":
            sys.stderr.write("Traceback (most recent call last):\\n  File \\"x.py\\", line 1\\n")
            sys.stderr.write("RuntimeError: CUDA error: device-side assert triggered\\n")
            sys.stderr.write("/lib/other.py:9: UserWarning: an unrelated warning\\n  warnings.warn(x)\\n")
            sys.stderr.flush()
            os._exit(1)
        poisoned = n == 0 and task["id"] == 0
        send(event="result", id=task["id"], ran=True, poisoned=poisoned, start=n)
        if poisoned:
            break
    send(event="done")
""")


def fake_python(tmp_path, first):
    path = tmp_path / "fake-python"
    path.write_text(FAKE_CHILD.format(python=sys.executable, state=str(tmp_path / "starts"), first=first))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def job(n):
    return {"kind": "snippet", "mode": "gpu", "tasks": [{"id": i} for i in range(n)]}


def test_a_dead_child_is_restarted_and_its_reason_quotes_the_cause(tmp_path):
    res = runner.run_job(job(4), timeout=30, python=fake_python(tmp_path, "dies"))
    why = res.results[0]["failure"]
    assert "RuntimeError: CUDA error: device-side assert triggered" in why and "unrelated" not in why
    assert "exit code 1" in why
    assert [res.results[i].get("ran") for i in (1, 2, 3)] == [True, True, True]
    assert {res.results[i]["start"] for i in (1, 2, 3)} == {1}  # one restart served all the rest


def test_a_broken_cuda_context_restarts_the_child_for_the_rest(tmp_path):
    res = runner.run_job(job(5), timeout=30, python=fake_python(tmp_path, "poisons"))
    assert res.results[0]["poisoned"] and res.results[0]["start"] == 0
    assert all(res.results[i].get("ran") and res.results[i]["start"] == 1 for i in range(1, 5))


def test_the_exit_text_names_the_signal():
    assert runner._exit_text(-11) == "killed by SIGSEGV" and runner._exit_text(2) == "exit code 2"


def test_one_child_process_for_every_file_of_a_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    from torchsync_lint import cli

    for name in ("a_mod", "b_mod"):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent("""\
            import torch
            from torch import nn


            class M(nn.Module):
                def forward(self, x):
                    return x.sum().item()
        """))
    (tmp_path / "c_mod.py").write_text("import torch\nfrom torch import nn\nraise SystemExit('no import')\n\n\n"
                                       "class M(nn.Module):\n    def forward(self, x):\n        return x.sum().item()\n")
    monkeypatch.chdir(tmp_path)
    calls = []
    real = runner.run_job

    def counting(job, *a, **k):
        paths = {t["path"] for t in job["tasks"]}
        feed = k.get("feed")  # snippet mode streams each file's tasks as it is extracted
        if feed is not None:
            get = feed.get_nowait

            def spy():
                item = get()  # a file's tasks (or one task)
                if item is not None:
                    paths.update(t["path"] for t in (item if isinstance(item, list) else [item]))
                return item
            feed.get_nowait = spy
        res = real(job, *a, **k)
        calls.append(sorted(paths))
        return res

    monkeypatch.setattr(runner, "run_job", counting)
    code = cli.main(["--isolated", "--format", "json", "--verify=predict", "a_mod.py", "b_mod.py", "c_mod.py"])
    out = capsys.readouterr()
    findings = json.loads(out.out)
    assert code == 1 and len(calls) == 1 and len(calls[0]) == 3
    by_file = {os.path.basename(f["path"]): f["verify"] for f in findings}
    assert by_file["a_mod.py"]["status"] == by_file["b_mod.py"]["status"] == "predicted"
    # a file that cannot be imported fails alone, with its reason; the others still ran
    assert by_file["c_mod.py"]["status"] == "inconclusive" and "cannot import" in by_file["c_mod.py"]["reason"]
    assert out.err.count("finding(s), file ") == 3
