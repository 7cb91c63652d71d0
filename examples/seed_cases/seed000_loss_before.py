# Copy of ../shared/cases/seed000_loss_before.py (the project's seed cases, from the seed articles named below),
# kept here because only the repository travels to the GPU machine. Do not edit: re-copy.
# Loss from the seed article "PyTorch model performance analysis and optimization, part 2"
# (000_6405cd15e5ea2c40.txt), as first written. Expected findings: H2D copy of a new
# host tensor inside forward, assert on tensor value, Python range used as tensor index.
import torch
import torch.nn as nn


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def weighted_nll(pred, target, weight):
    assert target.max() < 10                      # EXPECT: assert-on-tensor
    nll = -pred[range(target.shape[0]), target]   # EXPECT: range-index
    nll = nll * weight[target]
    nll = nll / weight[target].sum()
    sum_nll = nll.sum()
    return sum_nll


class CrossEntropyLoss(nn.Module):
    def forward(self, input, target):
        pred = log_softmax(input)
        loss = weighted_nll(pred, target, torch.Tensor([0.1] * 10).cuda())  # EXPECT: h2d-in-forward
        return loss
