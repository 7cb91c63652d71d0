"""Containers on ``self`` that one method makes empty and others fill: what they hold is what
every method puts in (appends, string-keyed stores), and a subclass's updates start from what
its base class (in this file or another) stores."""

import torch


class Meter:
    def __init__(self, device=None):
        self.device = device
        self.reset()

    def reset(self):
        self.seen = []
        self.last = {}
        self.total = torch.zeros((), device=self.device)

    def update(self, loss):
        self.seen.append(loss.detach())
        self.last["loss"] = loss.detach()

    def first(self):
        return self.seen[0].item()  # error: TSL001

    def latest(self):
        if self.last["loss"] > 1:  # error: TSL302
            return True
        return False


class HostMeter:
    def __init__(self):
        self.vals = []
        self.by_name = {}

    def update(self, name, loss):
        self.vals.append(loss.detach().cpu())  # error: TSL003
        self.by_name[name] = loss.detach().to("cpu")  # error: TSL003

    def report(self):
        stacked = torch.stack(self.vals)
        if stacked.mean() > 1:  # ok: CPU tensors
            return stacked.max().item()  # ok: a CPU tensor
        for name in self.by_name:
            if self.by_name[name].isnan():  # ok: stored on the CPU
                return 0.0
        return 0.0


class HostCount:
    def __init__(self):
        self.total = torch.zeros(())
