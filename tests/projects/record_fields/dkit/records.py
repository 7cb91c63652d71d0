"""A dataclass and a NamedTuple whose fields are declared ``Tensor``: what a constructor call
stores says more (a bool mask, a 0-dim index, a tensor on the host)."""

from dataclasses import dataclass, field
from typing import NamedTuple

import torch


@dataclass
class Batch:
    x: torch.Tensor
    valid: torch.Tensor
    extra: dict = field(default_factory=dict)


class Hit(NamedTuple):
    index: torch.Tensor
    score: torch.Tensor


class Plain:
    x: torch.Tensor

    def __init__(self, a, b):
        self.x = b
