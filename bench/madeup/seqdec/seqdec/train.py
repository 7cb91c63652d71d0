import math

import torch
from torch import nn

from .decoding import greedy_decode


class LabelSmoothingLoss(nn.Module):
    def __init__(self, vocab, padding_idx, smoothing=0.1):
        super().__init__()
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.vocab = vocab

    def forward(self, logp, target):
        true_dist = torch.full_like(logp, self.smoothing / (self.vocab - 2))
        true_dist.scatter_(1, target.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        pad = target == self.padding_idx
        true_dist[pad] = 0.0
        n_tokens = (~pad).sum()
        return -(true_dist * logp).sum() / n_tokens


def run_epoch(model, batches, criterion, opt, scheduler, pad_id, device):
    total_loss, total_tokens = 0.0, 0
    for i, batch in enumerate(batches):
        src = batch["src"].to(device, non_blocking=True)
        tgt = batch["tgt"].to(device, non_blocking=True)
        out = model(src, tgt[:, :-1])
        loss = criterion(out.reshape(-1, out.size(-1)), tgt[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        scheduler.step()
        n = (tgt[:, 1:] != pad_id).sum()
        total_loss += loss.detach() * n
        total_tokens += n
        if i % 50 == 1:
            lr = opt.param_groups[0]["lr"]
            print(f"step {i} loss {loss:.3f} lr {lr:.2e}")  # SYNC
    return total_loss / total_tokens


def evaluate_bleu_proxy(model, batches, device, bos_id, eos_id):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in batches:
            src = batch["src"].to(device)  # SYNC
            tgt = batch["tgt"].to(device)  # SYNC
            hyp = greedy_decode(model, src, None, tgt.size(1), bos_id, eos_id)
            L = min(hyp.size(1), tgt.size(1))
            correct += (hyp[:, :L] == tgt[:, :L]).sum().item()  # SYNC
            total += tgt[:, :L].numel()
    return correct / max(total, 1)


def perplexity(loss):
    return math.exp(loss)
