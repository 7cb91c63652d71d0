import copy
import math

import torch
import torch.distributed as dist


def is_dist():
    return dist.is_available() and dist.is_initialized()


def reduce_dict(d, average=True):
    if not is_dist():
        return d
    keys = sorted(d)
    vals = torch.stack([d[k] for k in keys])
    dist.all_reduce(vals)
    if average:
        vals /= dist.get_world_size()
    return dict(zip(keys, vals))


class ModelEma:
    def __init__(self, model, decay=0.9999, warmup=2000):
        self.module = copy.deepcopy(model).eval()
        self.decay = decay
        self.warmup = warmup
        self.updates = 0

    @torch.no_grad()
    def update(self, model):
        self.updates += 1
        d = self.decay * (1 - math.exp(-self.updates / self.warmup))
        for e, m in zip(self.module.state_dict().values(), model.state_dict().values()):
            if e.dtype.is_floating_point:
                e.mul_(d).add_(m.detach(), alpha=1 - d)


class SmoothedValue:
    def __init__(self, window=20):
        self.values = []
        self.window = window
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.values = (self.values + [value])[-self.window:]
        self.count += n
        self.total += value * n

    @property
    def median(self):
        return torch.tensor(self.values).median().item()

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)

    def __str__(self):
        return f"{self.median:.4f} ({self.global_avg:.4f})"


class MetricLogger:
    def __init__(self, delimiter="  "):
        self.meters = {}
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()  # SYNC
            self.meters.setdefault(k, SmoothedValue()).update(v)

    def __str__(self):
        return self.delimiter.join(f"{k}: {m}" for k, m in self.meters.items())
