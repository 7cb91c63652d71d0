"""The verifier's child process: ``python -m torchsync_lint.verify.child`` reads one JSON job on stdin.

Protocol (one line each, on the original stdout, prefixed with ``@@TSL ``): ``ready`` (torch
version, CUDA device, library roots), then per task ``begin`` and ``result``, then ``done``;
``fatal`` when the job cannot start (no torch, no CUDA, the module does not import). The user's
own prints go to stderr. The parent enforces timeouts and restarts the child after a hang or crash.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from typing import Any, Dict, Optional

from torchsync_lint.verify import driver

PREFIX = "@@TSL "


class Channel:
    def __init__(self) -> None:
        fd = os.dup(1)
        os.dup2(2, 1)  # the user's prints must not corrupt the protocol
        self.out = os.fdopen(fd, "w", buffering=1)

    def send(self, event: str, **data) -> None:
        data["event"] = event
        data.setdefault("t", round(time.monotonic(), 4))  # when (the parent's timeline of the run)
        self.out.write(PREFIX + json.dumps(data, default=str) + "\n")
        self.out.flush()


def import_module_for(path: str, name: Optional[str], root: Optional[str]):
    """Import the file's module by its package name (relative imports work), else by path."""
    if root and root not in sys.path:
        sys.path.insert(0, root)
    if name:
        try:
            mod = importlib.import_module(name)
            if os.path.realpath(getattr(mod, "__file__", "") or "") == os.path.realpath(path):
                return mod
        except ImportError:
            pass
    mod_name = "_tsl_verify_" + (name or os.path.splitext(os.path.basename(path))[0]).replace(".", "_")
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_entry(ref: str):
    """``module:function`` or ``path/to/file.py:function``."""
    mod_part, _, func = ref.rpartition(":")
    if not mod_part or not func:
        raise ValueError(f"entry {ref!r} is not MODULE:FUNCTION")
    if mod_part.endswith(".py") or os.sep in mod_part:
        mod = import_module_for(os.path.abspath(mod_part), None, os.path.dirname(os.path.abspath(mod_part)))
    else:
        mod = importlib.import_module(mod_part)
    obj = mod
    for part in func.split("."):
        obj = getattr(obj, part)
    return obj


def unpack_entry(got):
    """An entry returns ``(fn, args)``, ``(fn, args, kwargs)``, ``{"fn":, "args":, "kwargs":}`` or ``fn``."""
    if callable(got) and not isinstance(got, (tuple, list)):
        return got, (), {}
    if isinstance(got, dict):
        return got["fn"], tuple(got.get("args", ())), dict(got.get("kwargs", {}))
    if isinstance(got, (tuple, list)) and got and callable(got[0]):
        fn = got[0]
        args = got[1] if len(got) > 1 else ()
        kwargs = got[2] if len(got) > 2 else {}
        if not isinstance(args, (tuple, list)):
            args = (args,)
        return fn, tuple(args), dict(kwargs)
    raise TypeError("an entry must return (callable, args[, kwargs]) or a callable")


class ModuleImportError(Exception):
    """The task's file could not be imported (the other files of the job go on)."""


class Child:
    def __init__(self, job: Dict[str, Any], chan: Channel) -> None:
        self.job = job
        self.chan = chan
        self.mode = job.get("mode", "gpu")
        self.settings = job.get("settings", {})
        import torch

        self.torch = torch
        self.startup: Dict[str, float] = {}
        from torchsync_lint.verify.stacks import Roots

        self.roots = Roots(torch)
        self.clock = self.long_clock = None
        self._modules: Dict[str, Any] = {}
        # statements measured here, for the other findings of each (``snippet_child.run_task``);
        # TORCHSYNC_VERIFY_NO_SHARE=1 measures every finding's statement again
        self._shared: Optional[Dict[str, tuple]] = None if os.environ.get("TORCHSYNC_VERIFY_NO_SHARE") == "1" else {}

    def hello(self) -> bool:
        torch = self.torch
        cuda = bool(torch.cuda.is_available())
        info = {"torch": torch.__version__, "cuda": cuda, "python": sys.version.split()[0],
                "library_roots": self.roots.library, "site_roots": self.roots.site}
        if cuda:
            info["device"] = torch.cuda.get_device_name(0)
        if self.mode == "gpu" and cuda:
            from torchsync_lint.verify.timing import SleepClock

            t0 = time.monotonic()
            torch.zeros(1, device="cuda").sum().item()
            self.startup["cuda_init_s"] = round(time.monotonic() - t0, 3)
            t0 = time.monotonic()
            # timing runs with a short sleep; the long one only where the short one cannot show the wait
            self.long_clock = SleepClock(torch, float(self.settings.get("sleep_ms", 20.0)))
            short_ms = float(self.settings.get("short_sleep_ms", 0) or 0)
            self.clock = self.long_clock.scaled(short_ms) if 0 < short_ms < self.long_clock.sleep_s * 1e3 \
                else self.long_clock
            info["sleep_us"] = round(self.clock.sleep_s * 1e6, 1)
            info["cycles_per_ms"] = self.startup["cycles_per_ms"] = round(self.clock.cycles_per_ms)
            self.startup["calibrate_s"] = round(time.monotonic() - t0, 3)
        info["startup"] = self.startup
        self.chan.send("ready", **info)
        return cuda or self.mode != "gpu"

    # -- snippet tasks ----------------------------------------------------------------------
    def run_snippets(self) -> None:
        """Every task of the job, whatever its file: one process for the run, modules imported once."""
        from torchsync_lint.verify import snippet_child

        job = self.job
        for p in job.get("sys_path", []):
            if p not in sys.path:
                sys.path.insert(0, p)
        for task in _tasks(job):
            self.chan.send("begin", id=task["id"])
            t0 = time.monotonic()
            import_s = None
            try:
                fresh = (task.get("file") or job)["path"] not in self._modules
                module = self.module_for(task.get("file") or job)
                if fresh:
                    import_s = round(time.monotonic() - t0, 3)
                result = snippet_child.run_task(self, module, task, self._shared)
            except ModuleImportError as exc:
                result = {"failure": str(exc)}
            except Exception as exc:
                result = {"failure": "verifier error: " + "".join(
                    traceback.format_exception_only(type(exc), exc)).strip()[:400]}
            broken = self.cuda_broken()
            if broken:  # a device-side assert or another CUDA error: no later task could run here
                result["poisoned"] = True
                if broken not in str(result.get("error")) or str(result.get("failure", "")).startswith("verifier"):
                    result["failure"] = f"the CUDA context broke while this statement ran: {broken}"
            result["seconds"] = round(time.monotonic() - t0, 3)
            if import_s is not None:
                result["import_s"] = import_s  # the module's import, inside this task's seconds
            self.chan.send("result", id=task["id"], **result)
            if result.get("poisoned"):
                return  # the CUDA context is unusable: the parent restarts us for the rest

    def module_for(self, info: dict):
        path = info["path"]
        got = self._modules.get(path)
        if got is None:
            try:
                got = import_module_for(path, info.get("module"), info.get("root"))
            except BaseException as exc:  # SystemExit from a script's module code too
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                got = ModuleImportError(f"cannot import the module: {tb}"[:400])
            self._modules[path] = got
        if isinstance(got, ModuleImportError):
            raise got
        return got

    def cuda_broken(self) -> Optional[str]:
        """The error text when the CUDA context no longer works (None in predict mode or when fine)."""
        if self.mode != "gpu":
            return None
        try:
            self.torch.cuda.synchronize()
            return None
        except Exception as exc:  # noqa: BLE001
            return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]

    # -- entry tasks ------------------------------------------------------------------------
    def run_entry(self) -> None:
        from torchsync_lint.verify import harness

        job, torch = self.job, self.torch
        for p in job.get("sys_path", []):
            if p not in sys.path:
                sys.path.insert(0, p)
        task = job["tasks"][0]
        self.chan.send("begin", id=task["id"])
        t0 = time.monotonic()
        result: Dict[str, Any] = {}
        try:
            entry = load_entry(job["entry"])
        except BaseException as exc:
            self.chan.send("result", id=task["id"], failure="cannot load the entry: " + harness._error_text(exc))
            return
        traced = set(job.get("traced", []))
        if self.mode == "predict":
            def make_call():
                fn, args, kwargs = unpack_entry(entry())
                return lambda: fn(*args, **kwargs)
            try:
                result = harness.predict(torch, self.roots, make_call, gpu="cpu")
            except Exception as exc:
                result = {"failure": "entry failed: " + harness._error_text(exc)}
        else:
            try:
                fn, args, kwargs = unpack_entry(entry())
                torch.cuda.synchronize()
            except BaseException as exc:
                self.chan.send("result", id=task["id"], failure="the entry function raised " +
                               harness._error_text(exc))
                return
            reps = int(self.settings.get("reps", 3))
            result = harness.measure(torch, self.roots, lambda: None, lambda _: fn(*args, **kwargs), traced,
                                     self.clock, reps=reps, warmup=2)
            result["call_ms"] = self._call_ms(lambda: fn(*args, **kwargs))
        result["seconds"] = round(time.monotonic() - t0, 3)
        self.chan.send("result", id=task["id"], **result)

    def _call_ms(self, call, n: int = 20) -> Optional[float]:
        torch = self.torch
        try:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                call()
            torch.cuda.synchronize()
            return round((time.perf_counter() - t0) * 1000 / n, 3)
        except Exception:
            return None


def _early_settings(argv) -> Optional[Dict[str, Any]]:
    if "--mode" not in argv:
        return None
    mode = argv[argv.index("--mode") + 1]
    settings = json.loads(argv[argv.index("--settings") + 1]) if "--settings" in argv else {}
    preload = json.loads(argv[argv.index("--preload") + 1]) if "--preload" in argv else []
    return {"mode": mode, "settings": settings, "preload": preload, "later": "--preload-later" in argv}


def _preload_later(chan: Channel) -> Optional[list]:
    """The packages, sent by the parent once it knows them (``runner.Started.preload``); None when
    the parent closed our stdin instead (it needs no child)."""
    line = (_STDIN or sys.stdin).readline()
    if not line:
        return None
    try:
        return list(json.loads(line).get("preload") or [])
    except (ValueError, AttributeError) as exc:
        chan.send("fatal", reason=f"bad preload line: {exc}")
        return None


def _preload(pairs) -> None:
    """Import the packages the job will import, while the parent still lints (started ahead).
    Best effort: a package that fails here fails again, and is reported, when its snippet runs.
    ``torch._dynamo`` is put off until a snippet uses it (``lazy``)."""
    lazy_imports()
    for root, name in pairs:
        if root and root not in sys.path:
            sys.path.insert(0, root)
        try:
            importlib.import_module(name)
        except (Exception, SystemExit):  # a package's import may call sys.exit too; the job reports it
            sys.modules.pop(name, None)


def lazy_imports() -> None:
    """A snippet child's imports of ``torch._dynamo`` wait for its first use (``verify.lazy``)."""
    from torchsync_lint.verify import lazy

    if lazy.wanted():
        lazy.install()


_STDIN = None  # the protocol's stdin, once the user's code has /dev/null in its place


def _tasks(job: Dict[str, Any]):
    """The job's tasks, then, for a streamed job (``stream``), one per line until the end line: the
    parent sends each file's tasks as soon as it has extracted them."""
    if not job.get("stream"):
        yield from job.get("tasks", [])
        return
    import queue
    import threading

    stream = _STDIN or sys.stdin
    lines: "queue.Queue[str]" = queue.Queue()

    def pump() -> None:  # always drain the pipe: the parent never blocks writing ahead of us
        for raw in iter(stream.readline, ""):
            lines.put(raw)
        lines.put("")

    threading.Thread(target=pump, name="tsl-tasks", daemon=True).start()
    yield from job.get("tasks", [])
    for line in iter(lines.get, ""):
        try:
            task = json.loads(line)
        except ValueError:
            return
        if task.get("end"):
            return
        yield task


def _read_job(chan: Channel) -> Optional[Dict[str, Any]]:
    """The job: one JSON line on stdin (a line, so no end of file is needed)."""
    try:
        return json.loads((_STDIN or sys.stdin).readline())
    except ValueError as exc:
        chan.send("fatal", reason=f"bad job: {exc}")
        return None


def _exec_fresh(argv, fds=None) -> None:
    """A forked child that cannot use what it inherited becomes a fresh child (the same process, the
    same pipes: ``fds`` puts the protocol's stdin and stdout back on 0 and 1 first)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if fds is not None:
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (f"import sys; sys.path.insert(0, {root!r}); import torchsync_lint.verify.child as m; "
            f"sys.path.remove({root!r}); sys.exit(m.main())")  # this copy of torchsync-lint, as the server
    os.execv(sys.executable, [sys.executable, "-c", code, *argv])


def _bad_fork(torch) -> bool:
    try:
        return bool(torch.cuda._is_in_bad_fork())
    except Exception:  # noqa: BLE001
        return False


def _cuda_lost(torch) -> bool:
    """A forked child's CUDA is unusable though the machine has a GPU (NVML still counts one): the
    driver's state from before the fork. A CPU-only torch or machine loses nothing."""
    try:
        if not torch.version.cuda or torch.cuda.is_available():
            return False
        return int(torch.cuda._device_count_nvml()) > 0
    except Exception:  # noqa: BLE001
        return False


def main(argv=None, forked: Optional[Dict[str, Any]] = None) -> int:
    """``forked``: this process was forked from the fork server (``forkserver.py``), which imported
    torch and the packages already (what it measured, and whether to ``exec`` a fresh child)."""
    import faulthandler

    argv = sys.argv[1:] if argv is None else list(argv)
    if forked is not None and forked.get("exec"):
        _exec_fresh(argv)
    faulthandler.enable()  # a crash prints its cause (and stack) to stderr, which the parent quotes
    chan = Channel()
    global _STDIN
    _STDIN = os.fdopen(os.dup(0), "r", buffering=1)  # tasks come here; the user's code reads /dev/null
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, "r", closefd=False)
    # started ahead of its job (``--mode M --settings JSON``): torch, CUDA and the sleep's calibration
    # are ready while the parent still extracts the snippets; the job then comes as one line
    early = _early_settings(argv)
    job: Optional[Dict[str, Any]] = None
    if early is None:
        job = _read_job(chan)
        if job is None:
            return 2
    mode = (early or job or {}).get("mode", "gpu")
    warm = driver.Warmup().start() if forked is None and driver.wanted(mode) else None
    t0 = time.monotonic()
    try:
        import torch  # noqa: F401  (only whether it imports)
    except Exception as exc:
        chan.send("fatal", reason=f"torch is not importable: {exc}", no_torch=True)
        return 2
    torch_import_s = round(time.monotonic() - t0, 3)
    restore = (_STDIN.fileno(), chan.out.fileno())
    if forked is not None and early is not None and early["mode"] == "gpu" and (
            _bad_fork(torch) or _cuda_lost(torch)):
        _exec_fresh(argv, restore)  # CUDA state from before the fork, or a driver that did not survive it
    child = Child(job if job is not None else early, chan)
    child.startup["torch_import_s"] = torch_import_s
    if warm is not None:
        child.startup.update(warm.join())
    if forked is not None:
        child.startup.update(forked=True, torch_import_s=forked.get("torch_import_s"),
                             preload_s=forked.get("preload_s"))
    try:
        if not child.hello():
            return 3
    except Exception as exc:
        if forked is not None:  # the driver did not survive the fork: start afresh, nothing sent yet
            _exec_fresh(argv, restore)
        chan.send("fatal", reason="CUDA initialisation failed: " + str(exc)[:300], no_cuda=True)
        return 3
    if job is None and forked is not None:  # the server imported the packages before the fork
        chan.send("preloaded", seconds=forked.get("preload_s"))
    elif job is None:
        pairs = _preload_later(chan) if early.get("later") else early.get("preload")
        if pairs is None:
            return 2
        t0 = time.monotonic()
        _preload(pairs or ())
        chan.send("preloaded", seconds=round(time.monotonic() - t0, 3))
    if job is None:
        job = _read_job(chan)
        if job is None:
            return 2
        if job.get("mode", "gpu") != child.mode or job.get("settings", {}) != child.settings:
            chan.send("fatal", reason="the job's mode or settings differ from the ones this child started with")
            return 2
        child.job = job
    if job.get("kind") == "snippet":
        lazy_imports()  # (a child given its job at once: its modules import with its tasks)
    if job.get("kind") == "probe":
        pass
    elif job.get("kind") == "entry":
        child.run_entry()
    else:
        child.run_snippets()
    chan.send("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
