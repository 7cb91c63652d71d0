"""Measure on a GPU which calls of common training utilities make the host wait: torchmetrics
metric objects (``update``, ``forward``, ``compute``, ``reset``, per constructor variant), logger
calls fed CUDA tensors (``SummaryWriter.add_scalar``...), and Lightning's ``self.log`` in a real
``Trainer.fit``.

    python bench/measure_training_utils.py --out training_utils.json   # on a CUDA machine
    python bench/measure_training_utils.py --dry-run                   # no CUDA: run every call once

The metric and logger calls are decided by the sync catalog's two oracles
(``torchsync_lint.catalog.sweep.Oracles``): the host time of the call while a ``torch.cuda._sleep``
kernel is queued (ground truth), and ``torch.cuda.set_sync_debug_mode("warn")``. Each call is warmed
up once first. ``compute`` and ``reset`` are measured on a metric that was just updated (an update
runs before each timed call, outside the clock), so ``compute`` never returns its cached value.

Lightning is measured inside ``Trainer.fit``: the sleep is queued in ``training_step`` right before
``self.log``; the host time of ``self.log`` itself and of the gap until the next ``training_step``
starts (backward, optimizer step, Lightning's bookkeeping, progress bar, logger) are recorded, and
the debug mode is switched on for whole steps to say where a sync happened.

The output is the data file ``torchsync_lint/catalog/data/training_utils.json`` (rules TSL409,
TSL410 read it; tests/test_training_utils_data.py checks their claims against it).
"""

from __future__ import annotations

# A measuring script: its set-up copies inputs to the GPU and drains the GPU before each timed call.
# torchsync-lint: noqa: TSL202,TSL401

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
import warnings
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from torchsync_lint.catalog import sweep  # noqa: E402  (imports no torch, no libcst)

SLEEP_MS = 20.0  # longer than the catalog's 4 ms: metric calls spend up to a millisecond in Python
METHODS = ("update", "forward", "compute", "reset")

# (class as written in user code, constructor keyword source, inputs). Labels are the keywords as
# written (``default`` for none), so a rule can match a constructor call's constant keywords.
CLS = "torchmetrics.classification"
METRIC_CASES = [
    # aggregation: a 0-dim loss per step (CatMetric: a vector)
    ("torchmetrics.MeanMetric", "", "scalar"),
    ("torchmetrics.MeanMetric", "nan_strategy='error'", "scalar"),
    ("torchmetrics.MeanMetric", "nan_strategy='ignore'", "scalar"),
    ("torchmetrics.MeanMetric", "nan_strategy='disable'", "scalar"),
    ("torchmetrics.MeanMetric", "nan_strategy=0.0", "scalar"),
    ("torchmetrics.SumMetric", "", "scalar"),
    ("torchmetrics.SumMetric", "nan_strategy='disable'", "scalar"),
    ("torchmetrics.MaxMetric", "", "scalar"),
    ("torchmetrics.MaxMetric", "nan_strategy='disable'", "scalar"),
    ("torchmetrics.MinMetric", "", "scalar"),
    ("torchmetrics.MinMetric", "nan_strategy='disable'", "scalar"),
    ("torchmetrics.CatMetric", "", "vector"),
    ("torchmetrics.CatMetric", "nan_strategy='disable'", "vector"),
    ("torchmetrics.aggregation.RunningMean", "window=5", "scalar"),
    ("torchmetrics.aggregation.RunningMean", "window=5, nan_strategy='disable'", "scalar"),
    # classification, through the task wrappers (they return the task's class)
    ("torchmetrics.Accuracy", "task='multiclass', num_classes=10", "multiclass"),
    ("torchmetrics.Accuracy", "task='multiclass', num_classes=10, validate_args=False", "multiclass"),
    ("torchmetrics.Accuracy", "task='multiclass', num_classes=10, average='micro', validate_args=False", "multiclass"),
    ("torchmetrics.F1Score", "task='multiclass', num_classes=10", "multiclass"),
    ("torchmetrics.F1Score", "task='multiclass', num_classes=10, validate_args=False", "multiclass"),
    ("torchmetrics.Precision", "task='multiclass', num_classes=10", "multiclass"),
    ("torchmetrics.Precision", "task='multiclass', num_classes=10, validate_args=False", "multiclass"),
    ("torchmetrics.Recall", "task='multiclass', num_classes=10", "multiclass"),
    ("torchmetrics.Recall", "task='multiclass', num_classes=10, validate_args=False", "multiclass"),
    ("torchmetrics.AUROC", "task='multiclass', num_classes=10", "multiclass"),
    ("torchmetrics.AUROC", "task='multiclass', num_classes=10, validate_args=False", "multiclass"),
    ("torchmetrics.AUROC", "task='multiclass', num_classes=10, thresholds=100, validate_args=False", "multiclass"),
    ("torchmetrics.ConfusionMatrix", "task='multiclass', num_classes=10", "multiclass"),
    ("torchmetrics.ConfusionMatrix", "task='multiclass', num_classes=10, validate_args=False", "multiclass"),
    ("torchmetrics.Accuracy", "task='binary'", "binary"),
    ("torchmetrics.Accuracy", "task='binary', validate_args=False", "binary"),
    ("torchmetrics.F1Score", "task='binary'", "binary"),
    ("torchmetrics.F1Score", "task='binary', validate_args=False", "binary"),
    ("torchmetrics.AUROC", "task='binary'", "binary"),
    ("torchmetrics.AUROC", "task='binary', validate_args=False", "binary"),
    ("torchmetrics.AUROC", "task='binary', thresholds=100, validate_args=False", "binary"),
    ("torchmetrics.ConfusionMatrix", "task='binary'", "binary"),
    ("torchmetrics.ConfusionMatrix", "task='binary', validate_args=False", "binary"),
    # the task classes by their own names
    (f"{CLS}.MulticlassAccuracy", "num_classes=10", "multiclass"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10, validate_args=False", "multiclass"),
    (f"{CLS}.BinaryAccuracy", "", "binary"),
    (f"{CLS}.BinaryAccuracy", "validate_args=False", "binary"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10, average='micro'", "multiclass"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10, average='weighted'", "multiclass"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10, average='none'", "multiclass"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10", "multiclass-labels"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10, average='micro'", "multiclass-labels"),
    (f"{CLS}.MulticlassAccuracy", "num_classes=10, average='micro', validate_args=False", "multiclass-labels"),
    (f"{CLS}.MulticlassF1Score", "num_classes=10", "multiclass"),
    (f"{CLS}.MulticlassF1Score", "num_classes=10, average='micro'", "multiclass"),
    (f"{CLS}.MulticlassPrecision", "num_classes=10", "multiclass"),
    (f"{CLS}.MulticlassRecall", "num_classes=10", "multiclass"),
    ("torchmetrics.Accuracy", "task='multiclass', num_classes=10, average='macro'", "multiclass"),
    ("torchmetrics.F1Score", "task='multiclass', num_classes=10, average='macro'", "multiclass"),
    (f"{CLS}.BinaryF1Score", "", "binary"),
    (f"{CLS}.BinaryF1Score", "validate_args=False", "binary"),
    (f"{CLS}.BinaryAUROC", "", "binary"),
    (f"{CLS}.MulticlassAUROC", "num_classes=10", "multiclass"),
    (f"{CLS}.MulticlassAUROC", "num_classes=10, validate_args=False", "multiclass"),
    (f"{CLS}.MulticlassConfusionMatrix", "num_classes=10", "multiclass"),
    # regression
    ("torchmetrics.MeanSquaredError", "", "regression"),
    ("torchmetrics.MeanAbsoluteError", "", "regression"),
    ("torchmetrics.R2Score", "", "regression"),
    ("torchmetrics.PearsonCorrCoef", "", "regression"),
    # collections
    ("torchmetrics.MetricCollection",
     f"[{CLS}.MulticlassAccuracy(num_classes=10), {CLS}.MulticlassF1Score(num_classes=10)]", "multiclass"),
    ("torchmetrics.MetricCollection",
     f"[{CLS}.MulticlassAccuracy(num_classes=10, validate_args=False), "
     f"{CLS}.MulticlassF1Score(num_classes=10, validate_args=False)]", "multiclass"),
    ("torchmetrics.MetricCollection",
     f"[{CLS}.MulticlassAccuracy(num_classes=10, validate_args=False), "
     f"{CLS}.MulticlassF1Score(num_classes=10, validate_args=False)], compute_groups=False", "multiclass"),
    ("torchmetrics.MetricCollection",
     f"[{CLS}.MulticlassAccuracy(num_classes=10, average='micro'), "
     f"{CLS}.MulticlassF1Score(num_classes=10, average='micro')]", "multiclass"),
    ("torchmetrics.MetricCollection",
     f"{{'acc': {CLS}.MulticlassAccuracy(num_classes=10, average='micro'), "
     f"'auroc': {CLS}.MulticlassAUROC(num_classes=10, validate_args=False)}}", "multiclass"),
]

# Logger and formatting calls: (id, statement, note). Names: tb (a SummaryWriter), tbl (Lightning's
# TensorBoardLogger), loss (a 0-dim CUDA tensor), w (a CUDA vector), fl (a Python float), cpu_loss.
LOGGER_CASES = [
    ("tb.add_scalar:cuda", "tb.add_scalar('loss', loss, 1)", "0-dim CUDA tensor"),
    ("tb.add_scalar:cuda-detach", "tb.add_scalar('loss', loss.detach(), 1)", "detached: still on the GPU"),
    ("tb.add_scalar:cuda-new_style", "tb.add_scalar('loss', loss, 1, new_style=True)", ""),
    ("tb.add_scalar:float", "tb.add_scalar('loss', fl, 1)", "a Python float"),
    ("tb.add_scalar:cpu", "tb.add_scalar('loss', cpu_loss, 1)", "a CPU tensor"),
    ("tb.add_scalars:cuda", "tb.add_scalars('losses', {'a': loss, 'b': loss * 2}, 1)", ""),
    ("tb.add_scalars:float", "tb.add_scalars('losses', {'a': fl, 'b': fl}, 1)", ""),
    ("tb.add_histogram:cuda", "tb.add_histogram('w', w, 1)", ""),
    ("tb.add_histogram:cpu", "tb.add_histogram('w', cpu_w, 1)", ""),
    ("tbl.log_metrics:cuda", "tbl.log_metrics({'loss': loss}, 1)", "Lightning's TensorBoardLogger"),
    ("tbl.log_metrics:float", "tbl.log_metrics({'loss': fl}, 1)", ""),
    ("print:cuda", "print(loss)", "TSL006"),
    ("fstring:cuda", "f'{loss:.3f}'", "TSL006"),
    ("str:cuda", "str(loss)", "TSL006"),
    ("print:float", "print(fl)", ""),
]

# Lightning: self.log keyword variants inside training_step (None: no self.log at all).
LIGHTNING_CASES = [
    ("no-log", None, {}),
    ("log", "", {}),
    ("log:prog_bar", "prog_bar=True", {}),
    ("log:on_epoch", "on_step=True, on_epoch=True", {}),
    ("log:sync_dist", "sync_dist=True", {}),
    ("log:every_step_logger", "", {"log_every_n_steps": 1}),
    ("log:no_progress_bar", "", {"enable_progress_bar": False}),
    ("log:prog_bar_no_progress_bar", "prog_bar=True", {"enable_progress_bar": False}),
    ("log_dict:prog_bar", "*prog_bar=True", {}),
    ("log_dict", "*", {}),
]
LIGHTNING_SLEEP_MS = 100.0  # the gap to the next step holds backward, optimizer and Lightning: a wider margin
LIGHTNING_STEPS = {"warm": (0, 1), "time": (2, 3, 4), "debug": (5, 6)}


def qualname(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def signature(cls) -> List[list]:
    """[name, default] of the constructor's parameters (default: a JSON literal, or "<required>" /
    "<other>"), for a rule to map positional arguments and to drop keywords equal to the default."""
    import inspect

    out = []
    for p in inspect.signature(cls).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        d = p.default
        out.append([p.name, "<required>" if d is p.empty else d if isinstance(d, (str, int, float, bool, type(None)))
                    else "<other>"])
    return out


def public_aliases(cls) -> List[str]:
    """Names user code can import the class by (torchmetrics, its subpackages, its home module)."""
    import importlib

    out = set()
    for mod in ("torchmetrics", "torchmetrics.aggregation", "torchmetrics.classification",
                "torchmetrics.regression", "torchmetrics.collections", cls.__module__):
        try:
            if getattr(importlib.import_module(mod), cls.__name__, None) is cls:
                out.add(f"{mod}.{cls.__name__}")
        except ImportError:
            pass
    return sorted(out)


class Prepared(sweep._Fresh):
    """A call with a set-up step that runs before the clock starts (see ``sweep._prepare``)."""

    def __init__(self, call, before=None) -> None:
        self.call, self.before = call, before

    def __call__(self):
        return self.call()

    def prepare(self) -> None:
        if self.before is not None:
            self.before()


def decide(oracles, fn: Prepared, cuda: bool) -> dict:
    try:
        fn.prepare()
        fn()  # warm-up: lazy initialisation may sync once
        if not cuda:
            return {"synced": None, "how": "dry-run"}
        synced, how, stall_us = oracles.decide(fn)
        return {"synced": synced, "how": how, "stall_us": stall_us}
    except Exception as exc:  # the error is part of the record
        return {"synced": None, "how": "error", "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"}


def make_inputs(torch, device):
    g = torch.Generator(device="cpu").manual_seed(0)
    n, c = 64, 10
    logits = torch.randn(n, c, generator=g)
    return {
        "scalar": (torch.rand((), generator=g).to(device),),
        "vector": (torch.rand(n, generator=g).to(device),),
        "multiclass": (logits.to(device), torch.randint(0, c, (n,), generator=g).to(device)),
        "multiclass-labels": (torch.randint(0, c, (n,), generator=g).to(device),
                              torch.randint(0, c, (n,), generator=g).to(device)),
        "binary": (torch.rand(n, generator=g).to(device), torch.randint(0, 2, (n,), generator=g).to(device)),
        "regression": (torch.randn(n, generator=g).to(device), torch.randn(n, generator=g).to(device)),
    }


def measure_metrics(torch, oracles, device, cuda, log) -> Dict[str, dict]:
    import torchmetrics  # noqa: F401  (the constructor sources name it)

    namespace = {"torchmetrics": torchmetrics}
    exec("import torchmetrics.aggregation, torchmetrics.classification, torchmetrics.regression", namespace)
    inputs = make_inputs(torch, device)
    out: Dict[str, dict] = {}
    for written, kwargs, kind in METRIC_CASES:
        source = f"{written}({kwargs})"
        label = "default" if not kwargs else kwargs.replace(" ", "")
        if kind == "multiclass-labels":  # integer class predictions instead of logits: an extra fact
            label += " @int-preds"
        row = {"constructor": source, "inputs": kind}
        try:
            metric = eval(source, namespace).to(device)
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"
            out.setdefault(written, {"variants": {}})["variants"][label] = row
            continue
        args = inputs[kind]
        row["class"] = qualname(metric)
        entry = out.setdefault(written, {"variants": {}})
        entry.setdefault("aliases", public_aliases(eval(written, namespace)))
        entry.setdefault("signature", signature(eval(written, namespace)))
        row["class_aliases"] = public_aliases(type(metric))
        if written == "torchmetrics.MetricCollection":
            row["members"] = sorted(qualname(m) for m in metric.values())
        update = lambda m=metric, a=args: m.update(*a)  # noqa: E731
        calls = {
            "update": Prepared(update),
            "forward": Prepared(lambda m=metric, a=args: m(*a)),
            "compute": Prepared(lambda m=metric: m.compute(), before=update),
            "reset": Prepared(lambda m=metric: m.reset(), before=update),
        }
        for method in METHODS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torchmetrics' own "compute before update" notes
                row[method] = decide(oracles, calls[method], cuda)
        entry = out.setdefault(written, {"variants": {}})
        entry["variants"][label] = row
        log(f"{source:<110} " + " ".join(f"{m}={row[m]['synced']}/{row[m]['how']}" for m in METHODS))
    return out


def measure_loggers(torch, oracles, device, cuda, log) -> Dict[str, dict]:
    from torch.utils.tensorboard import SummaryWriter

    tmp = tempfile.mkdtemp(prefix="tsl_loggers_")
    namespace = {"tb": SummaryWriter(log_dir=os.path.join(tmp, "tb")), "fl": 0.5,
                 "loss": (torch.rand(8, device=device)).sum(), "w": torch.rand(256, device=device),
                 "cpu_loss": torch.tensor(0.5), "cpu_w": torch.rand(256)}
    try:
        from lightning.pytorch.loggers import TensorBoardLogger

        namespace["tbl"] = TensorBoardLogger(os.path.join(tmp, "tbl"))
    except Exception as exc:  # lightning missing
        log(f"no lightning logger: {exc}")
    out = {}
    sink = io.StringIO()
    for cid, statement, note in LOGGER_CASES:
        code = compile(statement, f"<{cid}>", "eval")

        def call(code=code):
            with contextlib.redirect_stdout(sink):
                return eval(code, namespace)

        row = {"statement": statement, "note": note, **decide(oracles, Prepared(call), cuda)}
        out[cid] = row
        log(f"{cid:<32} {statement:<60} synced={row['synced']} how={row['how']} {row.get('error', '')}")
    namespace["tb"].close()
    return out


def measure_lightning(torch, device, cuda, cycles_per_ms, log) -> Dict[str, dict]:
    """self.log inside a real Trainer.fit: the stall of the call itself, and of the gap until the
    next training_step (with a sleep queued before self.log), and the debug mode's warnings."""
    try:
        import lightning as L
        from lightning.pytorch.loggers import TensorBoardLogger
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    nn = torch.nn
    out = {}
    tmp = tempfile.mkdtemp(prefix="tsl_lightning_")

    class Probe(L.LightningModule):
        def __init__(self, log_kwargs: Optional[str]):
            super().__init__()
            self.lin = nn.Linear(32, 32)
            self.log_dict_call = log_kwargs is not None and log_kwargs.startswith("*")
            if self.log_dict_call:
                log_kwargs = log_kwargs[1:]
            self.log_kwargs = None if log_kwargs is None else eval(f"dict({log_kwargs})")
            self.starts, self.rows = {}, []
            self._catcher = None
            self.debug_hits: Dict[int, List[str]] = {}

        def _phase(self, i):
            return next((p for p, steps in LIGHTNING_STEPS.items() if i in steps), "other")

        def on_train_batch_start(self, batch, batch_idx):
            self.starts[batch_idx] = time.perf_counter()
            self._debug_off()
            if self._phase(batch_idx) == "debug":
                self._debug_on(batch_idx)

        def _debug_on(self, i):
            self._catcher = warnings.catch_warnings()  # restores showwarning and the filters on exit
            self._catcher.__enter__()
            warnings.simplefilter("always")
            hits = self.debug_hits.setdefault(i, [])

            def show(message, category, filename, lineno, file=None, line=None):
                if sweep.SYNC_TEXT in str(message):
                    frames = [f for f in traceback.extract_stack()[:-1]
                              if not _in_torch(f.filename) and "warnings" not in f.filename and f.filename != __file__]
                    hits.append(" <- ".join(f"{_short(f.filename)}:{f.lineno}:{f.name}" for f in frames[-4:][::-1]))

            warnings.showwarning = show
            if cuda:
                torch.cuda.set_sync_debug_mode("warn")

        def _debug_off(self):
            if self._catcher is not None:
                if cuda:
                    torch.cuda.set_sync_debug_mode(0)
                self._catcher.__exit__(None, None, None)
                self._catcher = None

        def training_step(self, batch, batch_idx):
            loss = self.lin(batch).square().mean()
            phase = self._phase(batch_idx)
            if phase == "time" and cuda:
                torch.cuda.synchronize()
                torch.cuda._sleep(int(cycles_per_ms * LIGHTNING_SLEEP_MS))
            t0 = time.perf_counter()
            if self.log_dict_call:
                self.log_dict({"loss": loss, "loss2": loss * 2}, **self.log_kwargs)
            elif self.log_kwargs is not None:
                self.log("loss", loss, **self.log_kwargs)
            t1 = time.perf_counter()
            self.rows.append({"step": batch_idx, "phase": phase, "log_ms": (t1 - t0) * 1e3, "ret": t1})
            return loss

        def on_train_end(self):
            self._debug_off()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=1e-3)

    data = [torch.randn(16, 32, device=device) for _ in range(64)]
    last = max(max(s) for s in LIGHTNING_STEPS.values())
    for cid, log_kwargs, trainer_kwargs in LIGHTNING_CASES:
        model = Probe(log_kwargs)
        kw = dict(accelerator="gpu" if cuda else "cpu", devices=1, max_steps=last + 2, logger=TensorBoardLogger(tmp),
                  enable_checkpointing=False, enable_model_summary=False, num_sanity_val_steps=0,
                  log_every_n_steps=50, enable_progress_bar=True)
        kw.update(trainer_kwargs)
        if log_kwargs is None:
            statement = None
        elif log_kwargs.startswith("*"):
            statement = f"self.log_dict({{'loss': loss, 'loss2': loss * 2}}{', ' if log_kwargs[1:] else ''}{log_kwargs[1:]})"
        else:
            statement = f"self.log('loss', loss{', ' if log_kwargs else ''}{log_kwargs})"
        row = {"self_log": statement,
               "trainer": {k: v for k, v in kw.items() if k in ("log_every_n_steps", "enable_progress_bar")}}
        try:
            with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                trainer = L.Trainer(**kw)
                trainer.fit(model, torch.utils.data.DataLoader(data, batch_size=None))
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            out[cid] = row
            log(f"lightning {cid}: {row['error']}")
            continue
        timed = [r for r in model.rows if r["phase"] == "time"]
        gaps = [(model.starts[r["step"] + 1] - r["ret"]) * 1e3 for r in timed if r["step"] + 1 in model.starts]
        log_ms = statistics.median(r["log_ms"] for r in timed) if timed else None
        gap_ms = statistics.median(gaps) if gaps else None
        hits = [h for step in LIGHTNING_STEPS["debug"] for h in model.debug_hits.get(step, [])]
        row.update(
            sleep_ms=LIGHTNING_SLEEP_MS,
            log_call_stall_ms=None if log_ms is None else round(log_ms, 3),
            next_step_gap_ms=None if gap_ms is None else round(gap_ms, 3),
            gaps_ms=[round(g, 3) for g in gaps],
            log_call_synced=None if (log_ms is None or not cuda) else log_ms >= 0.5 * LIGHTNING_SLEEP_MS,
            step_synced=None if (gap_ms is None or not cuda) else gap_ms >= 0.5 * LIGHTNING_SLEEP_MS,
            debug_warnings_per_step=len(hits) / len(LIGHTNING_STEPS["debug"]),
            debug_sites=sorted(set(hits)),
        )
        out[cid] = row
        log(f"lightning {cid:<24} log_call={row['log_call_stall_ms']}ms gap={row['next_step_gap_ms']}ms "
            f"debug/step={row['debug_warnings_per_step']} {row['debug_sites'][:3]}")
    return out


def _in_torch(path: str) -> bool:
    return "/site-packages/torch/" in path or "/dist-packages/torch/" in path


def _short(path: str) -> str:
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.basename(path)


def summarise(metrics: Dict[str, dict]) -> dict:
    """Counts for the report: (metric variant, method) pairs synced / not / undecided / disagreeing."""
    c = {"variants": 0, "calls": 0, "synced": 0, "sync_free": 0, "undecided": 0, "disagreements": 0}
    for e in metrics.values():
        for row in e["variants"].values():
            c["variants"] += 1
            for m in METHODS:
                r = row.get(m)
                if r is None:
                    continue
                c["calls"] += 1
                key = "synced" if r["synced"] else "sync_free" if r["synced"] is False else "undecided"
                c[key] += 1
                c["disagreements"] += "!" in r.get("how", "")
    return c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--dry-run", action="store_true", help="run on the CPU; decide nothing")
    ap.add_argument("--skip", nargs="*", default=(), choices=("metrics", "loggers", "lightning"))
    args = ap.parse_args(argv)
    import torch

    sweep.SLEEP_MS = SLEEP_MS  # Oracles reads it at call time
    cuda = torch.cuda.is_available() and not args.dry_run
    device = "cuda" if cuda else "cpu"
    oracles = sweep.Oracles(torch, device)
    log = lambda m: print(m, flush=True)  # noqa: E731
    started = time.time()
    versions = {"torch": torch.__version__}
    for name in ("torchmetrics", "tensorboard", "lightning"):
        try:
            versions[name] = __import__(name).__version__
        except Exception:
            versions[name] = None
    method = (f"catalog oracles: host time vs a queued {SLEEP_MS:g} ms torch.cuda._sleep (timing decides), "
              "set_sync_debug_mode('warn')")
    gpu = torch.cuda.get_device_name(0) if cuda else "cpu (dry run)"
    result = {"format": 1, "environment": dict(versions, gpu=gpu, method=method)}
    if "metrics" not in args.skip:
        result["metrics"] = measure_metrics(torch, oracles, device, cuda, log)
        result["counts"] = summarise(result["metrics"])
    if "loggers" not in args.skip:
        result["loggers"] = measure_loggers(torch, oracles, device, cuda, log)
    if "lightning" not in args.skip:
        result["lightning"] = measure_lightning(torch, device, cuda, oracles.cycles_per_ms, log)
    result["environment"]["seconds"] = round(time.time() - started, 1)
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    log(json.dumps(result.get("counts", {})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
