"""Entry points for ``torchsync-lint --verify-entry``: the two seed losses in a training step.

Each function builds a small model, the loss from ``seed_cases/`` and a batch on the GPU, and
returns ``(step, (inputs, target))``: the verifier calls ``step(inputs, target)`` and attributes
every sync to the loss file's lines. Before/after pairs use the same model and data::

    torchsync-lint --verify-entry examples.seed_entries:loss000_before examples/seed_cases/seed000_loss_before.py
    torchsync-lint --verify-entry examples.seed_entries:loss001_after examples/seed_cases/seed001_masked_after.py

``examples/seed_step_time.py`` times the same steps.
"""

from __future__ import annotations

import importlib.util
import os

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "seed_cases")
DEVICE = "cuda"


def load_case(name: str):
    """Import ``seed_cases/<name>.py`` by path (the verifier matches frames by this file)."""
    path = os.path.join(CASES, name + ".py")
    spec = importlib.util.spec_from_file_location(f"seed_cases_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAST = {}  # the model and loss of the last entry built (seed_step_time.py times the loss alone too)


def make_step(model: nn.Module, loss_fn: nn.Module):
    LAST.update(model=model, loss_fn=loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step(inputs, target):
        logits = model(inputs)
        loss = loss_fn(logits, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return step


# -- seed 000: weighted cross-entropy over 10 classes (an MLP's logits) --------------------------

def _setup000(case: str, batch: int = 8192, width: int = 4096):
    torch.manual_seed(0)
    mod = load_case(case)
    model = nn.Sequential(nn.Linear(256, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 10)).to(DEVICE)
    loss_fn = mod.CrossEntropyLoss().to(DEVICE)
    inputs = torch.randn(batch, 256, device=DEVICE)
    target = torch.randint(0, 10, (batch,), device=DEVICE)
    return make_step(model, loss_fn), (inputs, target)


def loss000_before():
    return _setup000("seed000_loss_before")


def loss000_after():
    return _setup000("seed000_loss_after")


# -- seed 001: masked segmentation loss (a small conv net's per-pixel logits) -------------------

class SegNet(nn.Module):
    def __init__(self, classes: int = 10, width: int = 64) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, classes, 1),
        )

    def forward(self, x):
        return self.body(x)


def _setup001(case: str, batch: int = 16, size: int = 128):
    torch.manual_seed(0)
    mod = load_case(case)
    model = SegNet().to(DEVICE)
    loss_fn = mod.MaskedLoss().to(DEVICE)
    inputs = torch.randn(batch, 3, size, size, device=DEVICE)
    target = torch.randint(0, 10, (batch, size, size), device=DEVICE)  # class 9 is "background"
    return make_step(model, loss_fn), (inputs, target)


def loss001_before():
    return _setup001("seed001_masked_before")


def loss001_after():
    return _setup001("seed001_masked_after")


ENTRIES = {
    "seed000": (loss000_before, loss000_after),
    "seed001": (loss001_before, loss001_after),
}
