import torch
from torch import nn

from normkit import consts
from normkit.consts import MEAN, STD


class Normalize(nn.Module):
    """Another file's host constants, copied to the device on every call: a method of an imported
    value (`MEAN.to(d)`, `consts.STD.to(d)`), not a function of that name."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", MEAN.clone()[:, None, None])  # ok: made once, moved with the module

    def forward(self, x):
        mean = MEAN.to(x.device)[:, None, None]  # error: TSL202
        std = consts.STD.to(x.device)[:, None, None]  # error: TSL202
        if STD.min() <= 0:  # ok: a host tensor
            raise ValueError("std must be positive")
        return (x - mean) / std + self.mean * 0


def train(model, loader, opt, device="cuda"):
    for x in loader:
        loss = model(x.to(device, non_blocking=True)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
