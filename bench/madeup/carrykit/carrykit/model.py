import torch
from torch import nn

from carrykit.ops import RunningState, class_masks, firsts, gather_masked, maybe_pair, split_valid, stats


class Tagger(nn.Module):
    def __init__(self, n_in, n_tags):
        super().__init__()
        self.proj = nn.Linear(n_in, n_tags)
        self.n_tags = n_tags
        self.state = RunningState()

    def forward(self, x, lengths, labels):
        logits = self.proj(x)
        mask, n_valid = split_valid(x, lengths)
        flat = logits[mask]  # SYNC
        buf = torch.zeros(512, self.n_tags, device=x.device)
        buf[:n_valid] = flat  # SYNC
        got = maybe_pair(logits.mean(-1), self.training)
        if got is not None:
            positive, top = got
            logits = logits + logits[positive].mean()  # SYNC
        s = stats(logits)
        clean = logits[s["valid"]]  # SYNC
        first_tag = logits[:, :, s["peak"]]  # SYNC
        masks = class_masks(labels, self.n_tags)
        per_class = [logits[m].mean() for m in masks]  # SYNC
        heads = firsts(logits.mean(1))
        lead = logits[:, heads[0]]  # SYNC
        head, *rest = firsts(logits.mean(1))
        tail = logits[:, head]  # SYNC
        picked = gather_masked(logits, labels > 0)
        self.state.update(logits, labels)
        kept, seen = self.state.compute(logits)
        return logits.sum() + clean.sum() + first_tag.sum() + sum(per_class) + lead.sum() + tail.sum() + picked.sum() + kept.sum()


def train(model, loader, opt, device="cuda"):
    model = model.to(device)  # SYNC
    for x, lengths, labels in loader:
        x = x.to(device, non_blocking=True)
        lengths = lengths.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        loss = model(x, lengths, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
