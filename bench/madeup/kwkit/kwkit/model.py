import torch
from torch import nn

from kwkit.data import Batch, collate, stream


class Encoder(nn.Module):
    def __init__(self, vocab=1000, dim=64, n_cls=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, n_cls)
        self.reducers = {"mean": lambda h, m: (h * m[..., None]).sum(1) / m.sum(1, keepdim=True),
                         "first": lambda h, m: h[:, 0]}

    def forward(self, tokens, labels=None, reduce="mean"):
        h = self.emb(tokens)
        m = tokens != 0
        pooled = self.reducers[reduce](h, m.float())
        logits = self.out(pooled)
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels)
            return {"loss": loss, "logits": logits}
        return {"logits": logits}


def train(model, loader, opt, device="cuda"):
    model = model.to(device)  # SYNC
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        out = model(**batch)
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
        for name, value in out.items():
            if name == "loss":
                print(name, value.item())  # SYNC


@torch.no_grad()
def evaluate(model, seqs, device="cuda"):
    batches = [Batch.padded(seqs[i:i + 8]) for i in range(0, len(seqs), 8)]
    hits = 0
    for b in stream(batches, device):
        logits = model(b.tokens)["logits"]
        valid = logits[b.mask[:, 0]]  # SYNC
        hits += int((valid.argmax(-1) == 0).sum())  # SYNC
    return hits
