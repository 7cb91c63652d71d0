"""Type aliases that other files annotate with."""

from typing import List, Optional, TypeVar, Union

import numpy as np
import torch

NdarrayOrTensor = Union[np.ndarray, torch.Tensor]
ArrayLike = np.ndarray | torch.Tensor
NdarrayTensor = TypeVar("NdarrayTensor", bound=NdarrayOrTensor)
MaybeCount = Optional[int]
Names = List[str]
