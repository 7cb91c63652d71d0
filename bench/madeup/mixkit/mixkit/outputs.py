from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class ModelOutput:
    logits: torch.Tensor
    loss: Optional[torch.Tensor] = None
    hidden: Optional[torch.Tensor] = None
