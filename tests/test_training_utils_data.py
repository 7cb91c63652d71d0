"""The training-utilities measurements (bench/measure_training_utils.py on a GPU) and the claims of
the rules that read them: TSL409 (torchmetrics), TSL410 (loggers, Lightning's self.log), TSL006."""

import json
import re
import subprocess
import sys

import pytest

from torchsync_lint.catalog import training_utils as data
from torchsync_lint.rules import tsl409_metric_sync as tsl409
from torchsync_lint.rules import tsl410_logger_gpu_tensor as tsl410

# The metrics issue #9 asked for, by the class user code names.
REQUIRED = (
    "torchmetrics.MeanMetric", "torchmetrics.SumMetric", "torchmetrics.MaxMetric", "torchmetrics.MinMetric",
    "torchmetrics.CatMetric", "torchmetrics.aggregation.RunningMean", "torchmetrics.Accuracy", "torchmetrics.F1Score",
    "torchmetrics.Precision", "torchmetrics.Recall", "torchmetrics.AUROC", "torchmetrics.ConfusionMatrix",
    "torchmetrics.MeanSquaredError", "torchmetrics.MeanAbsoluteError", "torchmetrics.R2Score",
    "torchmetrics.PearsonCorrCoef", "torchmetrics.MetricCollection",
)


def _tags():
    for written in data.metrics():
        for label in data.variants(written):
            yield f"{written}|{label}"


def test_measured_on_a_gpu_with_versions():
    env = data.environment()
    assert env["gpu"].startswith("NVIDIA"), env["gpu"]
    for package in ("torch", "torchmetrics", "tensorboard", "lightning"):
        assert re.match(r"^\d+\.\d+", env[package] or ""), package
    assert "sleep" in env["method"]


def test_every_required_metric_and_method_was_decided():
    for written in REQUIRED:
        rows = data.metrics()[written]["variants"]
        assert rows, written
        for label, row in rows.items():
            assert "error" not in row, f"{written} [{label}]: {row.get('error')}"
            for method in data.METHODS:
                assert isinstance(row[method]["synced"], bool), f"{written} [{label}] {method}"
                assert row[method]["how"] in ("both", "timing!debug-mode", "debug-mode")
    assert data.load()["counts"]["undecided"] == 0
    tasks = {dict(k).get("task") for k, _ in data.variants("torchmetrics.AUROC").values()}
    assert {"binary", "multiclass"} <= tasks


def test_data_file_is_deterministic():
    with open(data.DATA, encoding="utf-8") as fh:
        text = fh.read()
    assert json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n" == text
    assert len(text.encode()) < 500_000


def test_loading_never_imports_torch():
    code = ("import sys; from torchsync_lint.catalog import training_utils as d; "
            "d.metric_variant('torchmetrics.MeanMetric', [], {}); d.logger_methods(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_each_measured_variant_matches_its_own_constructor():
    for tag in _tags():
        written, _, label = tag.partition("|")
        if written == data.COLLECTION:
            continue
        key, row = data.variants(written)[label]
        matched = data.metric_variant(written, [], dict(key))
        assert matched is not None, tag
        if matched != tag:  # the same arguments measured twice (one spelled its default out): same answers
            assert all(data.syncs(matched, m) == data.syncs(tag, m) for m in data.METHODS), (tag, matched)


# -- TSL409 --------------------------------------------------------------------------------------
def test_reset_never_synced_so_tsl409_does_not_flag_it():
    assert "reset" not in tsl409.METRIC_METHODS
    assert all(data.syncs(tag, "reset") is False for tag in _tags() if not tag.startswith(data.COLLECTION))


def test_tsl409_flags_exactly_the_measured_syncs():
    flagged = 0
    for tag in _tags():
        if tag.startswith(data.COLLECTION):
            continue
        for method in tsl409.METRIC_METHODS:
            got = tsl409.advice(tag, method)
            assert (got is not None) == (data.syncs(tag, method) is True), (tag, method)
            flagged += got is not None
    assert flagged >= 20


def test_tsl409_names_only_measured_sync_free_alternatives():
    named = 0
    for tag in _tags():
        if tag.startswith(data.COLLECTION):
            continue
        for method in tsl409.METRIC_METHODS:
            got = tsl409.advice(tag, method)
            if got is None or got[1] is None:
                continue
            other, other_method = got[1]
            assert data.syncs(other, other_method) is False, f"{tag} {method}: names {other} {other_method}"
            assert other.split("|")[0] == tag.split("|")[0]
            for name, _ in dict(data.variants(other.split("|")[0])[other.split("|")[1]][0]).items():
                if name not in dict(data.variants(tag.split("|")[0])[tag.split("|")[1]][0]):
                    assert f"`{name}=" in got[0], f"{tag}: the advice does not name {name}"
            named += 1
    assert named >= 15


def test_known_answers():
    """Facts the rule's docstring states, as measured."""
    def tag(written, **kw):
        t = data.metric_variant(written, [], kw)
        assert t is not None, (written, kw)
        return t

    for agg in ("MeanMetric", "SumMetric", "MaxMetric", "MinMetric", "CatMetric"):
        assert data.syncs(tag(f"torchmetrics.{agg}"), "update") is True
        assert data.syncs(tag(f"torchmetrics.{agg}", nan_strategy="disable"), "update") is False
    mc = "torchmetrics.classification.MulticlassAccuracy"
    assert data.syncs(tag(mc), "update") is True  # average="macro": bincount
    assert data.syncs(tag(mc, validate_args=False), "update") is True
    assert data.syncs(tag(mc, average="micro"), "update") is False
    assert data.syncs(tag("torchmetrics.Accuracy", task="multiclass"), "update") is False  # the wrapper's "micro"
    assert data.syncs(tag("torchmetrics.Accuracy", task="binary"), "update") is True
    assert data.syncs(tag("torchmetrics.Accuracy", task="binary", validate_args=False), "update") is False
    assert data.syncs(tag("torchmetrics.R2Score"), "update") is False
    assert data.syncs(tag("torchmetrics.R2Score"), "compute") is True
    assert all(data.syncs(t, "update") for t in _tags() if "ConfusionMatrix" in t)


def test_collection_syncs_exactly_when_a_member_does():
    rows = data.collection_rows()
    assert len(rows) >= 4
    decided = 0
    for row in rows:
        # a member variant measured on its own, or None (then only a syncing sibling decides)
        members = [data.metric_variant(data.metric_group(q), pos, kw) for q, pos, kw in data.member_calls(row)]
        for method in tsl409.METRIC_METHODS:
            got = tsl409.collection_syncs(members, method)
            if got is not None:
                assert got is row[method]["synced"], (row["constructor"], method)
                decided += 1
    assert decided >= 2 * len(rows)  # two rows have a member measured only inside the collection


# -- TSL410 and TSL006 ---------------------------------------------------------------------------
def test_tsl410_logger_methods_sync_with_gpu_tensors_only():
    methods = data.logger_methods()
    seen = set()
    for cls, by_method in methods.items():
        for method, (cuda, host) in by_method.items():
            assert cuda is True and host is False, (cls, method)
            seen.add(method)
    assert seen == set(data.LOGGER_VALUE_ARGS)
    assert data.loggers()["tb.add_scalar:cuda-detach"]["synced"] is True  # the message's advice: detach is no fix


def test_tsl410_lightning_claims():
    rows = data.lightning()
    for method, (_, synced_row, free_row) in tsl410.LIGHTNING_LOG.items():
        assert rows[synced_row]["step_synced"] is True, synced_row
        assert rows[free_row]["step_synced"] is False, free_row
        assert rows[synced_row]["log_call_synced"] is False  # the wait is after the step, not in the call
    assert rows["no-log"]["step_synced"] is False  # the loop itself does not sync
    assert rows["log:on_epoch"]["step_synced"] is False
    assert rows["log:prog_bar_no_progress_bar"]["step_synced"] is True  # the docstring: even without a bar
    assert rows["log:every_step_logger"]["step_synced"] is True  # Trainer(log_every_n_steps=1)


def test_tsl006_formatting_claims():
    rows = data.loggers()
    for cid in ("print:cuda", "fstring:cuda", "str:cuda"):
        assert rows[cid]["synced"] is True, cid
    assert rows["print:float"]["synced"] is False


@pytest.mark.parametrize("qualname", [
    "torchmetrics.classification.accuracy.MulticlassAccuracy", "torchmetrics.aggregation.MeanMetric",
    "torchmetrics.classification.Accuracy", "torchmetrics.collections.MetricCollection",
])
def test_public_import_paths_resolve(qualname):
    assert data.metric_group(qualname) is not None


def test_tsl410_trainer_claims():
    table = data.trainer_log_every_n_steps()
    assert table[1] is True  # every step waited
    assert table[50] is False  # Lightning's default: it did not
    assert "default of 50" in tsl410.TRAINER_MESSAGE
