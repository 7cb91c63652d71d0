"""Rehearsal memory for continual learning: a fixed number of examples per class seen so far."""
import random

import torch


class ReservoirBuffer:
    def __init__(self, capacity, device="cpu"):
        self.capacity = capacity
        self.device = device
        self.x, self.y = [], []
        self.seen = 0

    def add(self, x, y):
        for xi, yi in zip(x, y):
            self.seen += 1
            if len(self.x) < self.capacity:
                self.x.append(xi.to(self.device))
                self.y.append(yi.to(self.device))
            else:
                j = random.randrange(self.seen)
                if j < self.capacity:
                    self.x[j], self.y[j] = xi.to(self.device), yi.to(self.device)

    def sample(self, n):
        idx = torch.randperm(len(self.x))[:n]
        return torch.stack([self.x[i] for i in idx]), torch.stack([self.y[i] for i in idx])

    def __len__(self):
        return len(self.x)


class ClassBalancedBuffer:
    """Per-class tensors kept on the host; a batch drawn from them is copied to the device."""

    def __init__(self, per_class):
        self.per_class = per_class
        self.store = {}

    def update(self, x, y):
        x, y = x.cpu(), y.cpu()  # SYNC
        for c in torch.unique(y).tolist():
            keep = x[y == c][: self.per_class]
            old = self.store.get(c)
            self.store[c] = keep if old is None else torch.cat([old, keep])[-self.per_class:]

    def classes(self):
        return sorted(self.store)

    def draw(self, n, device):
        xs, ys = [], []
        for c, x in self.store.items():
            k = min(n // max(len(self.store), 1), len(x))
            idx = torch.randperm(len(x))[:k]
            xs.append(x[idx])
            ys.append(torch.full((k,), c, dtype=torch.long))
        return torch.cat(xs).to(device), torch.cat(ys).to(device)  # SYNC
