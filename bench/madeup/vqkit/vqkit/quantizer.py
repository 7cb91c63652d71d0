import torch
import torch.nn.functional as F
from torch import nn


def ema_inplace(moving_avg, new, decay):
    moving_avg.data.mul_(decay).add_(new, alpha=1 - decay)


def sample_vectors(samples, num):
    num_samples, device = samples.shape[0], samples.device
    if num_samples >= num:
        indices = torch.randperm(num_samples, device=device)[:num]
    else:
        indices = torch.randint(0, num_samples, (num,), device=device)
    return samples[indices]


class VectorQuantizer(nn.Module):
    def __init__(self, dim, codebook_size, decay=0.99, commitment=0.25, threshold_dead=2):
        super().__init__()
        self.codebook_size = codebook_size
        self.decay = decay
        self.commitment = commitment
        self.threshold_dead = threshold_dead
        self.register_buffer("embed", torch.randn(codebook_size, dim))
        self.register_buffer("cluster_size", torch.zeros(codebook_size))
        self.register_buffer("embed_avg", self.embed.clone())
        self.register_buffer("initted", torch.tensor(False))

    def init_embed_(self, data):
        if self.initted:  # SYNC
            return
        self.embed.data.copy_(sample_vectors(data, self.codebook_size))
        self.initted.data.copy_(torch.tensor(True))  # SYNC

    def expire_codes_(self, batch_samples):
        expired = self.cluster_size < self.threshold_dead
        if not torch.any(expired):  # SYNC
            return
        n = int(expired.sum())  # SYNC
        self.embed.data[expired] = sample_vectors(batch_samples, n)  # SYNC

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        self.init_embed_(flat)
        dist = torch.cdist(flat, self.embed)
        codes = dist.argmin(dim=-1)
        onehot = F.one_hot(codes, self.codebook_size).type(flat.dtype)
        quantized = F.embedding(codes, self.embed).view_as(x)
        if self.training:
            ema_inplace(self.cluster_size, onehot.sum(0), self.decay)
            ema_inplace(self.embed_avg, onehot.t() @ flat, self.decay)
            n = self.cluster_size.sum()
            smoothed = (self.cluster_size + 1e-5) / (n + self.codebook_size * 1e-5) * n
            self.embed.data.copy_(self.embed_avg / smoothed.unsqueeze(1))
            self.expire_codes_(flat)
        loss = self.commitment * F.mse_loss(quantized.detach(), x)
        quantized = x + (quantized - x).detach()
        return quantized, codes.view(x.shape[:-1]), loss


def codebook_stats(codes, codebook_size):
    counts = torch.bincount(codes.flatten(), minlength=codebook_size)  # SYNC
    probs = counts.float() / counts.sum()
    perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
    used = (counts > 0).sum()
    return {"perplexity": perplexity, "used": used}
