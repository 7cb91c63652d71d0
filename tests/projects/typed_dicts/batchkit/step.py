"""Reads of a TypedDict's keys, declared in another file and in this one."""

from typing import TypedDict

import torch

from .types import Batch


class Extra(TypedDict):
    y: torch.Tensor
    k: int


class Head(torch.nn.Module):
    def forward(self, b: Batch, e: Extra, w: torch.Tensor):
        w = w.cuda()
        if b["n"] > 3:  # ok: an int
            w = w * 2
        z = w[b["mask"]]  # error: TSL103
        if e["k"] == 2:  # ok: an int
            z = z * 2
        if e["y"].sum() > 0:  # error: TSL302
            z = z * 2
        return z
