import torch
import torch.nn.functional as F
from torch import nn

from .features import Fbank, SpecAugment, normalize_utterances


class CTCModel(nn.Module):
    def __init__(self, vocab, hidden=256):
        super().__init__()
        self.fbank = Fbank()
        self.aug = SpecAugment()
        self.enc = nn.GRU(80, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, wav, wav_lens):
        feats = self.fbank(wav)
        feat_lens = torch.div(wav_lens, self.fbank.hop, rounding_mode="floor") + 1
        feats = normalize_utterances(feats, feat_lens)
        feats = self.aug(feats)
        h, _ = self.enc(feats.transpose(1, 2))
        return self.out(h).log_softmax(-1), feat_lens


def greedy_ctc(log_probs, lens, blank=0):
    best = log_probs.argmax(-1).cpu()  # SYNC
    hyps = []
    for seq, n in zip(best, lens.cpu()):  # SYNC
        seq = torch.unique_consecutive(seq[:n])
        hyps.append([int(t) for t in seq if t != blank])
    return hyps


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def fit(model, loader, opt, device="cuda", epochs=1, grad_clip=5.0):
    model.to(device)  # SYNC
    for epoch in range(epochs):
        for wav, wav_lens, targets, target_lens in loader:
            wav, wav_lens = wav.to(device, non_blocking=True), wav_lens.to(device, non_blocking=True)
            log_probs, feat_lens = model(wav, wav_lens)
            loss = F.ctc_loss(log_probs.transpose(0, 1), targets, feat_lens, target_lens, zero_infinity=True)  # SYNC
            opt.zero_grad()
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            if torch.isfinite(norm):  # SYNC
                opt.step()


@torch.no_grad()
def evaluate_wer(model, loader, device="cuda"):
    model.eval()
    errs = words = 0
    for wav, wav_lens, targets, target_lens in loader:
        log_probs, lens = model(wav.to(device), wav_lens.to(device))  # SYNC
        hyps = greedy_ctc(log_probs, lens)
        start = 0
        for h, n in zip(hyps, target_lens.tolist()):
            ref = targets[start:start + n].tolist()
            start += n
            errs += edit_distance(h, ref)
            words += len(ref)
    return errs / max(words, 1)
