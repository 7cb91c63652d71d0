"""A training step with the host-device syncs that torchsync-lint reports.

Run ``torchsync-lint examples/lint_demo.py``: every line marked ``# sync`` is a finding.
"""

import torch
import torch.nn.functional as F
from torch import nn


class MaskedLoss(nn.Module):
    def forward(self, logits, target, mask):
        loss = F.cross_entropy(logits, target, reduction="none")
        n_valid = mask.sum().item()  # sync
        print(f"valid tokens: {n_valid}, loss {loss.mean()}")  # sync
        return loss.sum() / n_valid


def train(model, loader, optimizer):
    criterion = MaskedLoss()
    history = []
    for inputs, target, mask in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), target, mask)
        loss.backward()
        optimizer.step()
        history.append(loss.item())  # sync
        if torch.isnan(loss):  # sync
            break
    return history
