"""Guard overhead on a small model's training step (issue 19), on a CUDA machine.

    python3 bench/guard_overhead.py [--steps 40] [--repeats 5]

A CPU-bound step (a small MLP, batch 32: kernel launches dominate, the GPU idles) with no sync,
and the same step with syncs (``loss.item()`` and a boolean-mask index each step). Steps run in
interleaved blocks, plain and under ``no_sync(mode="record")`` (entered once per block, as
``trace`` does), plus a block with the guard entered around every single step; each step's host
time is measured (the queue is drained between blocks, outside the guard). The whole interleaving is
repeated (default 5 times, 40 steps of each kind each time): prints the median ms per step over all
steps, the ratio, and the ratio of each repetition. Steps timed first, before any guard was ever
entered in the process, give a second baseline (the GPU trace stays on once a guard turned it on).
"""

import argparse
import statistics
import sys
import time
import os

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40, help="steps of each kind per repetition")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--block", type=int, default=5)
    ap.add_argument("--profile", type=int, default=0,
                    help="then profile this many guarded syncing steps (cProfile) and print the guard's costs")
    ap.add_argument("--breakdown", action="store_true",
                    help="then time the syncing step with parts of the guard stubbed out (where the cost is)")
    args = ap.parse_args()
    import torch
    from torchsync_lint.guard import no_sync

    torch.manual_seed(0)
    d = torch.device("cuda")
    model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(64, 64), torch.nn.ReLU())],
                                torch.nn.Linear(64, 10)).to(d)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(32, 64, device=d)
    y = torch.randint(0, 10, (32,), device=d)

    def step(sync: bool):
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        if sync:
            picked = out[out[:, 0] > 0]  # a boolean-mask index: syncs
            loss = loss + 0.0 * picked.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if sync:
            return loss.item()  # syncs
        return None

    def timed(sync, guard):
        # host time of the step (CPU-bound: the GPU keeps up); no synchronize inside a guard, where
        # the guard would report it (an explicit sync) and time it like any other
        t0 = time.perf_counter()
        if guard == "per-step":
            with no_sync(mode="record"):
                step(sync)
        else:
            step(sync)
        return (time.perf_counter() - t0) * 1e3

    # before any guard was ever entered: the GPU trace, once on, stays on for the process (torch has
    # no way to turn it off), so every later step, guarded or not, pays for its calls into Python
    untaxed = {}
    for sync in (False, True):
        for _ in range(20):
            step(sync)  # warm-up: cuBLAS, the allocator, AdamW's state
        torch.cuda.synchronize()
        times = []
        for _ in range(max(1, args.steps * args.repeats // args.block)):
            torch.cuda.synchronize()
            times += [timed(sync, None) for _ in range(args.block)]
        untaxed[sync] = statistics.median(times)
    results = {}
    for sync in (False, True):
        for _ in range(20):
            step(sync)  # warm-up: cuBLAS, the allocator, AdamW's state
        with no_sync(mode="record"):
            step(sync)
        plain, guarded, per_step = [], [], []
        ratios = []
        events = 0
        blocks = max(1, args.steps // args.block)
        for rep in range(args.repeats):
            p0, g0 = len(plain), len(guarded)
            for b in range(blocks):
                order = ("plain", "guarded", "per-step") if (b + rep) % 2 == 0 else ("per-step", "guarded", "plain")
                for kind in order:
                    torch.cuda.synchronize()
                    if kind == "plain":
                        plain += [timed(sync, None) for _ in range(args.block)]
                    elif kind == "guarded":
                        with no_sync(mode="record") as g:
                            guarded += [timed(sync, None) for _ in range(args.block)]
                        events += len(g.events)
                    else:
                        per_step += [timed(sync, "per-step") for _ in range(args.block)]
            ratios.append(statistics.median(guarded[g0:]) / statistics.median(plain[p0:]))
        mp, mg, ms = statistics.median(plain), statistics.median(guarded), statistics.median(per_step)
        label = "with syncs" if sync else "no sync"
        results[label] = (mp, mg, ms)
        print(f"{label}: {len(plain)} steps each ({args.repeats} repetitions of {blocks} interleaved blocks of "
              f"{args.block}), median ms/step plain {mp:.3f}, guarded {mg:.3f} ({mg / mp:.3f}x; per repetition "
              f"{', '.join(f'{r:.3f}' for r in ratios)}, median {statistics.median(ratios):.3f}x), guard entered "
              f"per step {ms:.3f} ({ms / mp:.3f}x); {events / max(len(guarded), 1):.1f} sync event(s) per guarded step")
        u = untaxed[sync]
        print(f"  {label}, against steps before any guard was entered ({u:.3f} ms, not interleaved): plain after "
              f"{mp / u:.3f}x (the GPU trace left on), guarded {mg / u:.3f}x")
    print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    with no_sync(mode="record") as g:
        step(True)
    for ev in g.events:
        print(f"  one step's event: {ev.where} {ev.op} {ev.oracles} {ev.thread} stall {ev.stall_us}")
    if args.breakdown:
        breakdown(torch, no_sync, step, timed, args)
    if args.profile:
        profile(torch, no_sync, step, args.profile)


def breakdown(torch, no_sync, step, timed, args):
    """The syncing step's guarded/plain ratio with parts of the guard stubbed out, interleaved."""
    import warnings

    from torchsync_lint.guard import hooks, state

    real_sighting, real_drain, real_show = state.sighting, hooks._drain, hooks._showwarning
    variants = {
        "full guard": {},
        "no sighting (hooks only)": {"sighting": lambda *a, **k: True},
        "no drain": {"drain": lambda torch: 0.0},
        "no sighting, no drain": {"sighting": lambda *a, **k: True, "drain": lambda torch: 0.0},
    }

    def apply(v):
        state.sighting = v.get("sighting", real_sighting)
        hooks._drain = v.get("drain", real_drain)

    times = {k: [] for k in variants}
    plain = []
    for rep in range(args.repeats * 2):
        for name, v in variants.items():
            torch.cuda.synchronize()
            plain += [timed(True, None) for _ in range(args.block)]
            apply(v)
            try:
                torch.cuda.synchronize()
                with no_sync(mode="record"):
                    times[name] += [timed(True, None) for _ in range(args.block * 2)]
            finally:
                apply({})
    mp = statistics.median(plain)
    print(f"breakdown (syncing step, plain {mp:.3f} ms): " + "; ".join(
        f"{k} {statistics.median(t):.3f} ms ({statistics.median(t) / mp:.3f}x)" for k, t in times.items()))
    # the debug mode alone (no guard): what torch's warning costs without any of our code
    plain2, dbg = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in range(args.repeats * 2):
            torch.cuda.synchronize()
            plain2 += [timed(True, None) for _ in range(args.block)]
            torch.cuda.set_sync_debug_mode("warn")
            torch.cuda.synchronize()
            dbg += [timed(True, None) for _ in range(args.block)]
            torch.cuda.set_sync_debug_mode(0)
    print(f"  the sync debug mode alone (warnings ignored, no guard): {statistics.median(dbg) / statistics.median(plain2):.3f}x")


def profile(torch, no_sync, step, n):
    """Where a guarded syncing step's extra time goes: cProfile over ``n`` steps, the functions of
    the guard and of the warnings machinery (torch's own C code is not seen)."""
    import cProfile
    import io
    import pstats

    torch.cuda.synchronize()
    prof = cProfile.Profile()
    with no_sync(mode="record"):
        prof.enable()
        for _ in range(n):
            step(True)
        prof.disable()
    s = io.StringIO()
    st = pstats.Stats(prof, stream=s)
    st.sort_stats("tottime").print_stats(r"torchsync_lint|warnings|linecache|threading", 30)
    print("\n".join(s.getvalue().splitlines()[:60]))


if __name__ == "__main__":
    main()
