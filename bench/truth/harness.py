"""How a workload is described and run: training steps, an eval forward, and one-off calls.

A workload module (``wl_<pkg>.py``) lists builders in ``WORKLOADS``; each builder takes
``(torch, device)`` and returns a :class:`Workload` (models built with random init, synthetic data
made on the device). The runner warms every workload up once with recording off (lazy
initialisation, cuBLAS handles and caches sync once), then records ``steps`` training steps
(forward + loss, then backward and an AdamW step, then ``after_step``), one eval forward under
``no_grad``, and ``steps`` calls of every case.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple


@dataclass
class Workload:
    name: str
    train: Optional[Callable[[], Any]] = None  # forward + loss on a fresh batch; returns the loss tensor
    params: Sequence[Any] = ()  # what the optimizer steps (defaults to the modules' parameters)
    modules: Sequence[Any] = ()  # nn.Modules switched between train() and eval()
    after_step: Optional[Callable[[], Any]] = None  # after optimizer.step (an EMA update, say)
    eval: Optional[Callable[[], Any]] = None  # eval-mode forward, run under torch.no_grad()
    cases: Sequence[Tuple[str, Callable[[], Any]]] = ()  # calls recorded one by one (transforms, metrics)
    lr: float = 1e-4
    info: dict = field(default_factory=dict)


def _sync(torch, device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def run_workload(torch, rec, wl: Workload, device, steps: int) -> dict:
    """Warm up unrecorded, then record; returns per-case errors (the caller records the rest)."""
    params = list(wl.params) or [p for m in wl.modules for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=wl.lr) if wl.train is not None and params else None

    def set_mode(train: bool) -> None:
        for m in wl.modules:
            m.train(train)

    def train_step() -> None:
        set_mode(True)
        rec.flush()
        rec.phase = "train"
        loss = wl.train()
        rec.flush()
        rec.phase = "train-backward"
        if opt is not None:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        if opt is not None:
            opt.step()
        rec.flush()
        if wl.after_step is not None:
            rec.phase = "train-after"
            wl.after_step()
            rec.flush()
        rec.phase = "harness"

    def eval_step() -> None:
        set_mode(False)
        rec.flush()
        rec.phase = "eval"
        with torch.no_grad():
            wl.eval()
        rec.flush()
        rec.phase = "harness"

    errors = {}
    rec.active = False
    if wl.train is not None:
        train_step()
    if wl.eval is not None:
        eval_step()
    _sync(torch, device)
    rec.active = True
    try:
        for _ in range(steps if wl.train is not None else 0):
            train_step()
        if wl.eval is not None:
            eval_step()
        _sync(torch, device)
    finally:
        rec.active = False
    for name, fn in wl.cases:
        try:
            rec.active = False
            torch.manual_seed(0)
            fn()  # warm-up
            _sync(torch, device)
            rec.active = True
            for _ in range(steps):
                rec.flush()
                rec.phase = "call:" + name
                fn()
                rec.flush()
                rec.phase = "harness"
            _sync(torch, device)
        except Exception as e:  # record and go on with the next case
            errors[name] = "%s: %s @ %s" % (type(e).__name__, str(e)[:300],
                                            traceback.format_exc(limit=-2).splitlines()[-3].strip()[:200])
        finally:
            rec.active = False
    return errors


def run_all(torch, rec, builders: Sequence[Callable], device, steps: int, deadline: float, wanted: List[str],
            on_entry: Callable[[str, dict], None]) -> None:
    """Build and run each workload; one that fails is recorded with its error and the next one runs."""
    t0 = time.time()
    for build in builders:
        name = build.__name__.replace("build_", "", 1)
        if wanted and name not in wanted:
            continue
        if time.time() - t0 > deadline:
            on_entry(name, {"error": "skipped: deadline", "events": [], "executed": {}})
            continue
        t1 = time.time()
        rec.clear()
        rec.active = False
        rec.phase = "setup"
        entry: dict = {}
        try:
            torch.manual_seed(0)
            wl = build(torch, device)
            entry.update(wl.info)
            errors = run_workload(torch, rec, wl, device, steps)
            if errors:
                entry["case_errors"] = errors
            entry["cases"] = [n for n, _ in wl.cases]
        except Exception as e:  # record and go on with the next workload
            rec.active = False
            entry["error"] = "%s: %s" % (type(e).__name__, str(e)[:500])
            entry["traceback"] = traceback.format_exc(limit=-4)[-2000:]
        finally:
            rec.phase = "harness"
        entry.update(rec.entry())
        entry["seconds"] = round(time.time() - t1, 1)
        on_entry(name, entry)


def figure_logger():
    """A Lightning logger whose experiment takes figures and histograms (as TensorBoard's does), so
    the logging branches of a fit run (validation figures, prediction and interpretation plots);
    it keeps nothing."""
    from lightning.pytorch.loggers import Logger

    class _Experiment:
        def add_figure(self, *args, **kwargs):
            import matplotlib.pyplot as plt
            plt.close("all")

        def add_histogram(self, *args, **kwargs):
            pass

    class FigureLogger(Logger):
        name = "figures"
        version = 0

        @property
        def experiment(self):
            return _Experiment()

        def log_hyperparams(self, *args, **kwargs):
            pass

        def log_metrics(self, metrics, step=None):
            pass

    return FigureLogger()
