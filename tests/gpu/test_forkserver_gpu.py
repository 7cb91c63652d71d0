"""The fork server (opt-in: ``TORCHSYNC_VERIFY_FORKSERVER=1``) on a CUDA device: forked children initialise CUDA of their own; a package that
asks ``torch.cuda.is_available()`` at import still gets forked children, one that initialises CUDA
at import gets fresh ones; verdicts are the same with and without the server. Skipped without CUDA.
"""

import json
import textwrap

import pytest

from torchsync_lint import cli
from torchsync_lint.verify import runner, served

SETTINGS = {"sleep_ms": 20.0, "short_sleep_ms": 5.0, "reps": 3}
PROBE = {"kind": "probe", "mode": "gpu", "settings": SETTINGS, "tasks": []}

LOSS = textwrap.dedent("""\
    import torch


    def step(x):
        total = x.sum().item()
        picked = x[x > 0]
        kept = x * 2
        return total + picked.sum() + kept.sum()
""")


def _package(tmp_path, body):
    src = tmp_path / "src"
    (src / "pkgg").mkdir(parents=True)
    (src / "pkgg" / "__init__.py").write_text("import torch\n" + body)
    return [(str(src), "pkgg")]


def _probe_all(started):
    try:
        return [runner.run_job(dict(PROBE), 120, started=st) for st in started]
    finally:
        for st in started:
            st.close()


@pytest.mark.skipif(not served.available(), reason="no fork() here")
def test_forked_children_each_get_a_working_cuda_context(cuda_torch, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHSYNC_VERIFY_FORKSERVER", "1")
    preload = _package(tmp_path, "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    for res in _probe_all(runner.start_many(3, "gpu", SETTINGS, preload=preload)):
        assert res.fatal is None and not res.no_cuda, res.fatal
        assert res.hello["cuda"] and res.hello.get("device"), res.hello
        assert res.hello["startup"].get("forked") is True, res.hello  # is_available() asked NVML, not the driver
        assert res.hello["startup"].get("cuda_init_s") is not None


@pytest.mark.skipif(not served.available(), reason="no fork() here")
def test_a_package_that_initialises_cuda_at_import_gets_fresh_children(cuda_torch, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHSYNC_VERIFY_FORKSERVER", "1")
    preload = _package(tmp_path, "BUFFER = torch.zeros(1, device='cuda')\n")
    for res in _probe_all(runner.start_many(2, "gpu", SETTINGS, preload=preload)):
        assert res.fatal is None and not res.no_cuda, res.fatal
        assert res.hello["cuda"], res.hello
        assert not res.hello["startup"].get("forked"), res.hello  # exec'd afresh after a bad fork


def _verdicts(capsys, monkeypatch, forkserver: str):
    monkeypatch.setenv("TORCHSYNC_VERIFY_FORKSERVER", forkserver)
    cli.main(["--isolated", "--format", "json", "--verify", "loss_fs.py"])
    out = capsys.readouterr()
    return {(f["line"], f["code"]): f["verify"]["status"] for f in json.loads(out.out)}


def test_verdicts_are_the_same_with_and_without_the_fork_server(cuda_torch, tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "loss_fs.py").write_text(LOSS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with_server = _verdicts(capsys, monkeypatch, "1")
    without = _verdicts(capsys, monkeypatch, "0")
    assert with_server == without
    assert with_server[(5, "TSL001")] == "confirmed"
