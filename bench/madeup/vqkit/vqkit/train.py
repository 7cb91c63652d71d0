import torch
from torch import nn

from .quantizer import VectorQuantizer, codebook_stats


class VQAutoEncoder(nn.Module):
    def __init__(self, in_ch=3, dim=64, codebook_size=512):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, dim, 4, 2, 1), nn.ReLU(), nn.Conv2d(dim, dim, 4, 2, 1))
        self.vq = VectorQuantizer(dim, codebook_size)
        self.dec = nn.Sequential(nn.ConvTranspose2d(dim, dim, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(dim, in_ch, 4, 2, 1))

    def forward(self, x):
        z = self.enc(x).permute(0, 2, 3, 1)
        q, codes, vq_loss = self.vq(z)
        return self.dec(q.permute(0, 3, 1, 2)), codes, vq_loss


class Trainer:
    def __init__(self, model, lr=2e-4, device="cuda", log_every=100):
        self.model = model.to(device)  # SYNC
        self.device = device
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.log_every = log_every
        self.step = 0

    def train_step(self, images):
        images = images.to(self.device, non_blocking=True)
        recon, codes, vq_loss = self.model(images)
        rec_loss = (recon - images).abs().mean()
        loss = rec_loss + vq_loss
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.step += 1
        if self.step % self.log_every == 0:
            stats = codebook_stats(codes, self.model.vq.codebook_size)
            print(f"step {self.step}: rec {rec_loss.item():.4f} ppl {stats['perplexity']:.1f} "  # SYNC
                  f"used {stats['used']}")  # SYNC
        return loss

    def fit(self, loader, epochs=1):
        for _ in range(epochs):
            for images, _labels in loader:
                loss = self.train_step(images)
                if not torch.isfinite(loss):  # SYNC
                    raise FloatingPointError("loss is not finite")
