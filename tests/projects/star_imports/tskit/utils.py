from .imports import *

__all__ = ["probs", "host_table", "hits"]


def probs(logits):
    return F.softmax(logits, dim=-1)


def host_table(n):
    return torch.arange(n, device=HOST)  # torch and HOST, through the star import


def hits(scores, threshold):
    return torch.nonzero(scores > threshold)  # error: TSL101


def _norm(x):
    return x / x.norm()
