import functools

import torch
from torch import nn


class PositionalBase(nn.Module):
    def __init__(self, max_len, dim):
        super().__init__()
        self.table = torch.arange(max_len)
        self.register_buffer("freqs", torch.exp(torch.arange(0, dim, 2) * (-9.2 / dim)))
        self.scale = torch.tensor(dim ** 0.5)

    def angles(self, positions):
        return positions[:, None].float() * self.freqs[None, :]


class Scorer:
    def __init__(self, temperature=1.0):
        self.temperature = temperature

    def score(self, logits, targets):
        probs = (logits / self.temperature).softmax(-1)
        hit = probs.argmax(-1) == targets
        return probs.gather(-1, targets[:, None]).squeeze(-1), hit


def masked_mean(x, mask, dim=-1):
    return (x * mask).sum(dim) / mask.sum(dim).clamp_min(1)


def running(acc, value):
    return acc + value


mean_over_time = functools.partial(masked_mean, dim=1)
