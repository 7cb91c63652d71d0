from copy import deepcopy

import torch
from torch import nn


def dim_zero_cat(x):
    x = x if isinstance(x, (list, tuple)) else [x]
    x = [y.unsqueeze(0) if y.numel() == 1 and y.ndim == 0 else y for y in x]
    return torch.cat(x, dim=0)


class Metric(nn.Module):
    full_state_update = False

    def __init__(self):
        super().__init__()
        self._defaults = {}
        self._reductions = {}
        self._update_count = 0

    def add_state(self, name, default, dist_reduce_fx="sum"):
        if isinstance(default, torch.Tensor):
            default = default.contiguous()
        setattr(self, name, default)
        self._defaults[name] = deepcopy(default)
        self._reductions[name] = dist_reduce_fx

    def forward(self, *args, **kwargs):
        self.update(*args, **kwargs)
        return None

    def reset(self):
        self._update_count = 0
        for attr, default in self._defaults.items():
            if isinstance(default, torch.Tensor):
                setattr(self, attr, default.detach().clone().to(self.device))  # SYNC
            else:
                setattr(self, attr, [])

    @property
    def device(self):
        return self._device

    def _apply(self, fn, *args):
        this = super()._apply(fn, *args)
        for key, value in this._defaults.items():
            if isinstance(value, torch.Tensor):
                setattr(this, key, fn(getattr(this, key)))  # SYNC
            elif isinstance(value, list):
                setattr(this, key, [fn(v) for v in getattr(this, key)])
        this._device = fn(torch.zeros(1, device=getattr(this, "_device", "cpu"))).device  # SYNC
        return this
