import torch
import torch.distributed as dist


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def world():
    return dist.get_world_size() if dist.is_initialized() else 1


def reduce_mean(t):
    t = t.clone()
    if dist.is_initialized():
        dist.all_reduce(t)
        t /= world()
    return t


def gather_sizes(n, device):
    size = torch.tensor([n], device=device)  # SYNC
    sizes = [torch.zeros_like(size) for _ in range(world())]
    if dist.is_initialized():
        dist.all_gather(sizes, size)
    return [int(s.item()) for s in sizes]  # SYNC


class SmoothedValue:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        if isinstance(value, torch.Tensor):
            value = value.item()  # SYNC
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(self.count, 1)
