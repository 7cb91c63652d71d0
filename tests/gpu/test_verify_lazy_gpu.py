"""``--verify``'s snippet children with ``torch._dynamo`` put off (``verify.lazy``) and findings of
one statement sharing its measurement: the same verdicts as with plain imports and a measurement
per finding, on a package that imports from ``torch._dynamo`` and decorates with
``torch.compiler.disable`` at its import (as torchvision does). Skipped without CUDA."""

import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INIT = textwrap.dedent("""\
    import torch
    from torch._dynamo.utils import is_compile_supported


    @torch.compiler.disable
    def wrap(x):
        return x * 1
""")
MODULE = textwrap.dedent("""\
    import torch

    from . import is_compile_supported, wrap


    def step(x):
        total = wrap(x).sum().item() + x.max().item()
        maybe = x.sum().item() if not is_compile_supported("cuda") else 0.0
        picked = wrap(x)[x > 0]
        return total + maybe + picked.sum()
""")


def _run(tmp_path, **env):
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-cache", "--verify", "--format", "json", "pkgl"]
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
                TORCHSYNC_VERIFY_CHILDREN="2", **env)
    out = subprocess.run(cmd, cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300)
    return {(os.path.basename(f["path"]), f["line"], f["col"], f["code"]): (f["verify"]["status"], f["verify"].get("syncs"))
            for f in json.loads(out.stdout)}, out.stderr


def test_lazy_dynamo_and_shared_statements_change_no_verdict(cuda_torch, tmp_path):
    pkg = tmp_path / "pkgl"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(INIT)
    for i in range(4):
        (pkg / f"m{i}.py").write_text(MODULE)
    got, err = _run(tmp_path)
    assert len(got) >= 12, err[-2000:]
    assert {s for s, _ in got.values()} <= {"confirmed", "refuted", "inconclusive"}, got
    assert sum(1 for s, _ in got.values() if s == "confirmed") >= 8, got  # the .item() calls and the mask
    plain, err2 = _run(tmp_path, TORCHSYNC_VERIFY_EAGER_IMPORTS="1", TORCHSYNC_VERIFY_NO_SHARE="1")
    assert {k: s for k, (s, _) in plain.items()} == {k: s for k, (s, _) in got.items()}, (got, plain, err2[-2000:])
