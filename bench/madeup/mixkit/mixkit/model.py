import torch
import torch.nn as nn
import torch.nn.functional as F

from mixkit.outputs import ModelOutput


class Classifier(nn.Module):
    def __init__(self, dim=32, classes=5):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, classes)

    @property
    def device(self):
        return next(self.parameters()).device

    def forward(self, x, labels=None):
        h = self.enc(x)
        logits = self.head(h)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return ModelOutput(logits=logits, loss=loss, hidden=h)

    @torch.no_grad()
    def embed(self, batches):
        feats = []
        for xb in batches:
            feats.append(self.enc(xb.to(self.device)))  # SYNC
        return torch.cat(feats)
