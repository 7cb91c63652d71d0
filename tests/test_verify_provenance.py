"""Issue 19 on the CPU: input provenance (observed / inferred / guessed) in verdicts and the summary,
devices from CPU defaults, ``self.device`` as a device, recorded inputs (record -> replay), the
SystemError fallback, and trace's set-up split. The GPU side is tests/gpu/test_provenance_gpu.py."""

import json
import textwrap
from pathlib import Path

import pytest

from torchsync_lint.config import Config
from torchsync_lint.finding import Finding
from torchsync_lint.run.tree import lint_paths
from torchsync_lint.verify import snippet
from torchsync_lint.verify.snippet import extract_file
from torchsync_lint.verify.status import Evidence, decide, definite, summary_line
from torchsync_lint.cli import trace as trace_cli

SOURCE = textwrap.dedent("""\
    import torch
    from torch import nn


    def draw(shape, device=None):
        noise = torch.rand(shape, device=device)
        return noise[noise > 0.5]


    def anywhere(x, device):
        return torch.zeros(3, device=device)[x.argmax()]


    class Box(nn.Module):
        def forward(self, x):
            return torch.zeros(4, device=self.device)[x.argmax()]
""")


def finding(line, text, code="TSL101"):
    src = SOURCE.splitlines()[line - 1]
    col = src.index(text) + 1
    return Finding("m.py", line, col, line, col + len(text), code, "n", "m")


def extract(tmp_path, items, recorded=()):
    path = tmp_path / "provmod.py"
    path.write_text(SOURCE)
    return extract_file(str(path), list(enumerate(items)), (), list(recorded)), str(path)


def test_a_device_parameter_no_call_reaches_keeps_its_default_as_a_guess(tmp_path):
    out, _ = extract(tmp_path, [finding(6, "torch.rand(shape, device=device)")])
    spec = out[0].specs["device"]
    assert spec["kind"] == "expr" and spec["src"] == "None" and spec["default"] and spec["guess"]


def test_a_device_every_call_leaves_out_is_the_cpu_inferred(tmp_path):
    path = tmp_path / "leftout.py"
    path.write_text(textwrap.dedent("""\
        import torch


        def draw(shape, device=None):
            noise = torch.rand(shape, device=device)
            return noise[noise > 0.5]


        def use():
            return draw(4)
    """))
    src = path.read_text().splitlines()[4]
    text = "torch.rand(shape, device=device)"
    col = src.index(text) + 1
    f = Finding(str(path), 5, col, 5, col + len(text), "TSL101", "n", "m")
    spec = extract_file(str(path), [(0, f)], (), [])[0].specs["device"]
    assert spec.get("device") == "cpu" and not spec.get("guess")


def test_a_device_without_default_is_a_device_not_a_tensor(tmp_path):
    out, _ = extract(tmp_path, [finding(11, "x.argmax()")])
    assert "device" in out[0].specs["device"].get("roles", [])


def test_self_device_is_a_device_on_the_stand_in(tmp_path):
    out, _ = extract(tmp_path, [finding(16, "x.argmax()")])
    attrs = out[0].self_spec["attrs"]
    assert attrs["device"]["spec"]["kind"] == "device"


def test_recorded_arguments_replace_synthesis(tmp_path):
    rec = {"path": "", "name": "anywhere", "first_line": 10, "last_line": 11,
           "args": {"x": {"kind": "tensor", "device": "cpu", "dtype": "float32", "shape": [5]},
                    "device": {"kind": "device", "device": "cpu"}}}
    out, _ = extract(tmp_path, [finding(11, "x.argmax()")], [dict(rec, path=str(tmp_path / "provmod.py"))])
    specs = out[0].specs
    assert specs["x"]["kind"] == "observed" and specs["x"]["desc"]["device"] == "cpu"
    assert specs["device"]["kind"] == "observed"


def test_provenance_in_records_and_summary():
    confirmed_guess = decide(Evidence(mode="snippet", timing_syncs=1, ran=True, guessed=["device"]))
    assert confirmed_guess["status"] == "confirmed" and confirmed_guess["inputs"] == "guessed"
    assert "on guessed inputs (device)" in confirmed_guess["reason"] and not definite(confirmed_guess)
    observed = decide(Evidence(mode="snippet", timing_syncs=1, ran=True, observed=["x"]))
    assert observed["inputs"] == "observed" and definite(observed) and "observed inputs (x)" in observed["reason"]
    inferred = decide(Evidence(mode="snippet", timing_syncs=0, ran=True))
    assert inferred == {**inferred, "status": "refuted", "inputs": "inferred"}
    entry = decide(Evidence(mode="entry", timing_syncs=1, ran=True))
    assert "inputs" not in entry
    refuted_guess = decide(Evidence(mode="snippet", timing_syncs=0, ran=True, guessed=["device"]))
    assert refuted_guess["status"] == "refuted" and refuted_guess["inputs"] == "guessed"
    assert "not counted as refuted" in refuted_guess["reason"] and not definite(refuted_guess)
    line = summary_line([confirmed_guess, observed, inferred, refuted_guess])
    assert line.startswith("verify: 4 finding(s): 1 confirmed, 1 confirmed on guessed inputs, 1 refuted, "
                           "1 refuted on guessed inputs, 0 inconclusive, 50% definite")
    assert "1 observed, 1 inferred" in line


def test_every_output_format_says_guessed(tmp_path, capsys):
    from torchsync_lint.cli.output import render

    f = Finding("m.py", 6, 1, 6, 5, "TSL101", "n", "m")
    f.verify = decide(Evidence(mode="snippet", timing_syncs=1, ran=True, guessed=["device"]))
    for fmt in ("text", "json", "sarif", "github"):
        assert "guessed" in render(fmt, [f], []), fmt


def test_describe_and_replay_round_trip():
    torch = pytest.importorskip("torch")
    from torchsync_lint.guard.inputs import describe
    from torchsync_lint.verify.synth import Plan, Synth

    values = {"mask": torch.rand(40) > 0.7, "idx": torch.tensor([3, 1, 2]), "big": torch.randint(2, 9, (100,)),
              "d": torch.device("cpu"), "n": 5, "xs": [torch.ones(2), 1.5], "m": {"a": torch.zeros(2, 3)}}
    synth = Synth(torch, Plan((4, 10)), "cpu")
    for name, v in values.items():
        desc = json.loads(json.dumps(describe(torch, v)))
        got = synth.observed_value(desc, name)
        if isinstance(v, torch.Tensor):
            assert got.shape == v.shape and got.dtype == v.dtype and got.device.type == "cpu"
    assert synth.observed_value(describe(torch, values["idx"])).tolist() == [3, 1, 2]
    big = synth.observed_value(describe(torch, values["big"]))
    assert int(big.min()) >= 2 and int(big.max()) <= 8


def test_the_recorder_keeps_first_entries_of_target_functions_only(tmp_path):
    torch = pytest.importorskip("torch")
    import importlib.util

    from torchsync_lint.guard.inputs import InputRecorder, load

    path = tmp_path / "recmod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("recmod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rec = InputRecorder({str(path): [11]})
    rec.start()
    try:
        mod.anywhere(torch.arange(3.0), "cpu")
        mod.anywhere(torch.arange(2.0), "cpu")  # second entry: not recorded
        mod.draw((2,))  # holds no target line
    finally:
        rec.stop()
    out = tmp_path / "inputs.json"
    rec.save(str(out))
    funcs = load(str(out))
    assert [f["name"] for f in funcs] == ["anywhere"]
    assert funcs[0]["args"]["x"]["shape"] == [3] and funcs[0]["args"]["device"]["value"] == "cpu"


def test_trace_reports_setup_apart_and_counts_steady_steps_only(tmp_path):
    data = {"steps": 6, "warmup": 2, "warmup_syncs": 4, "setup_syncs": 1, "main_file": None, "sites": [
        {"path": str(tmp_path / "t.py"), "line": 3, "function": "f", "op": "Tensor.item", "code": "TSL001",
         "count": 8, "stall_us": 80.0, "oracles": [], "allowed": False}],
        "setup_sites": [{"path": str(tmp_path / "t.py"), "line": 1, "function": "<module>", "op": "Module.to",
                         "code": "TSL900", "count": 1, "stall_us": 5.0, "oracles": [], "allowed": False,
                         "phase": "setup"}]}
    sites, not_seen = trace_cli.join(data, [])
    text = trace_cli.render_text(data, sites, not_seen)
    assert "4 in the steady state" in text and "1 in set-up before the first step" in text
    row = next(ln for ln in text.splitlines() if "t.py:3" in ln)
    assert row.split()[2] == "2.0"  # 8 syncs over 4 steady steps
    assert "set-up and warm-up" in text and "setup" in text.split("set-up and warm-up")[1]
    doc = json.loads(trace_cli.render_json(data, sites, not_seen))
    assert doc["steady_steps"] == 4 and doc["setup_sites"][0]["phase"] == "setup"


def test_a_systemerror_from_a_hook_is_not_the_users():
    from torchsync_lint.verify.harness import hook_artifact

    assert hook_artifact(SystemError("error return without exception set"))
    assert not hook_artifact(SystemError("other")) and not hook_artifact(ValueError("error return without"))


LOCALS_SOURCE = textwrap.dedent("""\
    import torch


    def tokens(mapped, k: int, label):
        h, r, t = mapped.t()
        pairs = torch.stack([h, r], dim=1).unique(dim=0)
        return pairs, f"{label}_id"
""")


def test_locals_of_a_function_whose_observed_tensors_were_all_on_the_cpu_are_on_the_cpu(tmp_path):
    path = tmp_path / "locmod.py"
    path.write_text(LOCALS_SOURCE)
    line = 6
    text = "torch.stack([h, r], dim=1).unique(dim=0)"
    col = LOCALS_SOURCE.splitlines()[line - 1].index(text) + 1
    f = Finding(str(path), line, col, line, col + len(text), "TSL102", "n", "m")
    rec = {"path": str(path), "name": "tokens", "first_line": 4, "last_line": 7,
           "args": {"mapped": {"kind": "tensor", "device": "cpu", "dtype": "int64", "shape": [9, 3]},
                    "k": {"kind": "literal", "value": 2}}}
    plain = extract_file(str(path), [(0, f)], (), [])[0]
    assert not plain.specs["h"].get("device")  # nothing observed: inference alone, device unknown
    replay = extract_file(str(path), [(0, f)], (), [rec])[0]
    assert replay.specs["h"]["device"] == "cpu" and replay.specs["r"]["device"] == "cpu"
    assert any("taken from the observed inputs" in n for n in replay.notes)
    mixed = dict(rec, args=dict(rec["args"], k={"kind": "tensor", "device": "cuda", "shape": []}))
    assert not extract_file(str(path), [(0, f)], (), [mixed])[0].specs["h"].get("device")


def test_a_name_only_formatted_into_an_f_string_is_text(tmp_path):
    from torchsync_lint.verify.synth import Plan, Synth

    path = tmp_path / "locmod.py"
    path.write_text(LOCALS_SOURCE)
    line = 7
    text = 'f"{label}_id"'
    col = LOCALS_SOURCE.splitlines()[line - 1].index(text) + 1
    f = Finding(str(path), line, col, line, col + len(text), "TSL102", "n", "m")
    spec = extract_file(str(path), [(0, f)], (), [])[0].specs["label"]
    assert "formatted" in spec.get("roles", [])
    torch = pytest.importorskip("torch")
    synth = Synth(torch, Plan(base=(4,)), "cpu")
    assert isinstance(synth.value(spec, "label"), str) and "label" in synth.guessed


def test_recording_targets_include_the_project_runs_findings(tmp_path):
    from torchsync_lint.guard.inputs import targets_for

    path = tmp_path / "plain.py"
    path.write_text("def f(x):\n    return x + 1\n")
    assert targets_for([str(path)]) == {}
    got = targets_for([str(path)], [Finding(str(path), 2, 5, 2, 10, "TSL001", "n", "m")])
    assert got == {str(path.resolve()): [2]}


def test_synthesis_survives_a_library_that_set_another_default_device():
    """deepxde sets a CUDA default device on import: the synthesised values' CPU generators must
    still work (they failed with "Expected a 'cuda' device type for generator but found 'cpu'")."""
    torch = pytest.importorskip("torch")
    from torchsync_lint.verify.synth import Plan, Synth

    if not hasattr(torch, "get_default_device"):
        pytest.skip("torch without set_default_device")
    before = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        synth = Synth(torch, Plan(base=(4,)), "cpu")
        for spec in ({"kind": "tensor"}, {"kind": "tensor", "dtype": "int"}, {"kind": "tensor", "dtype": "bool"},
                     {"kind": "observed", "desc": {"kind": "tensor", "device": "cpu", "dtype": "int64", "shape": [3],
                                                   "min": 0, "max": 2}}):
            assert synth.value(spec, "x").device.type == "cpu"
    finally:
        torch.set_default_device(before)


REBOUND_SOURCE = textwrap.dedent("""\
    import torch


    def mean(x, k):
        y = x.sum().item()
        x = torch.mean(x.float())
        return x.item() if x.numel() == k else x


    def looped(x):
        for _ in range(3):
            z = x.sum().item()
            x = x[1:]
        return z
""")


def test_a_parameter_bound_again_before_the_statement_is_not_its_recorded_value(tmp_path):
    """The recording saw the parameter on entry; after ``x = torch.mean(x...)`` the statement reads
    another value (monai's NormalizeIntensity._mean: replaying the entry's 32768 values skipped the
    ``.item()`` that the real run made on the mean)."""
    path = tmp_path / "rebound.py"
    path.write_text(REBOUND_SOURCE)
    lines = REBOUND_SOURCE.splitlines()

    def at(line, text):
        col = lines[line - 1].index(text) + 1
        return Finding(str(path), line, col, line, col + len(text), "TSL001", "n", "m")

    x = {"kind": "tensor", "device": "cuda", "dtype": "float32", "shape": [32768]}
    recs = [{"path": str(path), "name": "mean", "first_line": 4, "last_line": 7,
             "args": {"x": x, "k": {"kind": "literal", "value": 1}}},
            {"path": str(path), "name": "looped", "first_line": 10, "last_line": 14, "args": {"x": x}}]
    out = extract_file(str(path), [(0, at(5, "x.sum().item()")), (1, at(7, "x.item()")),
                                   (2, at(12, "x.sum().item()"))], (), recs)
    assert out[0].specs["x"]["kind"] == "observed"  # before the new binding: the entry's value
    assert out[1].specs["x"]["kind"] != "observed"  # after it: inference, on the recorded device
    assert out[1].specs["x"].get("device") == "cuda"
    assert out[1].specs["k"]["kind"] == "observed"  # never bound again
    assert out[2].specs["x"]["kind"] != "observed"  # bound again later in the loop around it


HOST_DATA_SOURCE = textwrap.dedent("""\
    import torch


    def scale(sigma, x: torch.Tensor):
        a = torch.as_tensor(sigma, dtype=torch.float, device=x.device)
        b = torch.tensor([0.5, 2.0])
        c = x.new_tensor([1.0])
        return float(a) + float(b) + float(c)
""")


def test_host_data_copied_to_a_device_inference_cannot_name_is_not_the_cpu(tmp_path):
    """``torch.as_tensor(data, device=x.device)`` and ``x.new_tensor(data)`` follow ``x``, wherever
    it is (monai's gaussian_1d: ``float(sigma)`` synced on the GPU, the CPU stand-in refuted it);
    ``torch.tensor(data)`` with no device is on the CPU."""
    path = tmp_path / "hostdata.py"
    path.write_text(HOST_DATA_SOURCE)
    line = 8
    src = HOST_DATA_SOURCE.splitlines()[line - 1]
    items = []
    for i, name in enumerate("abc"):
        text = f"float({name})"
        col = src.index(text) + 1
        items.append((i, Finding(str(path), line, col, line, col + len(text), "TSL004", "n", "m")))
    out = extract_file(str(path), items, (), [])
    assert out[0].specs["a"]["kind"] == "tensor" and not out[0].specs["a"].get("device")
    assert out[0].specs["b"]["device"] == "cpu"
    assert out[0].specs["c"]["kind"] == "tensor" and not out[0].specs["c"].get("device")



def test_a_list_of_host_batch_parts_is_synthesised_as_host_tensors():
    """A list whose members inference knows (``labels.append(target)`` over a loader: parts of
    host batches) is synthesised with such members: CPU tensors, not the GPU tensors of a list of
    unknown members (with those, the copy a TSL202 finding names never happened: refuted)."""
    from torchsync_lint.inference.values import BATCH, CUDA, LIST, Value
    from torchsync_lint.verify.specs import value_spec

    assert value_spec(Value(LIST, item=Value(BATCH))) == {"kind": "list", "elt": {"kind": "tensor", "device": "cpu"}}
    assert value_spec(Value(BATCH, device=CUDA)) == {"kind": "tensor", "device": "cuda"}


def test_an_instance_with_known_fields_stands_in_with_those_fields():
    """A dataclass instance whose constructor call inference read (`Selection(keep=mask, best=i)`)
    stands in as an object with those fields, each made from its own spec, not as one tensor."""
    torch = pytest.importorskip("torch")
    from torchsync_lint.inference.values import OBJECT, Value, tensor
    from torchsync_lint.verify.specs import value_spec
    from torchsync_lint.verify.synth import Plan, Synth

    sel = Value(OBJECT, cls="pkg.Selection", keys=(("keep", tensor(dtype="bool")),
                                                   ("best", tensor(dtype="int").with_(zero_dim=True, ndim=0))))
    spec = value_spec(sel)
    assert spec["kind"] == "fields" and spec["fields"]["keep"]["dtype"] == "bool"
    made = Synth(torch, Plan((4, 10)), "cpu").value(spec, "sel")
    assert made.keep.dtype == torch.bool and made.best.dtype in (torch.int64, torch.int32)
    assert value_spec(Value(OBJECT, cls="pkg.Plain"))["kind"] == OBJECT  # nothing known: as before


def test_the_extraction_reads_values_with_the_lints_project():
    """``make_scale(f, device=None)``: left out in its own file, but another file passes a device
    nobody can name. On its own the file says the CPU; with the lint's project, the default is a guess."""
    root = Path(__file__).parent / "projects" / "device_defaults"
    path = str(root / "tskit" / "core.py")
    line = next(i for i, t in enumerate(open(path).read().splitlines(), 1) if "def make_scale" in t) + 2
    text = "torch.as_tensor(factors, device=device)"
    col = open(path).read().splitlines()[line - 1].index(text) + 1
    f = Finding(path, line, col, line, col + len(text), "TSL202", "n", "m")
    alone = extract_file(path, [(0, f)], (), [])[0].specs["device"]
    result = lint_paths([str(root)], Config(), jobs=1)
    assert result.interfaces and "tskit.core" in result.interfaces
    snippet.use_project(result.interfaces)
    try:
        together = extract_file(path, [(0, f)], (), [])[0].specs["device"]
    finally:
        snippet.use_project(None)
    assert alone.get("device") == "cpu" and not alone.get("guess")
    assert together.get("guess") and together.get("src") == "None"
