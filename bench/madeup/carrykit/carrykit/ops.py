"""Helpers whose results are bool masks, 0-dim counts and indexes, in tuples, dicts and lists."""
from typing import Dict, List, Optional, Tuple

import torch


def split_valid(x, lengths) -> Tuple[torch.Tensor, torch.Tensor]:
    steps = torch.arange(x.shape[1], device=x.device)
    mask = steps[None, :] < lengths[:, None]
    return mask, mask.sum()


def maybe_pair(x, enabled: bool):
    if not enabled:
        return None
    return x > 0, x.argmax()


def stats(x) -> Dict[str, torch.Tensor]:
    valid = torch.isfinite(x)
    return {"valid": valid, "count": valid.sum(), "peak": x.argmax()}


def class_masks(labels, n: int) -> List[torch.Tensor]:
    masks = []
    for c in range(n):
        masks.append(labels == c)
    return masks


def firsts(scores):
    return tuple(row.argmax() for row in scores)


def gather_masked(x, m):
    return x[m]  # SYNC


class RunningState:
    def __init__(self, device="cuda"):
        self.device = device
        self.reset()

    def reset(self):
        self.seen = torch.zeros((), dtype=torch.long, device=self.device)
        self.ok = None

    def update(self, pred, target):
        self.seen += target.numel()
        self.ok = pred.argmax(-1) == target

    def compute(self, x):
        return x[self.ok], int(self.seen)  # SYNC
