"""The package picks its device at import, in one branch or the other: either may be the one (the
last assignment in the file is no more likely than the first)."""
import os

import torch

device: torch.device

if torch.cuda.is_available() and os.environ.get("CHOICE_DEVICE") != "cpu":
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")
