import torch
from torch import nn

from selkit.helpers import Selection, select


class Head(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.prior = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        scores = self.fc(x).mean(0)
        sel = select(scores, 0.0)
        kept = scores[sel.keep]  # error: TSL103
        top = self.prior[sel.best]  # error: TSL303
        made = Selection(scores > 1, scores.sum())
        if made.best > 0:  # error: TSL302
            top = top + kept.sum()
        return top


def train(model, normalizer, loader, opt, device="cuda"):
    normalizer.cuda()  # ok: another file's class has a `cuda` method of its own (TSL412 is cold-only: see TSL412_moved_in_place.py)
    for x in loader:
        loss = model(x.to(device, non_blocking=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
