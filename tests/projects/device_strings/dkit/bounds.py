import torch


class Bounds:
    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi

    def make(self, device):
        # every caller passes "cpu": a tensor made on the host, no copy
        self.lo = torch.as_tensor(self.lo, device=device)
        self.hi = torch.as_tensor(self.hi, device=device)


class Sampler:
    def __init__(self, n, device="cpu"):
        self.n = n
        self.device = device

    def draw(self):
        return torch.randint(0, self.n, (4,), device=self.device)
