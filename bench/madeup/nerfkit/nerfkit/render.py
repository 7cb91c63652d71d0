import torch
import torch.nn as nn


class TinyField(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, width), nn.ReLU(), nn.Linear(width, 4))

    def forward(self, pts):
        out = self.net(pts)
        return torch.relu(out[..., 0]), torch.sigmoid(out[..., 1:])


def composite(sigma, rgb, z):
    delta = torch.cat([z[:, 1:] - z[:, :-1], torch.full_like(z[:, :1], 1e10)], -1)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1), weights


def render(field, rays_o, rays_d, near=2.0, far=6.0, n=32, chunk=1024):
    from nerfkit.rays import sample_along
    outs = []
    for s in range(0, rays_o.shape[0], chunk):
        pts, z = sample_along(rays_o[s:s + chunk], rays_d[s:s + chunk], near, far, n)
        sigma, rgb = field(pts)
        color, weights = composite(sigma, rgb, z)
        if (weights.sum(-1) < 1e-4).any():  # SYNC
            color = color + (1.0 - weights.sum(-1, keepdim=True))
        outs.append(color)
    return torch.cat(outs)


def prune_empty(pts, sigma, thresh=0.01):
    keep = sigma > thresh
    return pts[keep], sigma[keep]  # SYNC
