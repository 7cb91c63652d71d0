"""The statements of the sync truth table, and the module text each one is measured and linted in.

Every statement runs (and is linted) at the end of the same ``forward(self, x)`` prelude, with ``x``
a CUDA float tensor of shape (8, 8) drawn from ``torch.rand`` (values in [0, 1)). The prelude makes
each name's nature visible to static inference, and must itself neither sync nor lint dirty.

``bench/truth_run.py`` measures them on a GPU; ``tests/test_truth_table.py`` lints them.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import List, Optional, Tuple

HEADER = """\
import io
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
"""

# Body of M.__init__ (runs once: cold code). The harness moves the module to the device afterwards;
# `Module.to` keeps the Parameter objects, so the optimizers still hold them.
SETUP = """\
super().__init__()
self.lin = nn.Linear(8, 8)
self.opt = torch.optim.Adam(self.lin.parameters(), lr=1e-3)
self.sgd = torch.optim.SGD(self.lin.parameters(), lr=0.1)
self.scaler = torch.amp.GradScaler("cuda")
self.lbfgs = torch.optim.LBFGS(self.lin.parameters(), max_iter=2)
self.side = torch.cuda.Stream()
buf = io.BytesIO()
torch.save({"w": torch.ones(256, 256)}, buf)
self.ckpt = buf.getvalue()
buf = io.BytesIO()
torch.save({"w": torch.ones(256, 256, device="cuda")}, buf)
self.gpu_ckpt = buf.getvalue()
"""

# Body of M.forward before the statement. Every statement below uses only these names.
PRELUDE = """\
d = x.device
y = x * 2
std = x.abs() + 0.1
probs = x.softmax(-1)
mask = x > 0.5
row_mask = x[:, 0] > 0.5
idx = torch.arange(4, device=d)
t = torch.randint(0, 3, (8,), device=d)
labels = torch.randint(0, 8, (8,), device=d)
reps = torch.full((8,), 2, device=d)
q = torch.full((1,), 0.5, device=d)
boundaries = torch.linspace(0, 1, 5, device=d)
zero_dim = x.sum()
spd = x @ x.T + torch.eye(8, device=d)
cpu_t = torch.tensor([0, 2])
cpu_scalar = torch.tensor(2.0)
host_buf = torch.empty(8, 8)
pinned_buf = torch.empty(8, 8, pin_memory=True)
pinned = torch.ones(1024, pin_memory=True)
big_host = torch.ones(4_000_000)
arr = np.array([0, 2])
lst = [1, 2, 3]
n = x.shape[0]
normal = torch.distributions.Normal(x, std, validate_args=False)
out = self.lin(x)
loss = out.square().mean()
aux = self.lin(y).sum()
aux.backward()
"""

# For a dry run without CUDA (CPU wheel): what the set-up and prelude cannot do there.
CPU_SUBSTITUTIONS = (
    ("pin_memory=True", "pin_memory=False"),
    ("torch.cuda.Stream()", "None"),
    ('torch.ones(256, 256, device="cuda")', "torch.ones(256, 256)"),
)


@dataclass(frozen=True)
class Statement:
    id: str
    family: str  # the rule code whose territory the statement is in
    source: str  # one statement; may span lines (an `if` block)
    rule: Optional[str] = None  # code that should report it if it syncs (None: no rule covers it)
    note: str = ""


def _s(id: str, family: str, source: str, rule: Optional[str] = "", note: str = "") -> Statement:
    return Statement(id, family, textwrap.dedent(source).strip("\n"), family if rule == "" else rule, note)


STATEMENTS: List[Statement] = [
    # TSL001 item-call
    _s("item-01", "TSL001", "v = zero_dim.item()"),
    _s("item-02", "TSL001", "v = x[0, 0].item()"),
    _s("item-03", "TSL001", "v = loss.item()"),
    _s("item-04", "TSL001", "v = cpu_scalar.item()", note="CPU tensor"),
    _s("item-05", "TSL001", "v = arr.sum().item()", note="numpy"),
    # TSL002 tolist-call
    _s("tolist-01", "TSL002", "v = t.tolist()"),
    _s("tolist-02", "TSL002", "v = x.tolist()"),
    _s("tolist-03", "TSL002", "v = cpu_t.tolist()", note="CPU tensor"),
    _s("tolist-04", "TSL002", "v = arr.tolist()", note="numpy"),
    _s("tolist-05", "TSL002", "v = zero_dim.tolist()", note="0-dim: a Python float"),
    # TSL003 copy-to-host
    _s("host-01", "TSL003", "h = y.cpu()"),
    _s("host-02", "TSL003", 'h = y.to("cpu")'),
    _s("host-03", "TSL003", 'h = y.to(torch.device("cpu"))'),
    _s("host-04", "TSL003", "h = y.detach().cpu().numpy()"),
    _s("host-05", "TSL003", 'h = y.to("cpu", non_blocking=True)', note="does not wait; data not ready yet"),
    _s("host-06", "TSL003", "h = cpu_t.numpy()", note="CPU tensor"),
    _s("host-07", "TSL003", "h = cpu_t.cpu()", note="CPU tensor"),
    _s("host-08", "TSL003", "h = y.to(d)", note="same device"),
    _s("host-09", "TSL003", "h = y.cuda()", note="already on the GPU"),
    _s("host-10", "TSL003", "h = y.to(torch.float16)", note="dtype only"),
    _s("host-11", "TSL003", "host_buf.copy_(y)", note="copy_ into a CPU tensor"),
    _s("host-17", "TSL003", "v = host_buf[cpu_t]", note="a CPU tensor indexed by a CPU index"),
    _s("host-12", "TSL003", "pinned_buf.copy_(y, non_blocking=True)", note="pinned, non-blocking"),
    _s("host-13", "TSL003", "host_buf[0] = y[0]", note="a GPU row stored into a CPU tensor"),
    _s("host-14", "TSL003", "host_buf[0, 0] = zero_dim", note="a 0-dim GPU tensor stored into a CPU tensor"),
    _s("host-15", "TSL003", "host_buf[0] = 1.0", note="a Python number into a CPU tensor"),
    _s("host-16", "TSL003", "v = [r.cpu().numpy() for r in y]", note="rows of a GPU tensor"),
    # TSL004 python-scalar-conversion
    _s("scalar-01", "TSL004", "v = float(zero_dim)"),
    _s("scalar-02", "TSL004", "v = int(t[0])"),
    _s("scalar-03", "TSL004", "v = bool(zero_dim > 0)"),
    _s("scalar-04", "TSL004", "v = complex(zero_dim)"),
    _s("scalar-05", "TSL004", "v = float(cpu_scalar)", note="CPU tensor"),
    _s("scalar-06", "TSL004", "v = float(n)", note="Python int"),
    _s("scalar-07", "TSL004", "v = int(x.shape[0])", note="a size is a Python int"),
    _s("scalar-08", "TSL004", "v = float(x.size(1))", note="a size is a Python int"),
    _s("scalar-09", "TSL004", "v = [int(i) for i in t]"),
    # TSL005 builtin-min-max-on-tensor
    _s("minmax-01", "TSL005", "v = max(1, t.sum())"),
    _s("minmax-02", "TSL005", "v = min(t)", note="compares 0-dim tensors"),
    _s("minmax-03", "TSL005", "v = max(zero_dim, zero_dim * 2)"),
    _s("minmax-04", "TSL005", "v = max(1, n)", note="Python ints"),
    _s("minmax-05", "TSL005", "v = torch.max(t)", note="torch op"),
    _s("minmax-06", "TSL005", "v = torch.maximum(x, y)", note="torch op"),
    _s("minmax-07", "TSL005", "v = x.max(dim=0)", note="torch op"),
    _s("minmax-08", "TSL005", "v = sum(t)", note="builtin sum adds tensors, never compares"),
    _s("minmax-09", "TSL005", "v = abs(zero_dim)", note="Tensor.__abs__"),
    # TSL006 tensor-formatting
    _s("fmt-01", "TSL006", "print(zero_dim)"),
    _s("fmt-02", "TSL006", 's = f"{zero_dim}"'),
    _s("fmt-03", "TSL006", 's = f"{zero_dim:.3f}"'),
    _s("fmt-04", "TSL006", "s = str(y)"),
    _s("fmt-05", "TSL006", "s = repr(y)"),
    _s("fmt-06", "TSL006", 's = "{}".format(zero_dim)'),
    _s("fmt-07", "TSL006", 's = "%s" % zero_dim'),
    _s("fmt-08", "TSL006", 'logging.warning("loss %s", zero_dim)', note="emitted, so formatted"),
    _s("fmt-09", "TSL006", 'logging.debug("loss %s", zero_dim)', note="level disabled: never formatted"),
    _s("fmt-10", "TSL006", 's = f"{x.shape}"', note="a size"),
    _s("fmt-11", "TSL006", 's = f"{n} {x.dtype}"', note="no tensor data"),
    _s("fmt-12", "TSL006", "print(x.shape)", note="a size"),
    _s("fmt-13", "TSL006", "print(cpu_t)", note="CPU tensor"),
    # TSL101 nonzero
    _s("nonzero-01", "TSL101", "v = torch.nonzero(x)"),
    _s("nonzero-02", "TSL101", "v = mask.nonzero()"),
    _s("nonzero-03", "TSL101", "v = torch.nonzero(mask, as_tuple=True)"),
    _s("nonzero-04", "TSL101", "v = torch.where(mask)", note="1-argument where is nonzero"),
    _s("nonzero-05", "TSL101", "v = torch.argwhere(x)"),
    _s("nonzero-06", "TSL101", "v = torch.nonzero_static(mask, size=8)", note="fixed size"),
    _s("nonzero-07", "TSL101", "v = torch.count_nonzero(mask)"),
    _s("nonzero-08", "TSL101", "v = torch.where(mask, x, y)", note="3-argument where"),
    _s("nonzero-09", "TSL101", "v = torch.where(mask, x, 0.0)", note="3-argument where, Python scalar"),
    _s("nonzero-10", "TSL101", "v = cpu_t.nonzero()", note="CPU tensor"),
    # TSL102 unique
    _s("unique-01", "TSL102", "v = torch.unique(t)"),
    _s("unique-02", "TSL102", "v = t.unique()"),
    _s("unique-03", "TSL102", "v = torch.unique(t, return_counts=True)"),
    _s("unique-04", "TSL102", "v = torch.unique_consecutive(t)"),
    _s("unique-05", "TSL102", "v = t.unique(sorted=False)"),
    _s("unique-06", "TSL102", "v = torch.unique(cpu_t)", note="CPU tensor"),
    # TSL103 boolean-mask-index
    _s("mask-01", "TSL103", "v = x[mask]"),
    _s("mask-02", "TSL103", "v = x[row_mask]"),
    _s("mask-03", "TSL103", "v = x[x > 0.5]"),
    _s("mask-04", "TSL103", "v = x[:, mask[0]]"),
    _s("mask-05", "TSL103", "x[mask] = y[mask]"),
    _s("mask-06", "TSL103", "x[mask] = zero_dim", note="GPU 0-dim value"),
    _s("mask-07", "TSL103", "x[mask] += 1"),
    _s("mask-08", "TSL103", "x[mask] = 0.0", note="Python scalar into a mask: masked_fill"),
    _s("mask-09", "TSL103", "y[row_mask] = 0.0", note="Python scalar into a mask"),
    _s("mask-10", "TSL103", "x[mask] = cpu_scalar", note="CPU 0-dim value"),
    _s("mask-11", "TSL103", "v = x.masked_fill(mask, 0.0)"),
    _s("mask-12", "TSL103", "x.masked_fill_(mask, 0.0)"),
    _s("mask-13", "TSL103", "v = (x * mask).sum() / mask.sum()", note="masked mean without selection"),
    _s("mask-14", "TSL103", "v = x.masked_scatter(mask, y)"),
    # TSL104 masked-select
    _s("mselect-01", "TSL104", "v = torch.masked_select(x, mask)"),
    _s("mselect-02", "TSL104", "v = x.masked_select(mask)"),
    # TSL105 repeat-interleave-without-output-size
    _s("repeat-01", "TSL105", "v = torch.repeat_interleave(x, reps, dim=0)"),
    _s("repeat-02", "TSL105", "v = x.repeat_interleave(t, dim=0)"),
    _s("repeat-03", "TSL105", "v = torch.repeat_interleave(reps)", note="1-argument form"),
    _s("repeat-04", "TSL105", "v = torch.repeat_interleave(x, reps, dim=0, output_size=16)", note="output_size"),
    _s("repeat-05", "TSL105", "v = x.repeat_interleave(2, dim=0)", note="int repeats"),
    # TSL106 bincount
    _s("bincount-01", "TSL106", "v = torch.bincount(t)"),
    _s("bincount-02", "TSL106", "v = torch.bincount(t, minlength=8)"),
    _s("bincount-03", "TSL106", "v = t.bincount()"),
    _s("bincount-04", "TSL106", "v = torch.zeros(8, dtype=torch.long, device=d).index_add_(0, t, torch.ones_like(t))",
       note="sync-free bincount"),
    # TSL107 histc-without-range
    _s("histc-01", "TSL107", "v = torch.histc(x)"),
    _s("histc-02", "TSL107", "v = torch.histc(x, bins=10)"),
    _s("histc-03", "TSL107", "v = x.histc(bins=4)"),
    _s("histc-04", "TSL107", "v = torch.histc(x, bins=10, min=0, max=1)", note="explicit range"),
    # TSL108 one-hot-without-num-classes
    _s("onehot-01", "TSL108", "v = F.one_hot(t)"),
    _s("onehot-02", "TSL108", "v = F.one_hot(t, -1)"),
    _s("onehot-03", "TSL108", "v = F.one_hot(t, num_classes=4)", note="num_classes"),
    _s("onehot-04", "TSL108", "v = F.one_hot(t, 4)", note="num_classes positional"),
    # TSL201 host-sequence-index
    _s("hostidx-01", "TSL201", "v = x[range(n), t]"),
    _s("hostidx-02", "TSL201", "v = x[[0, 2]]"),
    _s("hostidx-03", "TSL201", "v = x[arr]"),
    _s("hostidx-04", "TSL201", "v = x[cpu_t]"),
    _s("hostidx-05", "TSL201", "v = x[lst]"),
    _s("hostidx-06", "TSL201", "v = x[:, [0, 2]]"),
    _s("hostidx-07", "TSL201", "v = x[(0, 1)]", note="a tuple is a multi-dimensional basic index"),
    _s("hostidx-08", "TSL201", "v = x[idx]", note="GPU index"),
    _s("hostidx-09", "TSL201", "v = x[torch.arange(n, device=d), t]", note="GPU index"),
    _s("hostidx-10", "TSL201", "v = x[0]", note="basic index"),
    _s("hostidx-11", "TSL201", "v = x[1:3, ..., None]", note="basic index"),
    _s("hostidx-12", "TSL201", "v = x.index_select(0, idx)"),
    _s("hostidx-13", "TSL201", "v = torch.gather(x, 1, t[:, None])"),
    _s("hostidx-14", "TSL201", "v = x[:, [t[0]]]", note="a list of one 0-dim GPU tensor at one of two positions"),
    _s("hostidx-16", "TSL201", "v = x[[idx, t[:4]]]", rule=None, note="a whole-index list of GPU tensors: a tuple"),
    # TSL202 host-tensor-to-device
    _s("h2d-01", "TSL202", "v = torch.tensor(0.5, device=d)"),
    _s("h2d-02", "TSL202", "v = torch.tensor([1.0, 2.0], device=d)"),
    _s("h2d-03", "TSL202", "v = torch.tensor(lst, device=d)"),
    _s("h2d-04", "TSL202", "v = torch.tensor(lst).to(d)"),
    _s("h2d-05", "TSL202", "v = torch.tensor(lst).cuda()"),
    _s("h2d-06", "TSL202", "v = cpu_t.to(d)"),
    _s("h2d-07", "TSL202", "v = torch.as_tensor(arr, device=d)"),
    _s("h2d-08", "TSL202", "v = torch.from_numpy(arr).to(d)"),
    _s("h2d-09", "TSL202", "v = x.new_tensor([1.0, 2.0])"),
    _s("h2d-10", "TSL202", "v = pinned.to(d)", note="pinned but blocking"),
    _s("h2d-11", "TSL202", "v = torch.where(mask, x, torch.tensor(0.0, device=d))"),
    _s("h2d-12", "TSL202", "v = pinned.to(d, non_blocking=True)", note="pinned, non-blocking"),
    _s("h2d-13", "TSL202", "v = cpu_t.to(d, non_blocking=True)", note="small pageable, non-blocking"),
    _s("h2d-14", "TSL202", "v = big_host.to(d, non_blocking=True)", note="16 MB pageable, non-blocking"),
    _s("h2d-15", "TSL202", "v = torch.full((), 0.5, device=d)"),
    _s("h2d-16", "TSL202", "v = torch.scalar_tensor(0.5, device=d)"),
    _s("h2d-17", "TSL202", "v = x * torch.tensor(2.0)", note="CPU 0-dim operand"),
    _s("h2d-18", "TSL202", "v = torch.where(mask, x, torch.tensor(0.0))", note="CPU 0-dim operand: where copies it"),
    _s("h2d-19", "TSL202", "v = torch.zeros(8, device=d)"),
    _s("h2d-20", "TSL202", "v = torch.arange(8, device=d)"),
    _s("h2d-21", "TSL202", "v = torch.tensor(lst)", note="stays on the CPU"),
    _s("h2d-22", "TSL202", "v = torch.tensor(x.shape, device=d)", note="sizes are host data"),
    _s("h2d-23", "TSL202", "v = torch.tensor([zero_dim, zero_dim], device=d)", note="elements read one by one"),
    _s("h2d-24", "TSL202", "v = torch.stack([zero_dim, zero_dim])", note="stays on the GPU"),
    _s("h2d-25", "TSL202", "m = nn.Linear(8, 8).to(d)", note="a module made on the CPU, moved"),
    _s("h2d-26", "TSL202", "m = nn.ReLU().to(d)", note="a module without parameters or buffers"),
    _s("h2d-27", "TSL202", "m = nn.Linear(8, 8, device=d)", note="made on the GPU: nothing to copy"),
    _s("h2d-28", "TSL202", "y[:2, :] = torch.ones(2, 8)", note="CPU tensor stored into a GPU slice"),
    _s("h2d-29", "TSL202", "y[0] = torch.ones(8) * 3", note="CPU tensor stored into a GPU row"),
    _s("h2d-30", "TSL202", "y[0, 0] = cpu_scalar", note="CPU 0-dim tensor into one element"),
    _s("h2d-31", "TSL202", "y[:2] = x[:2] * 3", note="GPU value: a device copy"),
    # TSL412 module-to-device
    _s("h2d-32", "TSL412", "m = self.lin.to(d)", note="a module on the device already: nothing to copy"),
    # TSL003: a host tensor of GPU values
    _s("h2d-33", "TSL003", "v = torch.tensor([zero_dim, zero_dim])", note="GPU elements read onto the host"),
    _s("h2d-34", "TSL003", "v = torch.tensor([cpu_scalar, cpu_scalar])", note="CPU elements"),
    _s("noop-01", "TSL202", "v = torch.tensor([], device=d)", note="no element to copy"),
    _s("noop-02", "TSL202", "v = torch.empty(0).to(d)", note="no element to copy"),
    _s("noop-03", "TSL202", "b = [r for r in lst if r > 5]\nv = torch.stack(b) if len(b) > 0 else torch.tensor(b, device=d)",
       note="a list its test found empty"),
    # TSL113 measured-torch-sync
    _s("mts-01", "TSL113", "v = torch.cov(x)"),
    _s("mts-02", "TSL113", "v = F.gaussian_nll_loss(x, y, std)", note="checks var < 0 on the host"),
    _s("mts-03", "TSL113", "v = torch.isin(t, idx)", note="4 test elements: brute force"),
    # TSL114 unsorted-packed-sequence (a PackedSequence made on the spot: packing unsorted syncs
    # itself, TSL111, so the sort order is put on the device without a copy)
    _s("pps-01", "TSL114",
       "ps = nn.utils.rnn.PackedSequence(x[:6], torch.tensor([3, 2, 1]), idx[:3].flip(0), idx[:3].flip(0))\n"
       "v, n = nn.utils.rnn.pad_packed_sequence(ps)", note="sort order on the GPU: `unsorted_indices.cpu()`"),
    _s("pps-02", "TSL114",
       "ps = nn.utils.rnn.PackedSequence(x[:6], torch.tensor([3, 2, 1]))\nv, n = nn.utils.rnn.pad_packed_sequence(ps)",
       note="no sort order"),
    _s("pps-03", "TSL202",
       "ps = nn.utils.rnn.PackedSequence(x[:6], torch.tensor([3, 2, 1]))\nv, n = nn.utils.rnn.pad_packed_sequence(ps)\n"
       "m = n.to(d)", note="the lengths come back on the CPU"),
    # TSL203 index-put-python-scalar
    _s("idxput-01", "TSL203", "x[idx] = 1.0"),
    _s("idxput-02", "TSL203", "x[t] = 0"),
    _s("idxput-03", "TSL203", "x[idx, idx] = 1.0"),
    _s("idxput-04", "TSL203", "x[0] = 1.0", note="basic index: fill_"),
    _s("idxput-05", "TSL203", "x[:, 0] = 0.0", note="basic index: fill_"),
    _s("idxput-06", "TSL203", "x.index_fill_(0, idx, 1.0)"),
    _s("idxput-07", "TSL203", "x[idx] = y[idx]", note="tensor value"),
    _s("idxput-08", "TSL203", "x[idx] = zero_dim", note="GPU 0-dim value"),
    _s("idxput-09", "TSL203", "x[idx] += 1", note="read, add, write a tensor"),
    _s("idxput-10", "TSL203", "v = torch.zeros_like(x).index_put_((t,), y, accumulate=True)"),
    _s("idxput-11", "TSL203", "x[0, 1] = 1.0", note="one element: a 0-dim view"),
    _s("idxput-12", "TSL203", "w = torch.zeros(2, 4, 8, device=d)\nw[0, n // 4, 0] = 1", note="one element of a 3-D tensor"),
    _s("idxput-13", "TSL203", "x[0, 1:3] = 1.0", note="a slice of a row: fill_"),
    _s("idxput-14", "TSL203", "x[0, 1] = zero_dim", note="one element, GPU value"),
    _s("idxput-15", "TSL203", "w = torch.zeros(2, 4, 8, device=d)\nw[0, 1] = 1.0", note="a row of a 3-D tensor"),
    _s("idxput-16", "TSL203", "w = torch.zeros(8, device=d)\nw[3] = 1.0", note="one element of a 1-D tensor"),
    # TSL301 assert-on-tensor
    _s("assert-01", "TSL301", "assert zero_dim > 0"),
    _s("assert-02", "TSL301", "assert (x >= 0).all()"),
    _s("assert-03", "TSL301", 'assert torch.isfinite(x).all(), "nan"'),
    _s("assert-04", "TSL301", 'torch._assert(zero_dim > 0, "positive")', note="same as assert"),
    _s("assert-05", "TSL301", "assert x.shape[0] == 8", note="a size"),
    _s("assert-06", "TSL301", "assert n > 0", note="Python int"),
    _s("assert-07", "TSL301", "torch._assert_async(zero_dim > 0)", note="checked on the device"),
    # TSL302 tensor-truthiness
    _s("truth-01", "TSL302", "if zero_dim > 0:\n    pass"),
    _s("truth-02", "TSL302", "if mask.any():\n    pass"),
    _s("truth-03", "TSL302", "while zero_dim < 0:\n    pass"),
    _s("truth-04", "TSL302", "v = 1 if zero_dim > 0 else 2"),
    _s("truth-05", "TSL302", "v = zero_dim > 0 and n > 0"),
    _s("truth-06", "TSL302", "v = not mask.any()"),
    _s("truth-07", "TSL302", "v = mask.any() or n"),
    _s("truth-08", "TSL302", "v = mask.any()", note="not in a boolean context"),
    _s("truth-09", "TSL302", "if n > 0:\n    pass", note="Python int"),
    _s("truth-10", "TSL302", "if x is not None:\n    pass", note="identity test"),
    _s("truth-11", "TSL302", "if x.shape[0] > 1:\n    pass", note="a size"),
    _s("truth-12", "TSL302", "if x.is_cuda:\n    pass", note="a Python bool"),
    _s("truth-13", "TSL302", "if x.numel():\n    pass", note="a Python int"),
    _s("truth-14", "TSL302", "if cpu_scalar > 0:\n    pass", note="CPU tensor"),
    _s("truth-15", "TSL302", "v = x.sum() > 0", note="a tensor, not a bool"),
    _s("truth-16", "TSL302", "for row in x:\n    pass", note="iteration unbinds on the device"),
    _s("keyed-01", "TSL302", 'st = {"step": torch.tensor(0.0), "avg": y}\nif st["step"] == 0:\n    v = 1',
       note="a dict's CPU step counter (torch's optimizers keep it on the CPU)"),
    _s("keyed-02", "TSL302", 'st = {"step": torch.zeros((), device=d), "avg": y}\nif st["step"] == 0:\n    v = 1',
       note="a step counter on the device"),
    # TSL303 tensor-as-python-int
    _s("asint-01", "TSL303", "v = list(range(t[0]))"),
    _s("asint-02", "TSL303", "v = lst[t[0]]"),
    _s("asint-03", "TSL303", "v = x[:t[0]]"),
    _s("asint-04", "TSL303", "v = torch.zeros(t.max(), device=d)"),
    _s("asint-05", "TSL303", "v = x.narrow(0, t[0], 4)"),
    _s("asint-06", "TSL303", "v = x.repeat(t[0] + 1, 1)"),
    _s("asint-07", "TSL303", "v = x.new_zeros(t.sum())"),
    _s("asint-08", "TSL303", "v = torch.arange(t[0], device=d)"),
    _s("asint-09", "TSL303", "v = torch.full((8,), zero_dim, device=d)", note="tensor fill value"),
    _s("asint-10", "TSL303", "v = torch.ones(n, device=d)", note="Python int"),
    _s("asint-11", "TSL303", "v = x[: x.shape[0] // 2]", note="a size"),
    _s("asint-12", "TSL303", "v = x.narrow(0, 1, 4)", note="Python ints"),
    _s("asint-13", "TSL303", "x.fill_(zero_dim)", note="fill_ takes a 0-dim tensor"),
    _s("asint-14", "TSL303", "for i in range(t.max()):\n    pass"),
    _s("asint-20", "TSL303", "v = x[labels.argmax()]", note="0-dim integer GPU index"),
    _s("asint-21", "TSL303", "v = host_buf[t[0]]", note="GPU 0-dim index into a host tensor"),
    _s("asint-22", "TSL303", "v = x[cpu_t[0]]", rule=None, note="host 0-dim index"),
    _s("asint-23", "TSL303", "x[labels.argmax()] = 1.0", note="0-dim integer GPU index, store"),
    _s("asint-24", "TSL303", "v = arr[labels.argmax() * 0]", note="0-dim integer GPU index into a numpy array"),
    _s("asint-15", "TSL303", "v = torch.randint(0, t.max() + 1, (2,), device=d)", note="tensor high"),
    _s("asint-16", "TSL303", "v = torch.randint(0, n, (2,), device=d)", note="Python int high"),
    _s("asint-17", "TSL303", "v = torch.randint(t.min(), 9, (2,), device=d)", note="tensor low"),
    _s("rows-01", "TSL303", "for j in cpu_t:\n    v = x[j]", note="items of a 1-D CPU tensor: 0-dim host indices"),
    _s("rows-02", "TSL303", "for j in idx:\n    v = x[j]", note="items of a 1-D GPU tensor: 0-dim GPU indices"),
    # TSL401 explicit-synchronize
    _s("syncapi-01", "TSL401", "torch.cuda.synchronize()"),
    _s("syncapi-02", "TSL401", "torch.cuda.synchronize(d)"),
    _s("syncapi-03", "TSL401", "torch.cuda.current_stream().synchronize()"),
    _s("syncapi-04", "TSL401", "ev = torch.cuda.Event()\nev.record()\nev.synchronize()"),
    _s("syncapi-05", "TSL401", "torch.accelerator.synchronize()"),
    _s("syncapi-06", "TSL401", "self.side.synchronize()", note="an idle side stream: nothing to wait for"),
    _s("syncapi-07", "TSL401", "ev = torch.cuda.Event()\nev.record()", note="record only"),
    _s("syncapi-08", "TSL401", "torch.cuda.current_stream().wait_stream(self.side)", note="device-side wait"),
    _s("syncapi-09", "TSL401", "v = torch.cuda.current_stream().query()", note="poll"),
    _s("syncapi-10", "TSL401", "with torch.cuda.stream(self.side):\n    v = x * 2"),
    # TSL402 empty-cache
    _s("cache-01", "TSL402", "torch.cuda.empty_cache()", note="no free segment to release here; see cache-06"),
    _s("cache-02", "TSL402", "v = torch.cuda.memory_allocated()"),
    _s("cache-03", "TSL402", "v = torch.cuda.max_memory_allocated()"),
    _s("cache-04", "TSL402", "torch.cuda.reset_peak_memory_stats()"),
    _s("cache-05", "TSL402", "v = torch.cuda.mem_get_info()"),
    _s("cache-06", "TSL402", "tmp = torch.empty(1 << 26, device=d)\ndel tmp\ntorch.cuda.empty_cache()",
       note="a free 256 MB segment to release"),
    # TSL403 tensor-equality-check
    _s("equal-01", "TSL403", "v = torch.equal(x, y)"),
    _s("equal-02", "TSL403", "v = x.equal(y)"),
    _s("equal-03", "TSL403", "v = torch.allclose(x, y)"),
    _s("equal-04", "TSL403", "v = torch.is_nonzero(zero_dim)"),
    _s("equal-05", "TSL403", "torch.testing.assert_close(x, x)"),
    _s("equal-06", "TSL403", "v = torch.isclose(x, y)", note="elementwise"),
    _s("equal-07", "TSL403", "v = (x == y).all()", note="stays a tensor"),
    _s("equal-08", "TSL403", "v = x.eq(y)", note="elementwise"),
    _s("equal-09", "TSL403", "v = torch.equal(x, x)", note="the same tensor on both sides"),
    # TSL404 distribution-validation
    _s("dist-01", "TSL404", "v = torch.distributions.Normal(x, std)"),
    _s("dist-02", "TSL404", "v = torch.distributions.Categorical(logits=x)"),
    _s("dist-03", "TSL404", "v = torch.distributions.Categorical(probs=probs)"),
    _s("dist-04", "TSL404", "v = torch.distributions.Bernoulli(probs=probs)"),
    _s("dist-05", "TSL404", "v = torch.distributions.Uniform(x, x + 1)"),
    _s("dist-06", "TSL404", "v = torch.distributions.Normal(x, std, validate_args=False)"),
    _s("dist-07", "TSL404", "v = torch.distributions.Categorical(logits=x, validate_args=False)"),
    _s("dist-08", "TSL404", "v = torch.distributions.Normal(0.0, 1.0)", note="CPU parameters"),
    _s("dist-09", "TSL404", "v = normal.log_prob(y)", note="made with validate_args=False"),
    _s("dist-10", "TSL404", "v = normal.rsample()"),
    # TSL405 linalg-without-ex
    _s("linalg-01", "TSL405", "v = torch.linalg.inv(spd)"),
    _s("linalg-02", "TSL405", "v = torch.inverse(spd)"),
    _s("linalg-03", "TSL405", "v = torch.linalg.cholesky(spd)"),
    _s("linalg-04", "TSL405", "v = torch.linalg.solve(spd, x)"),
    _s("linalg-05", "TSL405", "v = torch.linalg.eigh(spd)"),
    _s("linalg-06", "TSL405", "v = torch.linalg.svd(x)"),
    _s("linalg-07", "TSL405", "v = torch.linalg.det(spd)"),
    _s("linalg-08", "TSL405", "v = torch.linalg.qr(x)"),
    _s("linalg-09", "TSL405", "v = torch.linalg.pinv(x)"),
    _s("linalg-10", "TSL405", "v = torch.linalg.inv_ex(spd)"),
    _s("linalg-11", "TSL405", "v = torch.linalg.cholesky_ex(spd)"),
    _s("linalg-12", "TSL405", "v = torch.linalg.solve_ex(spd, x)"),
    _s("linalg-13", "TSL405", "v = torch.linalg.matrix_norm(x)"),
    _s("linalg-14", "TSL405", "v = spd @ x"),
    # TSL406 clip-grad-norm-nonfinite-check, and optimizer steps
    _s("clip-01", "TSL406", "v = nn.utils.clip_grad_norm_(self.lin.parameters(), 1.0, error_if_nonfinite=True)"),
    _s("clip-02", "TSL406", "v = nn.utils.clip_grad_norm_(self.lin.parameters(), 1.0)"),
    _s("clip-03", "TSL406", "v = torch.nn.utils.clip_grad_norm_(self.lin.parameters(), 1.0, foreach=True)"),
    _s("clip-04", "TSL406", "nn.utils.clip_grad_value_(self.lin.parameters(), 1.0)"),
    _s("optim-01", "TSL406", "self.scaler.scale(loss).backward()\nself.scaler.step(self.opt)\nself.scaler.update()",
       rule=None, note="GradScaler.step reads found_inf"),
    _s("optim-02", "TSL406", "self.opt.step()"),
    _s("optim-03", "TSL406", "self.sgd.step()"),
    _s("optim-04", "TSL406", "self.opt.zero_grad()"),
    _s("optim-05", "TSL406", "loss.backward()"),
    _s("optim-06", "TSL406", "v = self.scaler.scale(loss)"),
    _s("optim-07", "TSL413", """
       def closure():
           self.lbfgs.zero_grad()
           l = self.lin(x).square().mean()
           l.backward()
           return l
       self.lbfgs.step(closure)
       """, note="LBFGS.step reads the loss and the gradient's size"),
    _s("scaler-01", "TSL407", "s = self.scaler.scale(loss)\nv = self.scaler.state_dict()",
       note="reads the scale made by scale()"),
    # backward(): what in a graph makes the backward pass wait
    _s("bwd-01", "TSL414", "w = torch.zeros((), requires_grad=True)\n(w * x).sum().backward()",
       note="a CPU 0-dim leaf in a CUDA graph: its gradient is copied to the host"),
    _s("bwd-02", "TSL414", "w = torch.zeros(1, requires_grad=True)\nwd = w.to(d)\n(wd * x).sum().backward()",
       note="a CPU leaf moved to the device: the backward of the copy is a copy to the host"),
    _s("bwd-03", "TSL414", "p = nn.Parameter(torch.zeros(()))\n(p.exp() * x).mean().backward()",
       note="a CPU 0-dim Parameter"),
    _s("bwd-04", "TSL414", "w = torch.zeros((), device=d, requires_grad=True)\n(w * x).sum().backward()", rule=None,
       note="the leaf is on the device"),
    _s("bwd-05", "TSL414", "w = torch.randn(1000, 16, device=d, requires_grad=True)\n"
       "F.embedding(torch.randint(0, 1000, (8192,), device=d), w).sum().backward()", rule=None,
       note="embedding backward, 8192 indices (the sorting path)"),
    _s("bwd-06", "TSL414", "w = torch.randn(1000, 16, device=d, requires_grad=True)\n"
       "F.embedding(torch.randint(0, 1000, (64,), device=d), w).sum().backward()", rule=None,
       note="embedding backward, 64 indices"),
    _s("bwd-07", "TSL414", "w = x.detach().requires_grad_()\nw[labels].sum().backward()", rule=None,
       note="backward of a long-index gather (index_put with accumulate)"),
    _s("bwd-08", "TSL414", "w = x.detach().requires_grad_()\nw[:, labels].square().sum().backward()", rule=None,
       note="backward of a gather on dim 1"),
    _s("bwd-09", "TSL414", "emb = nn.Embedding(100, 8, sparse=True).to(d)\nemb(labels).sum().backward()",
       note="sparse embedding gradient"),
    _s("bwd-10", "TSL414", "F.cross_entropy(self.lin(x), labels, ignore_index=0).backward()", rule=None,
       note="cross entropy with ignore_index"),
    _s("bwd-11", "TSL414", "w = torch.randn(1000, 16, device=d, requires_grad=True)\n"
       "torch.index_select(w, 0, torch.randint(0, 1000, (8192,), device=d)).sum().backward()", rule=None,
       note="index_select backward (index_add)"),
    _s("bwd-12", "TSL414", "bag = nn.EmbeddingBag(1000, 16, mode='mean').to(d)\n"
       "bag(torch.randint(0, 1000, (64, 128), device=d)).sum().backward()",
       note="embedding bag backward, 8192 indices"),
    _s("bwd-13", "TSL414", "w = x.detach().requires_grad_()\nw.masked_fill(mask, 0.0).sum().backward()", rule=None,
       note="masked_fill backward"),
    _s("bwd-14", "TSL414", "w = x.detach().requires_grad_()\nh = w.cpu()\nh.sum().backward()", rule="TSL003",
       note="a graph through .cpu(): the forward copy waits too"),
    _s("bwd-15", "TSL414", "w = torch.randn(8, 8, requires_grad=True)\n(w.to(d) @ x).sum().backward()",
       note="a CPU weight moved in the forward"),
    # Tensor-heavy code that never syncs (near-misses for every family)
    _s("free-01", "none", "v = len(x)", rule=None),
    _s("free-02", "none", "v = x.shape", rule=None),
    _s("free-03", "none", "v = x.size(0) + x.numel() + x.dim()", rule=None),
    _s("free-04", "none", "v = x.sum()", rule=None),
    _s("free-05", "none", "v = mask.all()", rule=None),
    _s("free-06", "none", "v = torch.sort(x)", rule=None),
    _s("free-07", "none", "v = torch.topk(x, 3)", rule=None),
    _s("free-08", "none", "v = torch.multinomial(probs, 1)", rule=None),
    _s("free-09", "none", "v = F.cross_entropy(x, labels)", rule=None),
    _s("free-10", "none", "v = F.cross_entropy(x, labels, ignore_index=-1)", rule=None),
    _s("free-11", "none", "v = torch.argmax(x)", rule=None),
    _s("free-12", "none", "v = torch.searchsorted(boundaries, x)", rule=None),
    _s("free-13", "none", "v = torch.isnan(x).any()", rule=None),
    _s("free-14", "none", "v = torch.cat([x, y])", rule=None),
    _s("free-15", "none", 'v = torch.einsum("ij,jk->ik", x, y)', rule=None),
    _s("free-16", "none", "v = torch.randperm(8, device=d)", rule=None),
    _s("free-17", "none", "v = x.scatter(1, t[:, None], 1.0)", rule=None),
    _s("free-18", "none", "v = torch.median(x)", rule=None),
    _s("free-19", "none", "v = torch.quantile(x, 0.5)", rule=None, note="Python-float q"),
    _s("free-20", "none", "v = x * 2.5 + zero_dim", rule=None),
    _s("free-21", "none", "v = torch.clamp(x, max=zero_dim)", rule=None),
    _s("free-22", "none", "v = x.new_full((2,), 3.0)", rule=None),
    _s("free-23", "none", "v = F.embedding(labels, x)", rule=None),
    _s("free-24", "none", "v = x.float().contiguous().chunk(2)", rule=None),
    # Suspected host-side checks
    _s("misc-01", "none", "v = torch.quantile(x, q)", rule=None, note="tensor q: no host check measured"),
    # TSL408 save-cuda-state
    _s("save-01", "TSL408", "torch.save(self.lin.state_dict(), io.BytesIO())", note="parameters on the GPU"),
    _s("save-02", "TSL408", 'torch.save({"step": 1, "lr": 0.1}, io.BytesIO())', note="Python values only"),
    _s("save-03", "TSL408", "torch.save(loss.detach(), io.BytesIO())", note="a 0-dim GPU tensor"),
    # TSL411 load-to-device
    _s("load-01", "TSL411", "v = torch.load(io.BytesIO(self.ckpt), map_location=d)", note="a host checkpoint"),
    _s("load-02", "TSL411", "v = torch.load(io.BytesIO(self.ckpt))", note="a host checkpoint, no map_location"),
    _s("load-03", "TSL411", 'v = torch.load(io.BytesIO(self.ckpt), map_location="cpu")'),
    _s("load-04", "TSL411", "v = torch.load(io.BytesIO(self.gpu_ckpt))", note="saved from the GPU"),
]


def statement_by_id() -> dict:
    return {s.id: s for s in STATEMENTS}


def _indent(text: str, level: int) -> str:
    return textwrap.indent(text, "    " * level)


def module_source(statement: Statement, probe: bool = False, cpu: bool = False) -> Tuple[str, int, int]:
    """The module text for one statement, and the 1-based first and last line of the statement.

    With ``probe``, the statement is bracketed by ``PROBE.start()`` / ``PROBE.stop()`` (a global the
    harness provides), so it is timed in its own frame, after the prelude.
    """
    setup, prelude = SETUP, PRELUDE
    if cpu:
        for old, new in CPU_SUBSTITUTIONS:
            setup, prelude = setup.replace(old, new), prelude.replace(old, new)
    head = HEADER + "\n\nclass M(nn.Module):\n    def __init__(self):\n" + _indent(setup, 2)
    head += "\n    def forward(self, x):\n" + _indent(prelude, 2)
    if probe:
        head += "        PROBE.start()\n        try:\n"
        body = _indent(statement.source, 3) + "\n"
        tail = "        finally:\n            PROBE.stop()\n"
    else:
        body = _indent(statement.source, 2) + "\n"
        tail = ""
    first = head.count("\n") + 1
    last = first + statement.source.count("\n")
    return head + body + tail, first, last


def prelude_source() -> str:
    """The set-up and prelude alone (a module that must lint clean)."""
    return module_source(Statement("prelude", "none", "pass"))[0]
