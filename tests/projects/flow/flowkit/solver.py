from torch import nn


class Solver:
    def step(self, t, t0, y0):
        # unannotated: net.py calls it through an attribute holding an instance
        if t == t0:  # error: TSL302
            return y0
        return y0 + t

    def count(self, n, limit):
        if n == limit:  # ok: net.py passes Python ints
            return 0
        return n


class Gate(nn.Module):
    def forward(self, x, m):
        if m.any():  # error: TSL302
            return x
        return x * 2
