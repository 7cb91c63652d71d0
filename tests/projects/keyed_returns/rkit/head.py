import torch
from torch import nn

from rkit.stats import summary


class Head(nn.Module):
    def forward(self, scores: torch.Tensor, boxes: torch.Tensor):
        info = summary(scores)
        a = boxes[info["where"]]  # error: TSL303
        b = boxes[info.get("valid")]  # error: TSL103
        c = boxes[info["host_where"]]  # ok: a CPU index is read on the host
        return a + b.sum() + c
