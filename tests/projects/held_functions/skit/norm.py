from torch import nn

from skit.stats import robust_stats, std_stats


class Norm(nn.Module):
    """Functions of another file picked at run time: calling the value gives what each returns;
    the scale it stores is read by another file's module."""

    def __init__(self, kind="robust", dim=-1):
        super().__init__()
        self.stats = {"robust": robust_stats, "standard": std_stats}.get(kind, std_stats)
        self.dim = dim

    def forward(self, x):
        shift, scale = self.stats(x, self.dim)
        self.scale = scale
        return (x - shift) / scale
