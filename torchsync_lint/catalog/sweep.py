"""Measure which torch callables make the host wait for the GPU; write the sync catalog.

    python -m torchsync_lint.catalog.sweep [--out FILE] [--module mylib.ops ...] [--device cuda]
    python -m torchsync_lint.catalog.sweep --recipes --out recipes.json   # the hand-written forms only
    python -m torchsync_lint.catalog.sweep --merge recipes.json           # into the catalog data

Needs only torch (and torchvision for its ops, when installed). For each public callable it
synthesises small arguments (``synth``), warms the call up once (lazy init may sync), then decides
with two oracles: (a) ``torch.cuda.set_sync_debug_mode("warn")`` with the "always" filter, stderr
captured too (ops reached through ``torch.ops`` print there); (b) timing: a ``torch.cuda._sleep``
kernel is queued first, and a call that keeps the host waiting for it synced. Timing is the ground
truth; the debug mode decides only where the timing is ambiguous; disagreements are recorded.

A CUDA error corrupts the context, so the calls run in a child process that the parent restarts
after the failing callable; a child that stops answering is killed the same way.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Dict, List, Optional, Tuple

from torchsync_lint.catalog.recipes import ARGUMENT_RECIPES

SYNC_TEXT = "synchronizing CUDA operation"
SLEEP_MS = 4.0
SYNCED_FRACTION, FREE_FRACTION = 0.5, 0.15  # of the sleep: above = waited, below = did not
CALL_TIMEOUT_S = 20  # a child silent this long is killed

# Namespaces swept, with the qualified-name prefix the catalog (and the rules) use.
NAMESPACES = (
    ("torch", "torch"),
    ("torch.Tensor", "torch.Tensor"),
    ("torch.nn.functional", "torch.nn.functional"),
    ("torch.linalg", "torch.linalg"),
    ("torch.fft", "torch.fft"),
    ("torch.special", "torch.special"),
    ("torch.distributions", "torch.distributions"),
    ("torch.cuda", "torch.cuda"),
    ("torch.nn.utils", "torch.nn.utils"),
    ("torchvision.ops", "torchvision.ops"),
)
# Callables that change process-wide state (they would break the oracles or later calls), read
# files, compile, or need callables: not swept.
SKIP_PREFIXES = ("set_", "use_deterministic", "_")
SKIP = frozenset(
    "compile save load from_file vmap cond while_loop export manual_seed seed initial_seed fork wait "
    "set_sync_debug_mode init ipc_collect make_graphed_callables is_current_stream_capturing "
    "register_hook register_post_accumulate_grad_hook apply_ map_ map2_ share_memory_ backward "
    "numpy pin_memory record_stream storage untyped_storage tolist_ data_ptr "
    "get_device_properties list_gpu_processes cudart memory_summary memory_snapshot "
    "device_memory_used power_draw temperature clock_rate utilization OutOfMemoryError "
    "caching_allocator_alloc caching_allocator_delete change_current_allocator "
    "typename classproperty is_storage is_tensor".split()
)


def _cached_block(torch, device: str) -> None:
    """Leave a freed 256 MiB block in the caching allocator (so empty_cache has something to release)."""
    x = torch.empty(1 << 28, dtype=torch.uint8, device=device)
    del x


SETUPS = {"cached-block": _cached_block}
# Variants that need process state rather than arguments: label, setup run before the call.
STATE_VARIANTS = {
    "torch.cuda.empty_cache": (("with-cached-block", "cached-block"),),
    "torch.cuda.memory.empty_cache": (("with-cached-block", "cached-block"),),
}


def enumerate_callables(torch, modules: Tuple[Tuple[str, str], ...]) -> List[Tuple[str, str, str]]:
    """(qualname, module, attribute) of every public callable, sorted; classes only from distributions."""
    out: Dict[str, Tuple[str, str, str]] = {}
    for modname, prefix in modules:
        try:
            if modname == "torch.Tensor":
                ns, names = torch.Tensor, [n for n in dir(torch.Tensor) if not n.startswith("_")]
            else:
                ns = importlib.import_module(modname)
                names = sorted(set(getattr(ns, "__all__", ())) | {n for n in dir(ns) if not n.startswith("_")})
        except Exception:  # torchvision missing, say
            continue
        for name in names:
            if name in SKIP or name.startswith(SKIP_PREFIXES):
                continue
            obj = getattr(ns, name, None)
            if obj is None or inspect.ismodule(obj) or not callable(obj):
                continue
            home = getattr(obj, "__module__", None) or ""
            if home and not home.startswith(("torch", modname.split(".")[0])):
                continue  # typing.cast, functools.wraps... imported into the namespace
            if inspect.isclass(obj):
                dist = getattr(torch.distributions, "Distribution", None)
                if not (modname == "torch.distributions" and dist and issubclass(obj, dist) and obj is not dist):
                    continue
            qual = f"{prefix}.{name}"
            out.setdefault(qual, (qual, modname, name))
    return [out[k] for k in sorted(out)]


# ---------------------------------------------------------------------------------------------
# child: runs the calls on the device


class Oracles:
    def __init__(self, torch, device: str) -> None:
        self.torch, self.device = torch, device
        self.cuda = device.startswith("cuda") and torch.cuda.is_available()
        self.cycles_per_ms = self._calibrate() if self.cuda else 0.0

    def _calibrate(self) -> float:
        torch = self.torch
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()  # noqa: TSL401 (the oracle measures against a drained GPU)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        end.synchronize()  # noqa: TSL401
        return 10_000_000 / start.elapsed_time(end)

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()  # noqa: TSL401

    def host_time(self, fn, sleep: bool) -> float:
        _prepare(fn)
        self.sync()
        if sleep:
            self.torch.cuda._sleep(int(self.cycles_per_ms * SLEEP_MS))
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        self.sync()
        return (t1 - t0) * 1e3

    def debug_mode_warns(self, fn) -> bool:
        torch = self.torch
        _prepare(fn)
        self.sync()
        err = tempfile.TemporaryFile()
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                torch.cuda.set_sync_debug_mode("warn")
                try:
                    fn()
                finally:
                    torch.cuda.set_sync_debug_mode("default")
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        self.sync()
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        return any(SYNC_TEXT in str(w.message) for w in caught) or SYNC_TEXT in text

    def decide(self, fn) -> Tuple[Optional[bool], str, int]:
        """(synced, how, stall_us) for a call that already ran once."""
        base = min(self.host_time(fn, False) for _ in range(2))
        warned = self.debug_mode_warns(fn)
        stall = self.host_time(fn, True) - base
        if FREE_FRACTION * SLEEP_MS < stall < SYNCED_FRACTION * SLEEP_MS:
            stall = self.host_time(fn, True) - base  # once more: a host hiccup
        timed = True if stall >= SYNCED_FRACTION * SLEEP_MS else False if stall <= FREE_FRACTION * SLEEP_MS else None
        stall_us = max(0, int(stall * 1000))
        if timed is None:
            return warned, "debug-mode", stall_us
        if timed == warned:
            return timed, "both", stall_us
        return timed, "timing!debug-mode", stall_us  # disagreement: timing wins


def _resolve(torch, modname: str, name: str):
    if modname == "torch.Tensor":
        return getattr(torch.Tensor, name), True
    return getattr(importlib.import_module(modname), name), False


def _invoke(torch, synth, obj, method: bool, call, device: str, extra=None, init=None):
    if init is not None:  # a module class: built on the device with these keywords, then called
        ctor = dict(init) | {k[len("init."):]: r for k, r in call.kwargs if k.startswith("init.")}
        module = obj(**{k: synth.build(torch, r, device) for k, r in ctor.items()}).to(device)
        args = [synth.build(torch, r, device) for r in call.args]
        kwargs = {k: synth.build(torch, r, device) for k, r in call.kwargs if not k.startswith("init.")}
        return lambda: module(*args, **kwargs)
    for k, r in call.kwargs:
        if k == "__setup__":
            SETUPS[r[1]](torch, device)
    call = call._replace(kwargs=tuple((k, r) for k, r in call.kwargs if k != "__setup__"))
    args = [synth.build(torch, r, device) for r in call.args]
    kwargs = {k: synth.build(torch, r, device) for k, r in call.kwargs}
    if extra:
        kwargs.update(extra)
    if method:
        return lambda: getattr(args[0], obj.__name__)(*args[1:], **kwargs)
    return lambda: obj(*args, **kwargs)


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"


def measure_callable(torch, synth, oracles: Oracles, stubs, item) -> dict:
    qual, modname, name = item
    obj, method = _resolve(torch, modname, name)
    sigs = synth.signatures(torch, stubs, qual, obj, method)
    if method:  # the tensor itself comes first
        sigs = [synth.Signature((synth.Param("self", "Tensor", True, False),) + s.params) for s in sigs] or \
               [synth.Signature((synth.Param("self", "Tensor", True, False),))]
    device = oracles.device
    base, result, last_error = None, None, "no arguments could be synthesised"
    for n, cand in enumerate(synth.candidates(sigs)):
        if n >= 40:
            break
        try:
            result = _invoke(torch, synth, obj, method, cand, device)()
            oracles.sync()
            base = cand
            break
        except Exception as exc:  # wrong arguments: try the next candidate
            last_error = _short(exc)
            if "CUDA error" in str(exc) or "device-side assert" in str(exc):
                raise
    entry = {"variants": {}}
    if base is None:
        entry["error"] = last_error
        return entry
    todo = [("default", base)] + list(synth.variants(base, sigs))
    for label, setup in STATE_VARIANTS.get(qual, ()):
        todo.append((label, base._replace(kwargs=base.kwargs + (("__setup__", ("s", setup)),))))
    for label, call in todo:
        extra = {}
        for k, r in call.kwargs:
            if r == ("s", "from_result"):
                extra[k] = int(result.shape[0]) if hasattr(result, "shape") and len(result.shape) else 1
        call = call._replace(kwargs=tuple((k, r) for k, r in call.kwargs if k not in extra))
        try:
            fn = _invoke(torch, synth, obj, method, call, device, extra)
            fn()  # warm-up: first calls may sync for lazy init
            oracles.sync()
            if oracles.cuda:
                fresh = lambda: _invoke(torch, synth, obj, method, call, device, extra)  # noqa: E731
                synced, how, stall = oracles.decide(_Fresh(fresh, oracles))
            else:
                synced, how, stall = None, "ran (no CUDA)", 0
            entry["variants"][label] = {"args": synth.describe(call) + "".join(f", {k}={v}" for k, v in extra.items()),
                                        "synced": synced, "how": how, "stall_us": stall}
        except Exception as exc:
            if "CUDA error" in str(exc) or "device-side assert" in str(exc):
                raise
            entry["variants"][label] = {"args": synth.describe(call), "synced": None, "how": "error", "error": _short(exc)}
    return entry


def _resolve_qualname(torch, qual: str):
    """(callable, is a Tensor method) for a dotted name: ``torch.Tensor.stft``, ``torch.nn.CTCLoss``,
    ``torch.nn.utils.rnn.pack_padded_sequence``."""
    if qual.startswith("torch.Tensor."):
        return getattr(torch.Tensor, qual.rsplit(".", 1)[1]), True
    parts = qual.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj, False
    raise ImportError(qual)


def measure_recipe(torch, synth, oracles: Oracles, qual: str) -> dict:
    """Every hand-written variant of ``recipes.ARGUMENT_RECIPES[qual]``, with its form."""
    recipe = ARGUMENT_RECIPES[qual]
    obj, method = _resolve_qualname(torch, qual)
    init = tuple(recipe.init) if inspect.isclass(obj) else None
    device = oracles.device
    entry = {"variants": {}, "recipe": {"params": list(recipe.params), "defaults": dict(recipe.defaults)}}
    for label, form, call in recipe.variants:
        row = {"args": synth.describe(call), "form": dict(form)}
        try:
            fn = _invoke(torch, synth, obj, method, call, device, None, init)
            fn()  # warm-up
            oracles.sync()
            if oracles.cuda:
                fresh = lambda: _invoke(torch, synth, obj, method, call, device, None, init)  # noqa: E731
                synced, how, stall = oracles.decide(_Fresh(fresh, oracles))
            else:
                synced, how, stall = None, "ran (no CUDA)", 0
            row.update(synced=synced, how=how, stall_us=stall)
        except Exception as exc:
            if "CUDA error" in str(exc) or "device-side assert" in str(exc):
                raise
            row.update(synced=None, how="error", error=_short(exc))
        entry["variants"][label] = row
    return entry


def _prepare(fn) -> None:
    """Build a call's fresh arguments before the clock starts (see ``_Fresh``)."""
    if isinstance(fn, _Fresh):
        fn.prepare()


class _Fresh:
    """Calls the callable with freshly built arguments each time; building is outside the timing."""

    def __init__(self, make, oracles) -> None:
        self.make, self.oracles, self.next = make, oracles, None

    def __call__(self):
        fn = self.next or self.make()
        self.next = None
        return fn()

    def prepare(self) -> None:
        self.next = self.make()


def child_main(start: int, device: str, modules, limit: Optional[int] = None, recipes: bool = False) -> int:
    import torch

    from torchsync_lint.catalog import synth

    if recipes:
        items = [(q, "", "") for q in sorted(ARGUMENT_RECIPES)][:limit]
    else:
        items = enumerate_callables(torch, modules)[:limit]
    stubs = synth._stub_index(torch)
    oracles = Oracles(torch, device)
    out = sys.stdout
    for i in range(start, len(items)):
        print(json.dumps({"start": i, "qualname": items[i][0]}), file=out, flush=True)
        try:
            if recipes:
                entry = measure_recipe(torch, synth, oracles, items[i][0])
            else:
                entry = measure_callable(torch, synth, oracles, stubs, items[i])
        except Exception as exc:
            cuda = "CUDA error" in str(exc) or "device-side assert" in str(exc)
            err = ("CUDA error: " if cuda else "sweep error: ") + _short(exc)
            row = {"i": i, "qualname": items[i][0], "entry": {"variants": {}, "error": err}}
            print(json.dumps(row), file=out, flush=True)
            if cuda:  # the context is gone: let the parent restart us
                return 3
            continue
        print(json.dumps({"i": i, "qualname": items[i][0], "entry": entry}), file=out, flush=True)
    print(json.dumps({"done": len(items)}), file=out, flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# parent: restarts the child, collects, writes


def run_sweep(device: str, modules, log=print, limit: Optional[int] = None,
              raw: Optional[str] = None, recipes: bool = False) -> Tuple[Dict[str, dict], dict]:
    entries: Dict[str, dict] = {}
    restarts, start, t0 = [], 0, time.time()
    total = None
    mods = ",".join(f"{m}={p}" for m, p in modules)
    while True:
        cmd = [sys.executable, "-m", "torchsync_lint.catalog.sweep", "--child", str(start), "--device", device,
               "--namespaces", mods] + (["--limit", str(limit)] if limit else []) + (["--recipes"] if recipes else [])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        current, done = None, False
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            if not sel.select(timeout=CALL_TIMEOUT_S):
                proc.kill()
                if current is not None:
                    entries[current[1]] = {"variants": {}, "error": f"timeout: no answer in {CALL_TIMEOUT_S} s"}
                    restarts.append(current[1])
                break
            line = proc.stdout.readline()
            if not line:
                if current is not None and current[1] not in entries:
                    entries[current[1]] = {"variants": {}, "error": f"child died (exit {proc.wait()})"}
                    restarts.append(current[1])
                break
            msg = json.loads(line)
            if raw:
                with open(raw, "a", encoding="utf-8") as fh:
                    fh.write(line)
            if "start" in msg:
                current = (msg["start"], msg["qualname"])
            elif "entry" in msg:
                entries[msg["qualname"]] = msg["entry"]
                if msg["entry"].get("error", "").startswith("CUDA error"):
                    restarts.append(msg["qualname"])
            elif "done" in msg:
                total, done = msg["done"], True
        proc.wait()
        if done or current is None:
            break
        start = current[0] + 1
        log(f"restarting after {current[1]} ({len(entries)} done)")
    info = {"device": device, "seconds": round(time.time() - t0, 1), "restarted_after": sorted(restarts),
            "callables": total}
    return entries, info


def environment(device: str) -> dict:
    import torch

    env = {"torch": torch.__version__}
    try:
        import torchvision

        env["torchvision"] = torchvision.__version__
    except Exception:
        pass
    if device.startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
    else:
        env["gpu"] = None
    return env


def summarise(entries: Dict[str, dict]) -> Dict[str, dict]:
    """The catalog's compact form: per callable, syncs (any variant synced) and variant rows."""
    out = {}
    for qual in sorted(entries):
        e = entries[qual]
        rows = {}
        for label in sorted(e.get("variants", {})):
            v = e["variants"][label]
            row = {"args": v["args"], "synced": v["synced"], "how": v["how"]}
            if "stall_us" in v:
                row["stall_us"] = v["stall_us"]
            if v.get("form"):
                row["form"] = v["form"]
            if v.get("error"):
                row["error"] = v["error"]
            rows[label] = row
        verdicts = [r["synced"] for r in rows.values() if r["synced"] is not None]
        item = {"syncs": (any(verdicts) if verdicts else None), "variants": rows}
        if verdicts and any(verdicts) and not all(verdicts):
            item["argument_dependent"] = True
        if e.get("error"):
            item["error"] = e["error"]
        if e.get("recipe"):
            item["recipe"] = e["recipe"]
        out[qual] = item
    return out


def merge(catalog: dict, measured: dict) -> dict:
    """``catalog`` with the entries of a recipe sweep (``--recipes``) merged in: their variants are
    added to (or replace the same labels of) each callable's variants, the other entries are kept as
    they are. The environment of the recipe run must be the catalog's (torch, GPU); it is recorded
    under ``environment.recipes``. A callable that now has a decided variant loses the error of the
    generic synthesiser (kept as ``synth_error``)."""
    env, renv = catalog["environment"], measured["environment"]
    for key in ("torch", "gpu"):
        if env.get(key) != renv.get(key):
            raise ValueError(f"the recipes were measured with {key} {renv.get(key)!r}, the catalog with {env.get(key)!r}")
    raw = {}
    for qual, e in catalog["entries"].items():
        raw[qual] = {k: v for k, v in e.items() if k not in ("syncs", "argument_dependent")}
    for qual, e in measured["entries"].items():
        old = raw.setdefault(qual, {"variants": {}})
        old["variants"] = {**old.get("variants", {}), **e["variants"]}
        old["recipe"] = e.get("recipe")
        if e.get("error"):
            old["error"] = e["error"]
        elif old.get("error") and any(v["synced"] is not None for v in old["variants"].values()):
            old["synth_error"] = old.pop("error")
    entries = summarise(raw)
    for qual, e in raw.items():  # summarise keeps only its own keys
        if e.get("synth_error"):
            entries[qual]["synth_error"] = e["synth_error"]
    out = dict(catalog, entries=entries)
    out["environment"] = dict(env, recipes={k: renv.get(k) for k in ("torch", "gpu", "seconds", "restarted_after")})
    return out


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torchsync_lint.catalog.sweep", description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None, help="write the catalog JSON here (default: stdout)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--module", action="append", default=[], help="sweep this module instead of torch's (repeatable)")
    p.add_argument("--namespaces", default=None, help=argparse.SUPPRESS)
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--raw", default=None, help="also append every child message to this file (JSON lines)")
    p.add_argument("--limit", type=int, default=None, help="sweep only the first N callables (debugging)")
    p.add_argument("--recipes", action="store_true",
                   help="measure only the hand-written argument recipes (recipes.ARGUMENT_RECIPES)")
    p.add_argument("--merge", metavar="FILE", default=None,
                   help="merge the output of a --recipes run into the catalog data (--out, default: the package's)")
    args = p.parse_args(argv)
    if args.merge:
        from torchsync_lint import catalog as catalog_data

        target = args.out or catalog_data.DATA
        with open(target, encoding="utf-8") as fh:
            current = json.load(fh)
        with open(args.merge, encoding="utf-8") as fh:
            measured = json.load(fh)
        text = json.dumps(merge(current, measured), indent=1, sort_keys=True) + "\n"
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
        return 0
    if args.namespaces:
        modules = tuple(tuple(x.split("=", 1)) for x in args.namespaces.split(","))
    elif args.module:
        modules = tuple((m, m) for m in args.module)
    else:
        modules = NAMESPACES
    if args.child is not None:
        return child_main(args.child, args.device, modules, args.limit, args.recipes)
    entries, info = run_sweep(args.device, modules, log=lambda m: print(m, file=sys.stderr), limit=args.limit,
                              raw=args.raw, recipes=args.recipes)
    catalog = {"format": 1, "environment": {**environment(args.device), **info}, "entries": summarise(entries)}
    text = json.dumps(catalog, indent=1, sort_keys=True) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
