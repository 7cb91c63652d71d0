"""The sync catalog: its data, its loader, and the rules' claims checked against it."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchsync_lint import catalog
from torchsync_lint.cli import catalog_report as report
from torchsync_lint.rules import claims


def test_catalog_meets_the_sweep_targets():
    c = report.counts()
    assert c["tried"] >= 1200
    assert c["decided"] >= 0.8 * c["tried"]
    env = catalog.environment()
    assert env["gpu"] and env["torch"] and env["seconds"] > 0


def test_a_callable_syncs_when_one_of_its_variants_synced():
    for qual, e in catalog.entries().items():
        verdicts = [r["synced"] for r in e["variants"].values() if r["synced"] is not None]
        assert e["syncs"] == (any(verdicts) if verdicts else None), qual
        assert catalog.syncs(qual) is e["syncs"]
        for label, row in e["variants"].items():
            assert catalog.syncs(qual, label) is row["synced"]
    assert catalog.syncs("mylib.not_measured") is None
    assert catalog.syncs("torch.nonzero", "no-such-variant") is None


def test_design_facts_are_in_the_data():
    # DESIGN.md section 4, measured earlier by hand on an H200; the sweep must agree.
    assert catalog.syncs("torch.nn.functional.one_hot", "default") is True
    assert catalog.syncs("torch.nn.functional.one_hot", "num_classes=4") is False
    assert catalog.syncs("torch.histc", "default") is True
    assert catalog.syncs("torch.histc", "min=0.0,max=1.0") is False
    assert catalog.syncs("torch.bincount", "minlength=4") is True
    assert catalog.syncs("torch.distributions.Normal", "validate_args=False") is False
    assert catalog.syncs("torch.distributions.Normal", "default") is True
    assert catalog.syncs("torch.linalg.inv") is True and catalog.syncs("torch.linalg.inv_ex", "default") is False
    assert catalog.syncs("torch.Tensor.item") is True
    assert catalog.argument_dependent("torch.repeat_interleave")


def test_lists_are_sorted_and_consistent():
    syncing = catalog.syncing_callables()
    assert syncing == sorted(syncing)
    assert not set(syncing) & set(catalog.sync_free_callables())
    assert "torchvision.ops.nms" in catalog.third_party_syncs()
    assert all(not q.startswith("torch.") for q in catalog.third_party_syncs())
    for qual, label, synced in catalog.disagreements():
        assert catalog.syncs(qual, label) is synced


def test_aliases_resolve_to_catalog_names():
    assert catalog.canonical("torch.ops.torchvision.nms") == "torchvision.ops.nms"
    assert catalog.canonical("torch._C._nn.one_hot") == "torch.nn.functional.one_hot"
    assert catalog.canonical("torch.functional.unique") == "torch.unique"
    assert catalog.syncs("torchvision.ops.boxes.nms") is True
    assert catalog.canonical("torchvision.ops.giou_loss.generalized_box_iou_loss") == "torchvision.ops.generalized_box_iou_loss"
    assert catalog.canonical("mylib.ops.nms") == "mylib.ops.nms"


def test_data_file_is_deterministic_and_small():
    with open(catalog.DATA, encoding="utf-8") as fh:
        text = fh.read()
    assert len(text.encode()) < 2_000_000
    assert json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n" == text


def test_loading_the_catalog_never_imports_torch():
    code = ("import sys, torchsync_lint.catalog as c; c.syncing_callables(); "
            "from torchsync_lint.rules import claims; [claims.claimed_calls(m) for m in claims.rule_modules().values()]; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


TRUTH = Path(__file__).parent / "truth" / "sync_truth.json"

# Calls a rule claims to sync that no measurement shows syncing: neither a catalog variant nor a
# synced row of tests/truth/sync_truth.json that names the rule and calls them. Each is a debt for
# the GPU sweep (`python -m torchsync_lint.catalog.sweep`). The list is exact: a new unmeasured
# claim fails, and so does one measured since, until it is taken off.
UNMEASURED_CLAIMS = {
    # private helpers the public NMS dispatches to (the public names are measured)
    "TSL109": {"torchvision.ops._batched_nms_coordinate_trick", "torchvision.ops._batched_nms_vanilla"},
    "TSL110": {"torchvision.ops._batched_nms_coordinate_trick", "torchvision.ops._batched_nms_vanilla"},
    # legacy typed constructors with host data: `torch.cuda.FloatTensor([1.0])`
    "TSL202": {f"torch.cuda.{t}Tensor" for t in "BFloat16 Bool Byte Char Double Float Half Int Long Short".split()},
    # a CUDA tensor as a size/index argument (the truth table measures the form with zeros, arange, full,
    # randint, range, select, repeat, new_zeros: each the same `__index__` read)
    "TSL303": {"torch.Tensor." + m for m in (
        "chunk expand kthvalue new_empty new_full new_ones reshape resize_ roll select split tile topk unflatten "
        "unfold view").split()} | {"torch." + m for m in (
            "chunk empty empty_strided eye full_like kthvalue reshape roll select split topk tril_indices "
            "triu_indices ones rand randn randperm").split()} | {"torch.nn.functional.interpolate",
                                                                "torch.nn.functional.pad"},
    "TSL403": {"torch.testing.assert_allclose"},  # deprecated alias of assert_close (measured)
    "TSL404": {"torch.distributions." + n for n in (
        "ExpRelaxedCategorical LKJCholesky LogitRelaxedBernoulli MixtureSameFamily TransformedDistribution "
        "Wishart").split()},
    "TSL405": {"torch.linalg.cond"},
    "TSL406": {"torch.nn.utils.clip_grad_norm"},  # deprecated alias of clip_grad_norm_
}
# Truth-table rows that measured a claim under another family's id: (rule, call) -> row id.
TRUTH_EVIDENCE = {("TSL407", "torch.amp.GradScaler.step"): "optim-01",
                  ("TSL407", "torch.amp.GradScaler.state_dict"): "scaler-01"}
# Rules that claim no torch call (a language form: truthiness, indexing, conversions): their claim
# is measured by synced truth-table rows naming them, or by the data named here.
CLAIMS_MEASURED_ELSEWHERE = {
    "TSL112": "the calls of TSL001-TSL303 it relays (a TorchScript body syncs as Python does)",
    "TSL204": "bench/data recordings: batch .to(device) at the top of a step waits (DESIGN.md section 4)",
    "TSL409": "catalog/data/training_utils.json, metrics",
    "TSL410": "catalog/data/training_utils.json, loggers and Lightning's self.log",
    "TSL412": "bench/data recordings: flair's self.to(flair.device) in constructors and pykeen's "
              "model_instance.to(device) synced under the real workloads; the truth table's statements run "
              "in forward, where a module already moved copies nothing (row h2d-32), and a module made on "
              "the CPU and moved syncs (row h2d-25, TSL202's)",
}


def _truth_rows():
    return json.loads(TRUTH.read_text(encoding="utf-8"))


def _measured_by_truth(code, q, rows):
    name = q.rsplit(".", 1)[1]
    if (code, q) in TRUTH_EVIDENCE:
        row = next(r for r in rows if r["id"] == TRUTH_EVIDENCE[(code, q)])
        return row["synced"] and f"{name}(" in row["statement"]
    return any(r["synced"] and r.get("rule") == code and f"{name}(" in r["statement"] for r in rows)


@pytest.mark.parametrize("code", sorted(claims.rule_modules()))
def test_rule_claims_agree_with_the_measurements(code):
    """Every rule that makes a claim is checked. A call a rule flags must have synced in some
    measured variant (a catalog variant, or a synced truth-table row of the rule that calls it) or
    be listed in UNMEASURED_CLAIMS; a rule without a ``SYNC_CONDITION`` must not flag a call
    measured not to sync in any variant."""
    module = claims.rule_modules()[code]
    rows = _truth_rows()
    calls = sorted(claims.claimed_calls(module))
    if not calls:
        assert any(r["synced"] and r.get("rule") == code for r in rows) or code in CLAIMS_MEASURED_ELSEWHERE, (
            f"{code} claims no torch call and no synced truth-table row names it")
        return
    if not claims.condition(module):
        never = [q for q in calls if catalog.syncs(q) is False]
        assert not never, f"{code} flags calls measured not to sync in any variant: {never}"
    unmeasured = {q for q in calls if catalog.syncs(q) is not True and not _measured_by_truth(code, q, rows)}
    listed = UNMEASURED_CLAIMS.get(code, set())
    assert not unmeasured - listed, f"{code}: claims with no measurement that they sync: {sorted(unmeasured - listed)}"
    assert not listed - unmeasured, f"{code}: measured (or no longer claimed) since, take off the list: {sorted(listed - unmeasured)}"


def test_claims_measured_elsewhere_name_only_rules_without_truth_rows():
    rows = _truth_rows()
    for code in CLAIMS_MEASURED_ELSEWHERE:
        assert not claims.claimed_calls(claims.rule_modules()[code]), code
        assert not any(r["synced"] and r.get("rule") == code for r in rows), f"{code}: has truth rows now: drop it"
    from torchsync_lint.catalog import training_utils

    data = training_utils.load()
    assert data["counts"]["synced"] > 0 and data["metrics"] and data["loggers"]


@pytest.mark.parametrize("code", sorted(c for c, m in claims.rule_modules().items() if claims.sync_free(m)))
def test_named_alternatives_were_measured_sync_free(code):
    """Every sync-free alternative a message names ran without a sync in the measured variant."""
    module = claims.rule_modules()[code]
    text = claims.messages(module)
    for q, variant in claims.sync_free(module).items():
        assert catalog.syncs(q, variant) is False, f"{code}: {q} [{variant}] is not measured sync-free"
        assert q.rsplit(".", 1)[-1] in text, f"{code}: the message does not name {q}"


def test_rules_name_measured_alternatives():
    assert len([m for m in claims.rule_modules().values() if claims.sync_free(m)]) >= 10


def test_claims_are_read_from_rule_data():
    modules = claims.rule_modules()
    assert "torchvision.ops.nms" in claims.claimed_calls(modules["TSL109"])
    assert "torch.Tensor.nonzero" in claims.claimed_calls(modules["TSL101"])
    assert "torch.distributions.Normal" in claims.claimed_calls(modules["TSL404"])


def test_docs_catalog_is_up_to_date():
    assert report.main(["--check"]) == 0, "run: python -m torchsync_lint.cli.catalog_report"


def test_sweep_synthesises_runnable_variants_on_cpu():
    torch = pytest.importorskip("torch")
    from torchsync_lint.catalog import sweep, synth
    from torchsync_lint.catalog.recipes import ARGUMENT_RECIPES

    items = {i[0]: i for i in sweep.enumerate_callables(torch, sweep.NAMESPACES[:3])}
    oracles = sweep.Oracles(torch, "cpu")
    stubs = synth._stub_index(torch)
    one_hot = sweep.measure_callable(torch, synth, oracles, stubs, items["torch.nn.functional.one_hot"])
    assert {"default", "num_classes=4"} <= set(one_hot["variants"])
    assert all(v["how"] != "error" for v in one_hot["variants"].values())
    rep = sweep.measure_callable(torch, synth, oracles, stubs, items["torch.repeat_interleave"])
    assert "repeats=tensor" in rep["variants"] and "output_size=from_result" in rep["variants"]
    method = sweep.measure_callable(torch, synth, oracles, stubs, items["torch.Tensor.nonzero"])
    assert method["variants"]["default"]["how"] != "error"


USER_CODE = """\
import torch.nn as nn
from mylib.ops import nms


class Head(nn.Module):
    def forward(self, boxes, scores):
        return nms(boxes, scores)
"""


def _project(tmp_path, extra):
    (tmp_path / "pyproject.toml").write_text(f"[tool.torchsync-lint]\nextra-sync-calls = {extra}\n", encoding="utf-8")
    (tmp_path / "model.py").write_text("import torch\n" + USER_CODE, encoding="utf-8")
    return str(tmp_path / "model.py")


def test_extra_sync_calls_from_pyproject_are_reported(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(catalog.EXTRA_ENV, "")  # restored afterwards: load() sets it
    from torchsync_lint.cli import main

    path = _project(tmp_path, '["mylib.ops.nms"]')
    assert main(["--select", "TSL110", path]) == 1
    assert "TSL110" in capsys.readouterr().out
    path = _project(tmp_path, '["mylib.ops.other"]')
    assert main(["--select", "TSL110", path]) == 0


def test_bad_extra_sync_calls_is_one_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(catalog.EXTRA_ENV, "")  # restored afterwards: load() sets it
    from torchsync_lint.cli import main

    path = _project(tmp_path, '["not a name"]')
    assert main([path]) == 2
    err = capsys.readouterr().err
    assert "extra-sync-calls" in err and "Traceback" not in err


def test_catalog_command_rejects_a_missing_module(capsys):
    pytest.importorskip("torch")  # without it, the command says so first
    from torchsync_lint.cli import main

    assert main(["catalog", "--module", "no_such_module_xyz.ops", "--yes"]) == 2
    assert "no module named" in capsys.readouterr().err


def test_catalog_command_warns_and_needs_yes(tmp_path, capsys):
    """It runs the user's code: nothing is imported or called before the user agrees."""
    from torchsync_lint.cli import main

    (tmp_path / "sideeffects_xyz.py").write_text("open(__file__ + '.imported', 'w').close()\n")
    import sys as _sys
    _sys.path.insert(0, str(tmp_path))
    try:
        assert main(["catalog", "--module", "sideeffects_xyz"]) == 2
    finally:
        _sys.path.remove(str(tmp_path))
    err = capsys.readouterr().err
    assert "imports sideeffects_xyz" in err and "calls every\npublic callable" in err
    assert err.rstrip().endswith("Pass --yes to go ahead.")
    assert not (tmp_path / "sideeffects_xyz.py.imported").exists()


def test_catalog_command_sweeps_a_user_module(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pkg = tmp_path / "userlib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "ops.py").write_text("import torch\n\n\ndef keep_positive(x: torch.Tensor) -> torch.Tensor:\n"
                                "    return x[x > 0]\n", encoding="utf-8")
    out = tmp_path / "catalog.json"
    env = dict(__import__("os").environ, PYTHONPATH=f"{tmp_path}:{__import__('os').getcwd()}")
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "catalog", "--module", "userlib.ops", "--device", "cpu",
                           "--yes", "--out", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert list(data["entries"]) == ["userlib.ops.keep_positive"]
    assert data["entries"]["userlib.ops.keep_positive"]["variants"]["default"]["how"] != "error"
    assert "extra-sync-calls" in proc.stderr


def test_a_crashing_callable_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from torchsync_lint.catalog import sweep

    (tmp_path / "crashlib.py").write_text(
        "import os\nimport torch\n\n\ndef a_crash(x: torch.Tensor):\n    os._exit(3)\n\n\n"
        "def b_fine(x: torch.Tensor):\n    return x + 1\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{__import__('os').getcwd()}")
    entries, info = sweep.run_sweep("cpu", (("crashlib", "crashlib"),), log=lambda m: None)
    assert entries["crashlib.a_crash"]["error"].startswith("child died")
    assert info["restarted_after"] == ["crashlib.a_crash"]
    assert entries["crashlib.b_fine"]["variants"]["default"]["how"] != "error"


class _ScriptedOracles:
    """Oracles.decide with host times given by the test (ms), and a scripted debug-mode answer."""

    def __init__(self, times, warned):
        from torchsync_lint.catalog import sweep

        self.times, self.warned = list(times), warned
        self.decide = sweep.Oracles.decide.__get__(self)

    def host_time(self, fn, sleep):
        return self.times.pop(0)

    def debug_mode_warns(self, fn):
        return self.warned


@pytest.mark.parametrize("times, warned, want", [
    ([0.05, 0.05, 4.0], True, (True, "both")),  # waited for the sleep, and the debug mode warned
    ([0.05, 0.05, 0.06], False, (False, "both")),
    ([0.05, 0.05, 4.0], False, (True, "timing!debug-mode")),  # a wait the debug mode misses
    ([0.05, 0.05, 0.06], True, (False, "timing!debug-mode")),
    ([0.05, 0.05, 1.5, 1.5], True, (True, "debug-mode")),  # ambiguous twice: the debug mode decides
    ([0.05, 0.05, 1.5, 4.0], False, (True, "timing!debug-mode")),  # a host hiccup, measured again
])
def test_timing_decides_and_disagreements_are_marked(times, warned, want):
    synced, how, stall_us = _ScriptedOracles(times, warned).decide(lambda: None)
    assert (synced, how) == want
    assert stall_us >= 0


# -- argument forms (issue #9): hand-written recipes, measured per form ------------------------


def test_argument_forms_in_the_data():
    from torchsync_lint.catalog import forms

    ctc = "torch.nn.functional.ctc_loss"
    assert catalog.syncs(ctc, "lengths=cuda") is True
    assert catalog.syncs(ctc, "lengths=list") is True  # reduction='mean' copies the target lengths
    assert catalog.syncs(ctc, "lengths=list,reduction=sum") is True  # outside cuDNN: batch offsets
    assert catalog.syncs(ctc, "cudnn:targets=cpu-int32,lengths=list,reduction=sum") is False
    assert catalog.syncs(ctc, "cudnn:targets=cpu-int32,lengths=cuda,reduction=sum") is True
    pack = "torch.nn.utils.rnn.pack_padded_sequence"
    assert catalog.syncs(pack, "lengths=list,enforce_sorted=False") is True
    assert catalog.syncs(pack, "lengths=cpu,enforce_sorted=True") is False
    assert catalog.syncs("torch.repeat_interleave", "repeats=cuda:1d,output_size=int") is False
    for q in ("torch.nn.functional.embedding_bag", "torch.embedding_bag", "torch.nn.EmbeddingBag", "torch.stft",
              "torch.quantile", "torch.multinomial"):
        assert catalog.syncs(q) is False, q
    assert all(v.synced for v in forms.forms("torch.istft").variants)
    env = catalog.environment()
    assert env["recipes"]["torch"] == env["torch"] and env["recipes"]["gpu"] == env["gpu"]


def test_every_recipe_form_names_a_parameter():
    from torchsync_lint.catalog.recipes import ARGUMENT_RECIPES

    for q, recipe in ARGUMENT_RECIPES.items():
        labels = [label for label, _, _ in recipe.variants]
        assert len(labels) == len(set(labels)), q
        for label, form, _ in recipe.variants:
            for param, value in form.items():
                kind, *quals = value.split(":")
                if value.startswith("="):
                    ast.literal_eval(value[1:])
                else:
                    assert kind in ("cuda", "cpu", "list", "number", "absent"), (q, label, param, value)
                    assert all(x in ("1d", "2d", "int32", "int64") for x in quals), (q, label, param, value)
        e = catalog.entry(q)
        assert e is not None and e["recipe"]["params"] == list(recipe.params), q
        assert set(labels) <= set(e["variants"]), q


def test_forms_decide_a_call_from_the_measured_forms():
    from torchsync_lint.catalog.forms import ABSENT, CPU, CUDA, LIST, LITERAL, TENSOR, Observed, decide, forms

    ctc = forms("torch.nn.functional.ctc_loss")
    unknown = {p: Observed(None) for p in ("targets", "input_lengths", "target_lengths")}
    assert decide(ctc, unknown)[0] is True  # reduction='mean' (the default): every form synced
    total = dict(unknown, reduction=Observed(LITERAL, "sum"))
    assert decide(ctc, total)[0] is None  # cuDNN's form possible, the others synced
    assert decide(ctc, dict(total, input_lengths=Observed(CUDA), target_lengths=Observed(CUDA)))[0] is True
    cudnn = dict(total, targets=Observed(CPU, dtype="int", ndim=1), input_lengths=Observed(LIST),
                 target_lengths=Observed(LIST))
    synced, variant = decide(ctc, cudnn)
    assert synced is False and variant.label.startswith("cudnn:")
    assert decide(ctc, dict(cudnn, targets=Observed(CUDA)))[0] is True
    assert decide(ctc, dict(cudnn, targets=Observed(TENSOR)))[0] is None  # device unknown: either form
    pack = forms("torch.nn.utils.rnn.pack_padded_sequence")
    assert decide(pack, {"lengths": Observed(LIST)})[0] is False  # enforce_sorted defaults to True
    lengths = {"lengths": Observed(None)}
    assert decide(pack, dict(lengths, enforce_sorted=Observed(LITERAL, False)))[0] is True
    assert decide(pack, dict(lengths, enforce_sorted=Observed(None)))[0] is None
    assert decide(pack, dict(lengths, enforce_sorted=Observed(ABSENT)))[0] is False
    assert decide(pack, {})[0] is None  # no lengths passed: no measured form


def test_merge_adds_recipe_variants_and_keeps_the_rest():
    from torchsync_lint.catalog import sweep

    env = {"torch": "2.11", "gpu": "H100", "seconds": 1.0}
    current = {"format": 1, "environment": dict(env), "entries": {
        "torch.a": {"syncs": False, "variants": {"default": {"args": "x", "synced": False, "how": "both"}}},
        "torch.b": {"syncs": None, "variants": {}, "error": "ValueError: no"},
    }}
    measured = {"environment": dict(env, seconds=2.0), "entries": {
        "torch.a": {"variants": {"x=cuda": {"args": "y", "synced": True, "how": "both", "form": {"x": "cuda"}}},
                    "recipe": {"params": ["x"], "defaults": {}}},
        "torch.b": {"variants": {"x=list": {"args": "z", "synced": False, "how": "both", "form": {"x": "list"}}},
                    "recipe": {"params": ["x"], "defaults": {}}},
    }}
    out = sweep.merge(current, measured)
    a, b = out["entries"]["torch.a"], out["entries"]["torch.b"]
    assert set(a["variants"]) == {"default", "x=cuda"} and a["syncs"] is True and a["argument_dependent"]
    assert b["syncs"] is False and "error" not in b and b["synth_error"] == "ValueError: no"
    assert out["environment"]["seconds"] == 1.0 and out["environment"]["recipes"]["seconds"] == 2.0
    with pytest.raises(ValueError):
        sweep.merge(current, dict(measured, environment=dict(env, torch="2.12")))


def test_recipes_run_on_cpu():
    torch = pytest.importorskip("torch")
    from torchsync_lint.catalog import sweep, synth
    from torchsync_lint.catalog.recipes import ARGUMENT_RECIPES

    oracles = sweep.Oracles(torch, "cpu")
    for q in ("torch.nn.functional.ctc_loss", "torch.nn.CTCLoss", "torch.nn.utils.rnn.pack_padded_sequence",
              "torch.Tensor.istft", "torch.embedding_bag"):
        entry = sweep.measure_recipe(torch, synth, oracles, q)
        assert set(entry["variants"]) == {label for label, _, _ in ARGUMENT_RECIPES[q].variants}
        errors = {k: v["error"] for k, v in entry["variants"].items() if v["how"] == "error"}
        assert not errors, (q, errors)
        assert all(v["form"] for v in entry["variants"].values())
