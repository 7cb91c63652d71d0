from .imports import *
from .backend import *
from . import probs, host_table


def fit(net, opt, loader):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()  # error: TSL204
        out = net(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        if probs(out).max() > 0.9:  # error: TSL302
            print("confident")
        table = host_table(10)
        if table.sum() > 3:  # ok: a host tensor
            print("host")
        classes = unique(y.cpu().numpy())  # error: TSL003
        seen = torch.unique(y)  # error: TSL102
    return classes, seen
