import torch
from torch import nn

from altkit.data import Batch, stream


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 8)

    def forward(self, tokens):
        return self.emb(tokens).sum(-1)


@torch.no_grad()
def evaluate(seqs, device="cuda"):
    model = Scorer().to(device)
    batches = [Batch.padded(seqs[i:i + 8]) for i in range(0, len(seqs), 8)]
    total = 0.0
    for b in stream(batches, device):
        scores = model(b.tokens)
        kept = scores[b.mask]  # error: TSL103
        total += kept.sum()
    return total
