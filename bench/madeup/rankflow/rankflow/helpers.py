"""Helpers whose results carry a rank or a dtype to where they are used."""
from collections import namedtuple
from dataclasses import dataclass
from typing import List, Optional

import torch

Pick = namedtuple("Pick", ["index", "score"])


@dataclass
class Selection:
    keep: torch.Tensor
    best: torch.Tensor
    note: Optional[str] = None


def best_index(scores):
    return scores.argmax()


def best_pair(scores):
    i = scores.argmax()
    return i, scores[i]  # SYNC


def best_pick(scores):
    s, i = scores.max(dim=0)
    return Pick(index=i, score=s)


def select(scores, threshold):
    keep = scores > threshold
    return Selection(keep=keep, best=scores.argmax())


def masks_for(labels, classes: List[int]):
    return [labels == c for c in classes]


def top_rows(x, k):
    order = torch.argsort(x.sum(dim=1), descending=True)
    return [order[j] for j in range(k)]


def count_true(mask):
    return mask.sum()
