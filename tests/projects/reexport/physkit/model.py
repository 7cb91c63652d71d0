from .backend import torch
from .compat import F, torch as th
from . import ops


def fit(net, opt, batches):
    for x, y in batches:
        out = net(x)
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        active = torch.nonzero(out)  # error: TSL101  (torch from a backend set at run time)
        kept = th.unique(y)  # error: TSL102  (torch re-exported by compat)
        ops.torch_ish(out)
    return active, kept
