import math

import torch
import torch.nn.functional as F
from torch import nn


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        mask = torch.rand(x.shape[0], device=x.device) < self.p
        x = x.clone()
        x[mask] = x[mask].flip(-1)  # SYNC
        return x


class RandomApply(nn.Module):
    def __init__(self, fn, p=0.8):
        super().__init__()
        self.fn = fn
        self.p = p

    def forward(self, x):
        if torch.rand(1) < self.p:
            return self.fn(x)
        return x


class RandomRotation(nn.Module):
    def __init__(self, degrees=30.0):
        super().__init__()
        self.degrees = degrees

    def forward(self, x):
        b = x.shape[0]
        angle = torch.empty(b).uniform_(-self.degrees, self.degrees).to(x.device) * math.pi / 180  # SYNC
        cos, sin = torch.cos(angle), torch.sin(angle)
        zeros = torch.zeros_like(cos)
        theta = torch.stack([torch.stack([cos, -sin, zeros], 1), torch.stack([sin, cos, zeros], 1)], 1)
        grid = F.affine_grid(theta, x.shape, align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


class ColorJitter(nn.Module):
    def __init__(self, brightness=0.4, contrast=0.4):
        super().__init__()
        self.brightness = brightness
        self.contrast = contrast

    def forward(self, x):
        b = x.shape[0]
        bf = torch.empty(b, 1, 1, 1, device=x.device).uniform_(1 - self.brightness, 1 + self.brightness)
        x = x * bf
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        cf = torch.empty(b, 1, 1, 1, device=x.device).uniform_(1 - self.contrast, 1 + self.contrast)
        x = (x - mean) * cf + mean
        if x.min() < 0 or x.max() > 1:  # SYNC
            x = x.clamp(0, 1)
        return x


class Cutout(nn.Module):
    def __init__(self, size=16):
        super().__init__()
        self.size = size

    def forward(self, x):
        b, _, h, w = x.shape
        cy = torch.randint(0, h, (b,), device=x.device)
        cx = torch.randint(0, w, (b,), device=x.device)
        ys = torch.arange(h, device=x.device)[None, :, None]
        xs = torch.arange(w, device=x.device)[None, None, :]
        hole = ((ys - cy[:, None, None]).abs() < self.size // 2) & ((xs - cx[:, None, None]).abs() < self.size // 2)
        return x * (~hole)[:, None]


def gpu_pipeline():
    return nn.Sequential(RandomHorizontalFlip(), RandomApply(ColorJitter()), RandomRotation(), Cutout())


def train(model, loader, opt, device="cuda", epochs=1):
    aug = gpu_pipeline()
    for _ in range(epochs):
        for x, y in loader:
            x = aug(x.to(device, non_blocking=True))
            y = y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
