"""A planted device-side assert for the verifier's evidence (tests/gpu/guard_evidence.sh): the
statement runs on the CPU, where the verifier looks for inputs, and asserts on the GPU (index out
of range), which breaks the CUDA context of the child process that runs it."""

import torch
from torch import nn


def planted_index(x):
    return torch.full((1,), 10**6 if x.device.type == "cuda" else 0, dtype=torch.long, device=x.device)


class Planted(nn.Module):
    def forward(self, x):
        return x[planted_index(x)].sum().item()
