import torch


class Flow(torch.nn.Module):
    """A normalizing flow of the project: its own `log_prob`, no validation."""

    def log_prob(self, x):
        return -(x ** 2).sum(-1)
