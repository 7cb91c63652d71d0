from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class Scores:
    hits: torch.Tensor
    rank: int
    host: Optional[torch.Tensor] = None
