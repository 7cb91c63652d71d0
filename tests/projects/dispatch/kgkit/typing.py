"""Tensor aliases of the project, the way typed libraries spell them."""

from typing import TypeAlias

import torch

LongTensor: TypeAlias = torch.Tensor
FloatTensor = torch.Tensor
MappedTriples: TypeAlias = LongTensor  # an alias of an alias
Device = torch.device  # a class that is not a tensor: stays a plain name
BoolTensor: TypeAlias = torch.Tensor  # named for its dtype: a mask wherever it is declared
IndexTensor: TypeAlias = torch.Tensor  # a name that promises no dtype
