import math

import torch
from torch import nn


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_filterbank(n_mels, n_fft, sr, f_min=0.0, f_max=None):
    f_max = f_max or sr / 2
    mels = torch.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.floor((n_fft + 1) * hz / sr).long()
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for m in range(1, n_mels + 1):
        lo, c, hi = bins[m - 1].item(), bins[m].item(), bins[m + 1].item()
        for k in range(lo, c):
            fb[m - 1, k] = (k - lo) / max(c - lo, 1)
        for k in range(c, hi):
            fb[m - 1, k] = (hi - k) / max(hi - c, 1)
    return fb


class Fbank(nn.Module):
    def __init__(self, sr=16000, n_fft=400, hop=160, n_mels=80):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", mel_filterbank(n_mels, n_fft, sr))

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs() ** 2
        mel = torch.matmul(self.fb, power)
        return torch.log(mel + 1e-6)


class SpecAugment(nn.Module):
    def __init__(self, freq_mask=27, time_mask=100, n_freq=2, n_time=2):
        super().__init__()
        self.freq_mask, self.time_mask = freq_mask, time_mask
        self.n_freq, self.n_time = n_freq, n_time

    def forward(self, x):
        if not self.training:
            return x
        b, f, t = x.shape
        x = x.clone()
        for _ in range(self.n_freq):
            w = torch.randint(0, self.freq_mask + 1, (1,)).item()
            f0 = torch.randint(0, max(1, f - w), (1,)).item()
            x[:, f0:f0 + w, :] = 0
        for _ in range(self.n_time):
            w = torch.randint(0, min(self.time_mask, t) + 1, (b,), device=x.device)
            t0 = (torch.rand(b, device=x.device) * (t - w)).long()
            ar = torch.arange(t, device=x.device)[None, :]
            mask = (ar >= t0[:, None]) & (ar < (t0 + w)[:, None])
            x = x.masked_fill(mask[:, None, :], 0.0)
        return x


def normalize_utterances(feats, lengths):
    out = torch.zeros_like(feats)
    for i, n in enumerate(lengths.tolist()):  # SYNC
        seg = feats[i, :, :n]
        out[i, :, :n] = (seg - seg.mean(-1, keepdim=True)) / (seg.std(-1, keepdim=True) + 1e-5)
    return out
