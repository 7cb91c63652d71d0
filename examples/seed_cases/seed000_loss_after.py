# Copy of ../shared/cases/seed000_loss_after.py (the project's seed cases, from the seed articles named below),
# kept here because only the repository travels to the GPU machine. Do not edit: re-copy.
# The same loss after the seed article's fixes: no finding expected.
import torch
import torch.nn as nn


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def weighted_nll(pred, target, weight):
    r = torch.arange(target.shape[0], device="cuda:0")
    nll = -pred[r, target]
    nll = nll * weight[target]
    nll = nll / weight[target].sum()
    sum_nll = nll.sum()
    return sum_nll


class CrossEntropyLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.Tensor([0.1] * 10).cuda()
        self.nll = torch.nn.NLLLoss(self.weight)

    def forward(self, input, target):
        pred = log_softmax(input)
        loss = self.nll(pred, target)
        return loss
