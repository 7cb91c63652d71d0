import torch
from torch import nn

from inheritkit.base import PositionalBase, Scorer, mean_over_time, running


class Sinusoidal(PositionalBase):
    def forward(self, x):
        n = x.shape[1]
        pos = self.table[:n].to(x.device)  # SYNC
        ang = self.angles(pos)
        emb = torch.cat([ang.sin(), ang.cos()], dim=-1)
        return x * self.scale.to(x.device) + emb  # SYNC


class Model(nn.Module):
    def __init__(self, dim=32, n_cls=10):
        super().__init__()
        self.pos = Sinusoidal(512, dim)
        self.out = nn.Linear(dim, n_cls)
        self.scorer = Scorer()

    def forward(self, x, mask, y):
        h = self.pos(x)
        pooled = mean_over_time(h, mask[..., None].float())
        logits = self.out(pooled)
        p, hit = self.scorer.score(logits, y)
        wrong = logits[~hit]  # SYNC
        return logits, p, wrong


def train(model, loader, opt, device="cuda"):
    model.cuda()  # SYNC
    acc = 0.0
    for x, mask, y in loader:
        x, mask, y = x.to(device, non_blocking=True), mask.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits, p, wrong = model(x, mask, y)
        loss = nn.functional.cross_entropy(logits, y) - p.log().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = running(acc, (logits.argmax(-1) == y).float().mean())
    if acc > 0.5:  # SYNC
        print("good")
    return acc
