"""The generated tensordict facts: right on known answers, read without tensordict, fresh where
the recorded tensordict is installed (the regeneration check skips elsewhere, as in CI)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from torchsync_lint.inference import containers


def _data() -> dict:
    with open(containers.DATA_PATH) as fh:
        return json.load(fh)


def test_known_answers():
    data = _data()
    assert {"tensordict.TensorDict", "tensordict.TensorDictBase", "tensordict.base.TensorDictBase"} <= set(
        data["classes"])
    methods = data["methods"]
    assert methods["get"] == "item" and methods["pop"] == "item"
    assert methods["to"] == methods["clone"] == methods["select"] == "container"
    assert methods["any"] == methods["all"] == "bool"
    assert methods["numel"] == "int"
    assert methods["split"] == "containers"
    assert data["properties"]["batch_size"] == "size" and data["properties"]["device"] == "device"


def test_read_without_tensordict():
    code = ("import sys; from torchsync_lint.inference import containers as c; "
            "assert c.is_container_class('tensordict.TensorDict'); assert 'tensordict' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fresh_for_the_recorded_tensordict():
    tensordict = pytest.importorskip("tensordict")
    recorded = _data()["tensordict_version"]
    if tensordict.__version__ != recorded:
        pytest.skip(f"tensor_containers.json is for tensordict {recorded}, installed is {tensordict.__version__}")
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint.inference.data.generate_tensor_containers",
                           "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
