import math

import torch
import torch.nn.functional as F
from torch import distributions as D
from torch import nn


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden=128, mask_even=True):
        super().__init__()
        mask = torch.arange(dim) % 2 == (0 if mask_even else 1)
        self.register_buffer("mask", mask.float())
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, 2 * dim))

    def forward(self, x):
        x_masked = x * self.mask
        s, t = self.net(x_masked).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        y = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(-1)

    def inverse(self, y):
        y_masked = y * self.mask
        s, t = self.net(y_masked).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return y_masked + (1 - self.mask) * ((y - t) * torch.exp(-s))


class RealNVP(nn.Module):
    def __init__(self, dim, n_layers=6):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(dim, mask_even=i % 2 == 0) for i in range(n_layers)])
        self.register_buffer("base_loc", torch.zeros(dim))
        self.register_buffer("base_scale", torch.ones(dim))

    @property
    def base(self):
        return D.Independent(D.Normal(self.base_loc, self.base_scale), 1)  # SYNC

    def log_prob(self, x):
        logdet = torch.zeros(x.shape[0], device=x.device)
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        if torch.isnan(logdet).any():  # SYNC
            raise FloatingPointError("nan in log-determinant")
        return self.base.log_prob(x) + logdet  # SYNC

    def sample(self, n):
        z = self.base.sample((n,))
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


class VAE(nn.Module):
    def __init__(self, x_dim, z_dim=16, hidden=256):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, hidden), nn.ReLU(), nn.Linear(hidden, 2 * z_dim))
        self.dec = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, x_dim))
        self.z_dim = z_dim

    def forward(self, x):
        mu, log_var = self.enc(x).chunk(2, dim=-1)
        std = torch.exp(0.5 * log_var)
        q = D.Normal(mu, std, validate_args=False)
        z = q.rsample()
        logits = self.dec(z)
        rec = F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(-1)
        kl = D.kl_divergence(q, D.Normal(torch.zeros_like(mu), torch.ones_like(std), validate_args=False)).sum(-1)
        return rec, kl


def kl_weight(step, warmup=10000):
    return min(1.0, step / warmup)


def train_vae(model, loader, opt, epochs=10, device="cuda"):
    step = 0
    for epoch in range(epochs):
        total, n = 0.0, 0
        for x, _ in loader:
            x = x.view(x.shape[0], -1).to(device)  # SYNC
            rec, kl = model(x)
            loss = (rec + kl_weight(step) * kl).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach() * x.shape[0]
            n += x.shape[0]
            step += 1
        print(f"epoch {epoch}: elbo {-total / n:.3f}")  # SYNC


def train_flow(model, data, iters=1000, batch=512, lr=1e-3):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best = math.inf
    for it in range(iters):
        idx = torch.randint(0, data.shape[0], (batch,), device=data.device)
        x = data[idx]
        nll = -model.log_prob(x).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
        if nll < best:  # SYNC
            best = nll.item()  # SYNC
    return best
