"""``--verify`` with its children started at the command's first line (``verify.early``), CUDA's
driver started beside the torch import (``verify.driver``), long package modules split between
children and finished children reaped on a thread: the same verdicts as without any of it.
Skipped without CUDA (tests/gpu/conftest.py)."""

import json
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = textwrap.dedent("""\
    import torch


    def step(x):
        total = x.sum().item()
        maybe = x.sum().item() if x.dim() > 5 else 0.0
        picked = x[x > 0]
        return total + maybe + picked.sum()
""")
ITEM, NEVER, MASK = 5, 6, 7


def _run(tmp_path, **env):
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-cache", "--verify", "--format", "json", "pkgg"]
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
                TORCHSYNC_VERIFY_CHILDREN="2", **env)
    out = subprocess.run(cmd, cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300)
    return {(os.path.basename(f["path"]), f["line"], f["code"]): f["verify"]["status"]
            for f in json.loads(out.stdout)}, out.stderr


def test_early_children_and_the_driver_warm_up_change_no_verdict(cuda_torch, tmp_path):
    pkg = tmp_path / "pkgg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(4):
        (pkg / f"m{i}.py").write_text(MODULE)
    got, err = _run(tmp_path)
    assert len(got) == 12, err[-2000:]
    for (name, line, _), status in got.items():
        assert status == ("refuted" if line == NEVER else "confirmed"), (name, line, status)
    warm = re.search(r"CUDA driver and context beside it ([\d.?]+) s", err)
    assert warm and warm.group(1) != "?", err[-2000:]  # the driver started on its thread
    plain, err2 = _run(tmp_path, TORCHSYNC_VERIFY_NO_EARLY="1", TORCHSYNC_VERIFY_NO_DRIVER_WARMUP="1",
                       TORCHSYNC_VERIFY_ITEM="file")
    assert plain == got, err2[-2000:]
