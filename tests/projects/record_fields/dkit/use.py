import torch
from torch import nn

from dkit.records import Batch, Hit, Plain


def make_batch(x):
    return Batch(x, x.abs() > 0.5)


def top(scores):
    return Hit(scores.argmax(), score=scores.max())


class Net(nn.Module):
    def forward(self, x: torch.Tensor):
        b = make_batch(x)
        y = b.x[b.valid]  # error: TSL103
        h = top(x.sum(1))
        z = x[h.index]  # error: TSL303
        host = Batch(x, valid=x.argmax().cpu())  # error: TSL003
        w = x[host.valid]  # ok: a CPU index
        p = Plain(x.argmax(), x)
        v = x[p.x]  # ok: its own __init__ decides what the field holds
        return y.sum() + z.sum() + w.sum() + v.sum()
