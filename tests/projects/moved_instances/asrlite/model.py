import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, feats, lengths):
        return self.proj(feats), torch.div(lengths + 1, 2, rounding_mode="floor")
