import torch
from torch import nn

from sekit.stft import STFT


class MaskNet(nn.Module):
    def __init__(self, n_fft=512, hidden=256):
        super().__init__()
        self.stft = STFT(n_fft)
        bins = n_fft // 2 + 1
        self.rnn = nn.LSTM(bins, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, bins)
        self.floor = torch.tensor(1e-3)

    def forward(self, noisy):
        spec = self.stft(noisy)
        mag = spec.abs().clamp_min(1e-8)
        h, _ = self.rnn(mag.transpose(1, 2).log1p())
        mask = torch.sigmoid(self.proj(h)).transpose(1, 2)
        mask = torch.maximum(mask, self.floor.to(mask.device))  # SYNC
        return self.stft.inverse(spec * mask, noisy.shape[-1])


class Mixer:
    """Mixes clean speech with noise at a random SNR, on the loader's workers."""

    def __init__(self, snr_low=-5.0, snr_high=20.0):
        self.snr_low, self.snr_high = snr_low, snr_high

    def __call__(self, clean, noise):
        snr = torch.empty(()).uniform_(self.snr_low, self.snr_high)
        p_clean = clean.pow(2).mean()
        p_noise = noise.pow(2).mean().clamp_min(1e-10)
        scale = torch.sqrt(p_clean / (p_noise * 10 ** (snr / 10)))
        if not torch.isfinite(scale):  # ok: host tensors (a worker's)
            scale = torch.tensor(0.0)
        return clean + scale * noise, clean
