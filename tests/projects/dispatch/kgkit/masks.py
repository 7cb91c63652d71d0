"""Masks declared through the project's dtype-named aliases (kgkit/typing.py)."""

import torch

from .typing import BoolTensor, IndexTensor, LongTensor


class Scorer:
    def __init__(self):
        self.scores = torch.zeros(4, 3, device="cuda")

    def keep(self, batch_filter: BoolTensor | None = None):
        if batch_filter is not None:
            return self.scores.repeat(1, 2)[batch_filter]  # error: TSL103
        return self.scores

    def gather(self, index: LongTensor, rows: IndexTensor):
        a = self.scores[index]  # an integer index: no wait
        b = self.scores[rows]  # dtype unknown: not reported
        return a, b
