"""The generated torch API facts: fresh for the pinned torch, right on known answers, torch-free to read."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from torchsync_lint.inference import torch_facts as tf
from torchsync_lint.inference.data.annotations import AliasTable, Classifier

DATA = tf.DATA_PATH


def _torch_or_skip():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed: cannot regenerate torch_api.json to check it")
    recorded = tf.torch_version()
    if torch.__version__ != recorded:
        pytest.skip(f"torch_api.json is for torch {recorded}, installed is {torch.__version__}")
    with open(DATA, encoding="utf-8") as f:
        versions = json.load(f)["excluded_with"]
    for name, version in versions.items():
        module = pytest.importorskip(name, reason=f"{name} decides which Tensor methods are tensor-only")
        if module.__version__ != version:
            pytest.skip(f"torch_api.json was made with {name} {version}, installed is {module.__version__}")
    return torch


@pytest.fixture(scope="module")
def regenerated() -> str:
    _torch_or_skip()
    from torchsync_lint.inference.data import generate_torch_api

    return generate_torch_api.dumps(generate_torch_api.build())


# -- (a) staleness ---------------------------------------------------------------------------------
def test_data_file_is_what_the_generator_writes_for_the_installed_torch(regenerated):
    with open(DATA, encoding="utf-8") as f:
        on_disk = json.load(f)
    fresh = json.loads(regenerated)
    stale = sorted(k for k in set(fresh["api"]) | set(on_disk["api"]) if fresh["api"].get(k) != on_disk["api"].get(k))
    assert not stale, ("torch_api.json is stale or was edited by hand; rerun "
                       f"`python -m torchsync_lint.inference.data.generate_torch_api` (first: {stale[:5]})")
    assert fresh == on_disk


def test_check_mode_fails_on_a_hand_edited_copy(regenerated, tmp_path, monkeypatch, capsys):
    from torchsync_lint.inference.data import generate_torch_api

    monkeypatch.setattr(generate_torch_api, "build", lambda: json.loads(regenerated))
    good = tmp_path / "good.json"
    good.write_text(regenerated, encoding="utf-8")
    assert generate_torch_api.main(["--check", "--output", str(good)]) == 0
    edited = json.loads(regenerated)
    edited["api"]["torch.nonzero"]["returns"] = {"kind": "int"}
    bad = tmp_path / "bad.json"
    bad.write_text(generate_torch_api.dumps(edited), encoding="utf-8")
    assert generate_torch_api.main(["--check", "--output", str(bad)]) == 1
    assert "stale" in capsys.readouterr().err


def test_generation_is_deterministic(regenerated):
    from torchsync_lint.inference.data import generate_torch_api

    assert generate_torch_api.dumps(generate_torch_api.build()) == regenerated


def test_data_file_is_small_and_records_its_torch():
    assert os.path.getsize(DATA) < 1_500_000
    assert tf.torch_version()
    assert tf.data()["format"] == 1


# -- (b) known answers -------------------------------------------------------------------------------
def test_nonzero_is_a_tensor_unless_as_tuple():
    assert tf.returns("torch.nonzero", 1).kind == "tensor"
    assert tf.returns("torch.nonzero", 1, constants={"as_tuple": True}).kind == "tensor_list"
    assert tf.method("nonzero") is not None


def test_max_overloads_are_told_apart_by_the_call():
    assert tf.returns("torch.max", 1).kind == "tensor"
    by_dim = tf.returns("torch.max", 1, ("dim",))
    assert (by_dim.kind, by_dim.n, by_dim.fields) == ("tensor_tuple", 2, ("values", "indices"))
    assert tf.returns("torch.max", 2, arg_kinds=(None, "int")).kind == "tensor_tuple"
    assert tf.returns("torch.max", 2, arg_kinds=("tensor", "tensor")).kind == "tensor"
    # max(x, y) vs max(x, dim): the second argument's kind decides; unknown, the join is unknown
    assert tf.returns("torch.max", 2).kind == "unknown"
    assert tf.returns("Tensor.max", 1, arg_kinds=("int",)).kind == "tensor_tuple"
    # t == 1 compares elementwise; t == "a" falls to the `other: object` overload, a bool
    assert tf.returns("Tensor.__eq__", 1, arg_kinds=("int",)).kind == "tensor"
    assert tf.returns("Tensor.__eq__", 1, arg_kinds=("str",)).kind == "bool"


def test_tensor_item_tolist_size_shape():
    assert tf.returns("Tensor.item").kind == "number"
    assert tf.returns("Tensor.tolist").kind in ("list", "unknown")
    assert tf.returns("Tensor.size").kind == "size"
    assert tf.returns("Tensor.size", 1).kind == "int"
    assert tf.returns("Tensor.size", 0, ("dim",)).kind == "int"
    assert tf.attribute("shape").returns.kind == "size"
    assert tf.lookup("torch.Tensor.shape").returns.kind == "size"
    assert tf.attribute("ndim").returns.kind == "int"
    assert tf.method("shape") is None and tf.attribute("item") is None


def test_unique_with_return_counts_is_a_tuple():
    assert tf.returns("torch.unique", 1).kind == "tensor"
    counts = tf.returns("torch.unique", 1, constants={"return_counts": True})
    assert (counts.kind, counts.n) == ("tensor_tuple", 2)
    both = tf.returns("torch.unique", 1, constants={"return_counts": True, "return_inverse": True})
    assert (both.kind, both.n) == ("tensor_tuple", 3)
    assert tf.returns("Tensor.unique", 0, constants={"return_counts": True}).kind == "tensor_tuple"


def test_functional_linalg_predicates():
    assert tf.returns("torch.nn.functional.one_hot", 1).kind == "tensor"
    assert tf.returns("torch.is_tensor", 1).kind == "bool"
    inv_ex = tf.returns("torch.linalg.inv_ex", 1)
    assert (inv_ex.kind, inv_ex.n, inv_ex.fields) == ("tensor_tuple", 2, ("inverse", "info"))
    assert tf.returns("torch.linalg.inv", 1).kind == "tensor"
    assert tf.returns("torch.nn.functional.max_pool2d", 2).kind == "tensor"
    assert tf.returns("torch.nn.functional.max_pool2d", 2, constants={"return_indices": True}).kind == "tensor_tuple"


def test_factories_host_data_like_and_inplace():
    zeros = tf.function("torch.zeros")
    assert zeros.factory and "device" in zeros.device_params and "dtype" in zeros.dtype_params
    for name in ("torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.FloatTensor"):
        assert tf.function(name).host_data, name
    assert not tf.function("torch.zeros").host_data
    assert tf.function("torch.zeros_like").like and not tf.function("torch.zeros_like").factory
    assert not tf.function("torch.add").factory
    add_ = tf.method("add_")
    assert add_.inplace and add_.returns_self and not tf.method("add").inplace
    assert tf.function("torch.distributions.Normal").validate_args
    assert tf.function("torch.Size").returns.kind == "size"


def test_unknown_names_and_calls_that_fit_no_overload():
    assert tf.lookup("torch.no_such_function") is None
    assert tf.returns("torch.no_such_function", 1) == tf.UNKNOWN
    # too many arguments for every overload: the join over all overloads
    assert tf.returns("Tensor.item", 3) == tf.method("item").returns
    assert tf.returns("torch.max", 1, constants={"dim": [1]}).kind == "tensor_tuple"  # unhashable: ignored


# -- the comparison with the hand-kept lists -----------------------------------------------------------
def test_comparison_reports_a_planted_contradiction(monkeypatch):
    from torchsync_lint.inference import torch_api
    from torchsync_lint.inference.data import compare_torch_api

    monkeypatch.setattr(torch_api, "FACTORIES", frozenset({"torch.add", "torch.zeros", "torch.no_such_op"}))
    monkeypatch.setattr(torch_api, "METHOD_NUMBER", frozenset({"item", "clone"}))
    lines = compare_torch_api.report()
    assert "FACTORIES: torch.add: contradicts: data: factory=False, returns ['tensor']" in lines
    assert any(line.startswith("FACTORIES: torch.no_such_op: absent") for line in lines)
    assert any(line.startswith("METHOD_NUMBER: clone: contradicts") for line in lines)
    assert not any(line.startswith(("FACTORIES: torch.zeros:", "METHOD_NUMBER: item:")) for line in lines)


# -- (c) the loader never imports torch --------------------------------------------------------------
def test_loader_does_not_import_torch():
    code = ("import sys\n"
            "from torchsync_lint.inference import torch_facts as tf\n"
            "assert tf.returns('torch.max', 2, ('keepdim',)).kind == 'tensor_tuple'\n"
            "tf.method('item'); tf.attribute('shape'); tf.function('torch.zeros')\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the annotation classifier, on its own (no torch) ------------------------------------------------
@pytest.mark.parametrize("annotation, kind, extra", [
    ("Tensor", "tensor", {}),
    ("Tensor | None", "tensor", {"optional": True}),
    ("Optional[torch.Tensor]", "tensor", {"optional": True}),
    ("tuple[Tensor, Tensor]", "tensor_tuple", {"n": 2}),
    ("tuple[Tensor, ...]", "tensor_list", {}),
    ("List[Tensor]", "tensor_list", {}),
    ("list[int]", "list", {}),
    ("_int", "int", {}),
    ("Number", "number", {}),
    ("_TypeIs['torch.Tensor']", "bool", {}),
    ("torch.return_types.max", "tensor_tuple", {"fields": ["values", "indices"]}),
    ("Size", "size", {}),
    ("Any", "unknown", {}),
])
def test_classifier_return_kinds(annotation, kind, extra):
    aliases = AliasTable()
    aliases.add_module(ast.parse("from builtins import int as _int\nfrom typing_extensions import TypeIs as _TypeIs\n"
                                 "Number: TypeAlias = int | float | bool\n"))
    max_rt = {"kind": "tensor_tuple", "n": 2, "elts": ["tensor", "tensor"], "fields": ["values", "indices"]}
    described = Classifier(aliases, {"max": max_rt}).returns(ast.parse(annotation, mode="eval").body)
    assert described["kind"] == kind
    for key, value in extra.items():
        assert described[key] == value


def test_classifier_param_literals():
    classifier = Classifier(AliasTable(), {})
    accepts, literals = classifier.accepts(ast.parse("Literal[True]", mode="eval").body)
    assert (accepts, literals) == ("bool", [True])
    assert classifier.accepts(None) == ("", None)
    assert classifier.accepts(ast.parse("int | None", mode="eval").body) == ("int|none", None)


def test_distributions_that_check_no_arguments_match_torch():
    """TSL404 leaves constructions of distributions without argument constraints alone: the set
    it names is the set torch's own classes say (``arg_constraints == {}``)."""
    torch_distributions = pytest.importorskip("torch.distributions")
    from torchsync_lint.rules.tsl404_distribution_validation import DISTRIBUTIONS, NO_ARGUMENT_CHECKS

    empty = set()
    for name in DISTRIBUTIONS:
        cls = getattr(torch_distributions, name, None)
        if cls is not None and isinstance(cls.__dict__.get("arg_constraints", None), dict) \
                and not cls.__dict__["arg_constraints"]:
            empty.add(name)
    assert empty == set(NO_ARGUMENT_CHECKS)
