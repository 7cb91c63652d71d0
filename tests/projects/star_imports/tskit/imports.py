"""The library's shared imports: its modules take them with `from .imports import *` (no `__all__`:
every public name goes, the modules it imports included)."""
import numpy as np
import torch
import torch.nn as nn  # noqa: F401
import torch.nn.functional as F  # noqa: F401

HOST = torch.device("cpu")
_SCRATCH = torch.zeros(3)
