import torch
from torch import nn


class AutoRegressive(nn.Module):
    """Calls the function a subclass hands it, once per step."""

    def decode_autoregressive(self, decode_one, n_steps, first):
        outs = []
        prev = first
        for idx in range(n_steps):
            prev = decode_one(idx, prev)
            outs.append(prev)
        return torch.stack(outs)

    def on_host(self, fn):
        return fn(torch.zeros(3))


def apply_each(fn, xs):
    return [fn(x, limit=0.5) for x in xs]  # the comprehension's `x`: what `xs` holds
