"""Issue 19 on the CPU: input provenance (observed / inferred / guessed) in verdicts and the summary,
devices from CPU defaults, ``self.device`` as a device, recorded inputs (record -> replay), the
SystemError fallback, and trace's set-up split. The GPU side is tests/gpu/test_provenance_gpu.py."""

import json
import textwrap

import pytest

from torchsync_lint.finding import Finding
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


def test_a_device_parameter_with_a_cpu_default_is_the_cpu_and_inferred(tmp_path):
    out, _ = extract(tmp_path, [finding(6, "torch.rand(shape, device=device)")])
    spec = out[0].specs["device"]
    assert spec["kind"] == "expr" and spec["src"] == "None" and spec["default"]


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
    line = summary_line([confirmed_guess, observed, inferred])
    assert line.startswith("verify: 3 finding(s): 1 confirmed, 1 confirmed on guessed inputs, 1 refuted, "
                           "0 inconclusive, 67% definite")
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
