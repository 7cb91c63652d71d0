"""Step time of the two seed losses before and after their fixes (needs a CUDA device).

Each step is the training step of ``seed_entries.py`` (model forward, the seed loss, backward,
SGD). Timing: warm up, then ``torch.cuda.synchronize()`` around N steps on the host clock, so
that the syncs inside the "before" losses cost what they cost in a real loop; the median of
several repeats is reported. Usage::

    python examples/seed_step_time.py [--steps 50] [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_entries  # noqa: E402


def time_steps(entry, steps: int, repeats: int, warmup: int = 5) -> dict:
    step, args = entry()
    for _ in range(warmup):
        step(*args)
    torch.cuda.synchronize()
    per_step = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            step(*args)
        torch.cuda.synchronize()
        per_step.append((time.perf_counter() - t0) * 1000 / steps)
    return {"ms_per_step": round(statistics.median(per_step), 4), "repeats_ms": [round(x, 4) for x in per_step]}


def loss_only(entry):
    """The loss alone (forward and backward on fixed logits): what the syncs cost without a model to hide them."""
    step, (inputs, target) = entry()
    model, loss_fn = seed_entries.LAST["model"], seed_entries.LAST["loss_fn"]
    with torch.no_grad():
        logits = model(inputs)
    logits = logits.detach().requires_grad_(True)

    def run(logits, target):
        loss = loss_fn(logits, target)
        loss.backward()
        return loss

    return lambda: (run, (logits, target))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("seed_step_time: needs a CUDA device", file=sys.stderr)
        return 2
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "steps": a.steps, "seeds": {}}
    print(f"{out['device']}, torch {out['torch']}, {a.steps} steps x {a.repeats} repeats (median)")
    print(f"{'seed':8} {'what':16} {'before ms/step':>15} {'after ms/step':>14} {'ratio':>7}")
    for name, (before, after) in seed_entries.ENTRIES.items():
        for what, wrap in (("training step", lambda e: e), ("loss fwd+bwd", loss_only)):
            b = time_steps(wrap(before), a.steps, a.repeats)
            f = time_steps(wrap(after), a.steps, a.repeats)
            ratio = b["ms_per_step"] / f["ms_per_step"] if f["ms_per_step"] else float("nan")
            out["seeds"].setdefault(name, {})[what] = {"before": b, "after": f, "ratio": round(ratio, 3)}
            print(f"{name:8} {what:16} {b['ms_per_step']:15.3f} {f['ms_per_step']:14.3f} {ratio:7.2f}x")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
