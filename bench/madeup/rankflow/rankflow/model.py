import torch
from torch import nn

from rankflow.helpers import best_index, best_pair, best_pick, count_true, masks_for, select, top_rows


class Head(nn.Module):
    def __init__(self, n_in, n_out, names):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        self.names = list(names)
        self.prior = nn.Parameter(torch.zeros(n_out))

    def forward(self, x, labels):
        scores = self.fc(x).mean(0)
        i = best_index(scores)
        name = self.names[i]  # SYNC
        j, s = best_pair(scores)
        logits = self.fc(x)[:, j]  # SYNC
        pick = best_pick(scores)
        bias = self.prior[pick.index]  # SYNC
        sel = select(scores, 0.0)
        kept = scores[sel.keep]  # SYNC
        top = self.prior[sel.best]  # SYNC
        per_class = masks_for(labels, [0, 1, 2])
        first = x[per_class[0]]  # SYNC
        rows = top_rows(x, 2)
        head = x[rows[0]]  # SYNC
        n = count_true(labels > 0)
        if n > 0:  # SYNC
            logits = logits + bias + top + head.mean() + first.sum() + kept.sum()
        width = x[:, : x.shape[1] // 2]  # ok: a Python int
        return logits + width.sum(), name, s


def train(model, loader, opt, device="cuda"):
    model.to(device)  # SYNC
    for x, labels in loader:
        x, labels = x.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        logits, _name, _s = model(x, labels)
        loss = logits.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
