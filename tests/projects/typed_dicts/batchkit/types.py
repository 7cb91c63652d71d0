"""A batch declared as a TypedDict: each key holds what its field declares."""

from typing import TypedDict

import torch


class Batch(TypedDict):
    x: torch.Tensor
    mask: torch.BoolTensor
    n: int
