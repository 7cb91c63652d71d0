"""Training utilities measured on a GPU: torchmetrics metric objects, TensorBoard / Lightning loggers
and Lightning's ``self.log``.

Read-only access to ``data/training_utils.json`` (written by ``bench/measure_training_utils.py``);
never imports torch. A metric is identified by the class the user code names (``torchmetrics.Accuracy``,
``torchmetrics.classification.MulticlassAccuracy``: any of its public import paths) and by the
constant arguments of its constructor: a measured *variant* is one constructor call, and a call in
user code matches it when the arguments that may change the answer are equal (``task``, ``average``,
``validate_args``, ``nan_strategy``, ``thresholds``...; a keyword equal to its default counts as
absent). Size arguments (``num_classes``, ``window``) and the distributed switches, which do nothing
in a single process, do not take part in the match.
"""

from __future__ import annotations

import ast
import json
import os
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "training_utils.json")
METHODS = ("update", "forward", "compute", "reset")
COLLECTION = "torchmetrics.MetricCollection"
# Arguments that do not take part in matching a constructor call to a measured variant: sizes
# (measured with 10 classes, a window of 5), and switches of distributed runs (not measurable on
# one GPU; they add gathers to `compute` / `forward` under a process group and never remove a sync).
IGNORED_KEYWORDS = frozenset((
    "num_classes", "num_labels", "window", "sync_on_compute", "dist_sync_on_step", "process_group",
    "dist_sync_fn", "distributed_available_fn", "compute_with_cache",
))
# What a constructor argument is when it is no literal (a name, an expression): never matches.
NOT_LITERAL = object()

# Logger objects of the measured statements (``tb.add_scalar(...)``): the statement's receiver name
# -> the classes user code builds it from.
LOGGER_RECEIVERS = {
    "tb": ("torch.utils.tensorboard.SummaryWriter", "torch.utils.tensorboard.writer.SummaryWriter"),
    "tbl": ("lightning.pytorch.loggers.TensorBoardLogger", "lightning.pytorch.loggers.tensorboard.TensorBoardLogger",
            "pytorch_lightning.loggers.TensorBoardLogger", "pytorch_lightning.loggers.tensorboard.TensorBoardLogger"),
}
# The logged value of each measured logger method: (position, keyword).
LOGGER_VALUE_ARGS = {
    "add_scalar": (1, "scalar_value"),
    "add_scalars": (1, "tag_scalar_dict"),
    "add_histogram": (1, "values"),
    "log_metrics": (0, "metrics"),
}


@lru_cache(maxsize=None)
def load(path: str = DATA) -> dict:
    """The whole file: ``{"format", "environment", "metrics", "loggers", "lightning", "counts"}``."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def environment() -> dict:
    return load()["environment"]


def metrics() -> Dict[str, dict]:
    return load()["metrics"]


# -- metrics ---------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _groups() -> Dict[str, str]:
    """Every public name of a measured class -> the name it was measured under."""
    out: Dict[str, str] = {}
    for written, e in metrics().items():
        for name in [written] + list(e.get("aliases", ())):
            out.setdefault(name, written)
    return out


def metric_group(qualname: Optional[str]) -> Optional[str]:
    """The measured class that ``qualname`` names (``torchmetrics.classification.accuracy.Accuracy`` ->
    ``torchmetrics.Accuracy``), or None."""
    return _groups().get(qualname) if qualname else None


def _literal(node: ast.expr):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return NOT_LITERAL


def _defaults(written: str) -> Dict[str, object]:
    return {name: d for name, d in metrics()[written].get("signature", ()) if d not in ("<required>", "<other>")}


def _params(written: str) -> List[str]:
    return [name for name, _ in metrics()[written].get("signature", ())]


def normalise(written: str, positional: Sequence[object], keywords: Dict[str, object]) -> Optional[FrozenSet[Tuple[str, object]]]:
    """The arguments of a constructor call that decide a match, as a set of (name, value); None when
    one of them is no literal (the variant cannot be known)."""
    args = dict(zip(_params(written), positional))
    if len(positional) > len(_params(written)):
        return None
    args.update(keywords)
    defaults = _defaults(written)
    out = set()
    for name, value in args.items():
        if name in IGNORED_KEYWORDS:
            continue
        if value is NOT_LITERAL:
            return None
        if name in defaults and defaults[name] == value and type(defaults[name]) is type(value):
            continue
        out.add((name, value))
    return frozenset(out)


@lru_cache(maxsize=None)
def variants(written: str) -> Dict[str, Tuple[FrozenSet[Tuple[str, object]], dict]]:
    """label -> (its deciding arguments, its measured row), for the rows measured with the default
    inputs (float predictions); a MetricCollection's rows are kept whole (their members decide)."""
    out = {}
    for label, row in metrics()[written]["variants"].items():
        if "@" in label or "error" in row:
            continue
        call = ast.parse(row["constructor"], mode="eval").body
        if written == COLLECTION:
            key = frozenset()
        else:
            key = normalise(written, [_literal(a) for a in call.args], {k.arg: _literal(k.value) for k in call.keywords})
        if key is not None:
            out[label] = (key, row)
    return out


def metric_variant(written: str, positional: Sequence[object], keywords: Dict[str, object]) -> Optional[str]:
    """The tag ``written|label`` of the measured variant a constructor call matches, or None."""
    key = normalise(written, positional, keywords)
    if key is None or written == COLLECTION:
        return None
    for label, (measured, _) in variants(written).items():
        if measured == key:
            return f"{written}|{label}"
    return None


def row(tag: str) -> Optional[dict]:
    written, _, label = tag.partition("|")
    e = metrics().get(written)
    return None if e is None else e["variants"].get(label)


def syncs(tag: str, method: str) -> Optional[bool]:
    """Whether ``method`` of the measured variant ``tag`` synced: True, False, None (unknown)."""
    r = row(tag)
    if r is None or method not in r:
        return None
    return r[method]["synced"]


def alternatives(tag: str, method: str) -> List[Tuple[str, Dict[str, object]]]:
    """Measured variants of the same class (and task) in which ``method`` did not sync, fewest changed
    arguments first: (tag, {argument: value to write}) with the value the argument must take."""
    written, _, label = tag.partition("|")
    table = variants(written)
    if label not in table:
        return []
    mine = dict(table[label][0])
    defaults = _defaults(written)
    out = []
    for other, (key, r) in table.items():
        if other == label or r.get(method, {}).get("synced") is not False:
            continue
        theirs = dict(key)
        if theirs.get("task") != mine.get("task"):
            continue
        change = {}
        for name in set(mine) | set(theirs):
            want = theirs.get(name, defaults.get(name, NOT_LITERAL))
            if want is NOT_LITERAL:
                change = None
                break
            if mine.get(name, defaults.get(name)) != want:
                change[name] = want
        if change:
            out.append((f"{written}|{other}", change))
    return sorted(out, key=lambda item: (len(item[1]), sorted(item[1].items(), key=str)))


def collection_rows() -> List[dict]:
    return [r for _, r in variants(COLLECTION).values()]


def member_calls(r: dict) -> List[Tuple[str, List[object], Dict[str, object]]]:
    """The member constructor calls of a measured MetricCollection row: (qualname, positional, keywords)."""
    call = ast.parse(r["constructor"], mode="eval").body
    first = call.args[0]
    elements = first.values if isinstance(first, ast.Dict) else first.elts
    out = []
    for el in elements:
        out.append((ast.unparse(el.func), [_literal(a) for a in el.args], {k.arg: _literal(k.value) for k in el.keywords}))
    return out


# -- loggers ---------------------------------------------------------------------------------------
def loggers() -> Dict[str, dict]:
    return load()["loggers"]


@lru_cache(maxsize=None)
def logger_class(qualname: Optional[str]) -> Optional[str]:
    """The canonical class name of a measured logger class (``...writer.SummaryWriter`` -> the first
    name of ``LOGGER_RECEIVERS``), or None."""
    for names in LOGGER_RECEIVERS.values():
        if qualname in names:
            return names[0]
    return None


SUMMARY_WRITER = LOGGER_RECEIVERS["tb"][0]


@lru_cache(maxsize=None)
def writer_methods() -> FrozenSet[str]:
    """SummaryWriter's measured logging methods (``add_scalar``...): named as no other logger
    interface names them, so a receiver of unknown type that calls one is taken for a writer."""
    return frozenset(logger_methods().get(SUMMARY_WRITER, {}))


@lru_cache(maxsize=None)
def logger_methods() -> Dict[str, Dict[str, Tuple[bool, bool]]]:
    """class -> method -> (synced with a CUDA tensor, synced with a host value), from the data."""
    out: Dict[str, Dict[str, list]] = {}
    for cid, r in loggers().items():
        receiver, _, rest = cid.partition(".")
        if receiver not in LOGGER_RECEIVERS or ":" not in rest:
            continue
        method, _, arg = rest.partition(":")
        slot = out.setdefault(LOGGER_RECEIVERS[receiver][0], {}).setdefault(method, [None, None])
        if arg == "cuda":
            slot[0] = r["synced"]
        elif arg in ("float", "cpu"):  # a host value: a Python float, or a CPU tensor
            slot[1] = r["synced"] if slot[1] is None else slot[1] or r["synced"]
    return {c: {m: (v[0], v[1]) for m, v in ms.items()} for c, ms in out.items()}


def lightning() -> Dict[str, dict]:
    return load()["lightning"]


# Lightning's Trainer, by the names user code imports it by.
LIGHTNING_TRAINERS = frozenset((
    "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer",
    "lightning.pytorch.trainer.trainer.Trainer", "pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer",
    "pytorch_lightning.trainer.trainer.Trainer",
))
# The statement of the measured rows that differ only in the Trainer's arguments.
PLAIN_LOG = "self.log('loss', loss)"


def trainer_log_every_n_steps() -> Dict[int, bool]:
    """``Trainer(log_every_n_steps=N)`` -> whether a plain ``self.log('loss', loss)`` of a GPU tensor
    made every step wait (measured with the progress bar on; N values not measured are absent)."""
    out: Dict[int, bool] = {}
    for r in lightning().values():
        trainer = r.get("trainer", {})
        if r.get("self_log") == PLAIN_LOG and trainer.get("enable_progress_bar", True):
            n = trainer.get("log_every_n_steps")
            if isinstance(n, int):
                out[n] = bool(out.get(n)) or bool(r["step_synced"])
    return out
