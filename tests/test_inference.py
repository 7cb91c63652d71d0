"""Inference: what the engine believes about expressions, checked directly."""

import textwrap

import libcst as cst
import pytest

from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.hotness import CallGraph, summarise
from torchsync_lint.inference.index import FileIndex


def probe(source: str, module: str = "m"):
    """Values of every `probe(<expr>)` call's argument, in order, at that point of the code."""
    tree = cst.parse_module(textwrap.dedent(source))
    index = FileIndex(module)
    tree.visit(index)
    ctx = FileContext(index, Evaluator(index))
    seen = []

    class Probe:
        def __init__(self, ctx):
            self.ctx = ctx

        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value == "probe":
                seen.append(self.ctx.value(node.args[0].value))

    from torchsync_lint.check.walker import RuleWalker

    tree.visit(RuleWalker(ctx, [Probe(ctx)]))
    return seen


def test_aliases_resolve_to_torch():
    src = """
    import torch as th
    from torch import nonzero, Tensor
    import torch.nn.functional as F
    def f(a: Tensor):
        probe(th.zeros(3))
        probe(nonzero(a))
        probe(F.relu(a))
        probe(a)
    """
    vals = probe(src)
    assert [v.kind for v in vals] == ["tensor"] * 4
    assert vals[0].device == "cpu"  # no device given: made on the host
    assert vals[1].dtype == "int"


def test_shapes_sizes_and_python_values_are_not_tensors():
    src = """
    import torch
    def f(x: torch.Tensor):
        probe(x.shape)
        probe(x.shape[0])
        probe(x.size(0))
        probe(x.numel())
        probe(len(x))
        probe(x.device)
        probe(x.dtype)
        probe(3 * 2)
        n, c = x.shape
        probe(n)
    """
    kinds = [v.kind for v in probe(src)]
    assert kinds == ["size", "number", "number", "number", "number", "device", "dtype", "number", "number"]


def test_devices_and_dtypes():
    src = """
    import torch
    import numpy as np
    def f(x: torch.Tensor):
        probe(torch.tensor([1, 2]))
        probe(torch.tensor([1, 2], device="cuda"))
        probe(torch.arange(4, device=x.device))
        probe(x > 0)
        probe((x > 0).unsqueeze(-1).expand(-1, 3))
        probe(x.cpu())
        probe(x.to("cpu"))
        probe(torch.Tensor([0.1] * 10).cuda())
        probe(np.array([0, 1]))
        probe(torch.nonzero(x, as_tuple=True))
    """
    v = probe(src)
    assert (v[0].device, v[0].host_data, v[0].dtype) == ("cpu", True, "int")
    assert v[1].device == "cuda"
    assert v[2].dtype == "int" and v[2].device is None
    assert v[3].dtype == "bool" and v[4].dtype == "bool"
    assert v[5].device == "cpu" and v[6].device == "cpu"
    assert v[7].device == "cuda"
    assert v[8].kind == "ndarray"
    assert v[9].kind == "tensor_seq"


def test_flow_sensitive_rebinding():
    src = """
    import torch
    def f(x: torch.Tensor):
        y = x.sum()
        probe(y)
        y = y.item()
        probe(y)
    """
    a, b = probe(src)
    assert a.kind == "tensor" and b.kind == "number"


def test_forward_inputs_self_attrs_and_call_sites():
    src = """
    import torch
    import torch.nn as nn

    def helper(pred, target):
        probe(pred)
        return pred * 2

    class Loss(nn.Module):
        def __init__(self, ignore=-1):
            super().__init__()
            self.ignore = ignore
            self.w = torch.ones(3)
            self.register_buffer("buf", torch.zeros(3))
            self.fc = nn.Linear(3, 3)

        def forward(self, input, target):
            probe(input)
            probe(self.ignore)
            probe(self.w)
            probe(self.buf)
            probe(self.fc(input))
            probe(helper(input, target))
            return input
    """
    v = probe(src)
    assert v[0].kind == "tensor"  # helper's param, from its call site in forward
    assert v[1].kind == "tensor"
    assert v[2].kind == "number"
    assert (v[3].kind, v[3].device) == ("tensor", "cpu")  # a plain attribute stays on the host
    assert (v[4].kind, v[4].device) == ("tensor", None)  # buffers follow the module
    assert v[5].kind == "tensor" and v[6].kind == "tensor"


def test_unknowns_stay_unknown():
    src = """
    def f(a, b):
        probe(a)
        probe(a + b)
        probe(a.foo())
    """
    assert [v.kind for v in probe(src)] == ["unknown"] * 3


def test_comprehension_targets_are_bound_before_the_element():
    src = """
    import torch
    def f(x: torch.Tensor):
        return [probe(row) for row in x]
    """
    assert probe(src)[0].kind == "tensor"


@pytest.mark.parametrize("ann,kind", [("Optional[Tensor]", "tensor"), ("Tensor | None", "tensor"),
                                      ("'Tensor'", "tensor"), ("int", "number"), ("List[Tensor]", "list")])
def test_annotations(ann, kind):
    src = f"""
    from typing import List, Optional
    from torch import Tensor
    def f(a: {ann}):
        probe(a)
    """
    assert probe(src)[0].kind == kind


def test_hot_paths_cross_file():
    a = textwrap.dedent("""
    import torch.nn as nn
    from pkg.util import helper
    class M(nn.Module):
        def forward(self, x):
            return self.step(x)
        def step(self, x):
            return helper(x)
    """)
    b = textwrap.dedent("""
    def helper(x):
        return inner(x)
    def inner(x):
        return x
    def unused(x):
        return x
    """)
    summaries = []
    for mod, src in (("pkg.model", a), ("pkg.util", b)):
        index = FileIndex(mod)
        cst.parse_module(src).visit(index)
        summaries.append(summarise(index))
    graph = CallGraph(summaries)
    assert graph.is_hot("pkg.model.M.step")
    assert graph.is_hot("pkg.util.helper") and graph.is_hot("pkg.util.inner")
    assert not graph.is_hot("pkg.util.unused")


def test_training_loop_body_is_hot():
    src = textwrap.dedent("""
    def train(model, loader, opt):
        for batch in loader:
            loss = compute(model, batch)
            loss.backward()
            opt.step()
    def compute(model, batch):
        return model(batch).mean()
    """)
    index = FileIndex("t")
    cst.parse_module(src).visit(index)
    graph = CallGraph([summarise(index)])
    assert graph.is_hot("t.compute")
    assert not graph.is_hot("t.train")  # only its loop body is hot, not the whole function


def test_streams_and_events():
    src = """
    import torch

    side = torch.cuda.Stream()
    probe(side)
    probe(torch.cuda.current_stream())
    probe(side.record_event())
    probe(torch.cuda.Event(enable_timing=True))
    """
    assert [v.kind for v in probe(src)] == ["stream", "stream", "event", "event"]


def test_devices_flow_through_variables_and_defaults():
    src = """
    import torch

    def grid(h: int, device: str = "cpu"):
        device = torch.device(device)
        probe(device)
        return torch.arange(h, device=device)

    def on_gpu(h: int, device="cpu"):
        return torch.arange(h, device=device)

    def caller(x: torch.Tensor):
        probe(grid(4))
        probe(on_gpu(4, device=x.device))
        d = "cuda:0"
        probe(torch.zeros(3, device=d))
    """
    v = probe(src)
    assert (v[0].kind, v[0].device) == ("device", "cpu")
    assert v[1].device == "cpu"  # no caller passes another device
    assert v[2].device is None  # a caller passes the tensor's device: not known to be the CPU
    assert v[3].device == "cuda"
