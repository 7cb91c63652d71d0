import numpy as np
import torch


class Interval:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def uniform_points(self, n, boundary=True):
        if boundary:
            return np.linspace(self.lo, self.hi, n, dtype=np.float32)[:, None]
        return np.linspace(self.lo, self.hi, n + 1, endpoint=False, dtype=np.float32)[1:, None]

    def random_points(self, n):
        return np.random.uniform(self.lo, self.hi, size=(n, 1)).astype(np.float32)

    def on_boundary(self, x):
        return np.isclose(x, self.lo) | np.isclose(x, self.hi)


def to_tensor(x, device, requires_grad=False):
    t = torch.as_tensor(x, dtype=torch.float32, device=device)  # SYNC
    if requires_grad:
        t.requires_grad_()
    return t
