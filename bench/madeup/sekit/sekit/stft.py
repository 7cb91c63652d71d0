import math

import torch


class STFT:
    def __init__(self, n_fft=512, hop=128):
        self.n_fft, self.hop = n_fft, hop
        self.window = torch.hann_window(n_fft)

    def __call__(self, wav):
        window = self.window.to(wav.device)  # SYNC
        return torch.stft(wav, self.n_fft, self.hop, window=window, return_complex=True)

    def inverse(self, spec, length):
        window = torch.hann_window(self.n_fft, device=spec.device)
        return torch.istft(spec, self.n_fft, self.hop, window=window, length=length)  # SYNC


def si_snr(est, ref, eps=1e-8):
    est = est - est.mean(dim=-1, keepdim=True)
    ref = ref - ref.mean(dim=-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + eps)
    noise = est - proj
    return 10 * torch.log10(proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


def pesq_like(est, ref):
    scores = []
    for e, r in zip(est.cpu().numpy(), ref.cpu().numpy()):  # SYNC
        scores.append(float(((e - r) ** 2).mean()))
    return sum(scores) / len(scores)


def db_to_amp(db):
    return math.pow(10.0, db / 20.0)
