from torch import nn

from skit.stats import host_stats, robust_stats, std_stats


class Norm(nn.Module):
    """Functions of another file, stored and picked at run time: calling the value gives what
    each returns."""

    def __init__(self, kind="robust", dim=-1):
        super().__init__()
        self.stats = {"robust": robust_stats, "standard": std_stats}[kind]
        self.fixed = host_stats
        self.dim = dim

    def forward(self, x):
        shift, scale = self.stats(x, self.dim)
        self.scale = scale
        lo, hi = self.fixed(x, self.dim)
        if hi == 0:  # ok: the stored function returns Python numbers
            hi = 1.0
        return (x - shift) / scale
