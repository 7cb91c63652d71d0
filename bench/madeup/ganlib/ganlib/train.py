import numpy as np
import torch
import torch.nn.functional as F

from .models import Discriminator, Generator, gradient_penalty


class GANTrainer:
    def __init__(self, device="cuda", lr=2e-4, n_critic=5, gp_weight=10.0):
        self.device = device
        self.G = Generator().to(device)  # SYNC
        self.D = Discriminator().to(device)  # SYNC
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))
        self.n_critic = n_critic
        self.gp_weight = gp_weight
        self.fixed_noise = torch.randn(64, self.G.nz, 1, 1, device=device)
        self.history = {"d": [], "g": [], "d_x": []}

    def d_step(self, real):
        z = torch.randn(real.size(0), self.G.nz, 1, 1, device=self.device)
        fake = self.G(z).detach()
        d_real, d_fake = self.D(real), self.D(fake)
        loss = d_fake.mean() - d_real.mean() + self.gp_weight * gradient_penalty(self.D, real, fake)
        self.opt_d.zero_grad()
        loss.backward()
        self.opt_d.step()
        return loss.detach(), d_real.mean().detach()

    def g_step(self, batch_size):
        z = torch.randn(batch_size, self.G.nz, 1, 1, device=self.device)
        loss = -self.D(self.G(z)).mean()
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()
        return loss.detach()

    def fit(self, loader, epochs=5, log_every=100):
        it = 0
        for epoch in range(epochs):
            for real, _ in loader:
                real = real.to(self.device)  # SYNC
                d_loss, d_x = self.d_step(real)
                if it % self.n_critic == 0:
                    g_loss = self.g_step(real.size(0))
                    self.history["g"].append(g_loss.item())  # SYNC
                self.history["d"].append(d_loss.item())  # SYNC
                self.history["d_x"].append(d_x)
                if it % log_every == 0:
                    print(f"[{epoch}] it {it} D {d_loss:.3f} D(x) {d_x:.3f}")  # SYNC
                it += 1
            self.save_samples(epoch)

    @torch.no_grad()
    def save_samples(self, epoch):
        imgs = self.G(self.fixed_noise)
        imgs = ((imgs + 1) * 127.5).clamp(0, 255).to(torch.uint8)
        grid = imgs.permute(0, 2, 3, 1).cpu().numpy()  # SYNC
        np.save(f"samples_{epoch}.npy", grid)

    def mean_d_x(self):
        return torch.stack(self.history["d_x"]).mean().item()  # SYNC


@torch.no_grad()
def inception_stats(model, images, batch_size=50):
    feats = []
    for i in range(0, len(images), batch_size):
        batch = images[i:i + batch_size].cuda()  # SYNC
        batch = F.interpolate(batch, size=(299, 299), mode="bilinear")
        feats.append(model(batch).cpu())  # SYNC
    feats = torch.cat(feats).numpy()
    return feats.mean(0), np.cov(feats, rowvar=False)
