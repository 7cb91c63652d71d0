import torch


class Meter:
    def __init__(self, device):
        self.device = device
        self.reset()

    def reset(self):
        self.total = torch.zeros((), device=self.device)
        self.count = 0

    def update(self, x):
        self.total += x.sum()
        self.count += 1

    def compute(self):
        return self.total.item() / max(self.count, 1)  # error: TSL001

    def calls(self):
        return int(self.count)  # ok: a Python int
