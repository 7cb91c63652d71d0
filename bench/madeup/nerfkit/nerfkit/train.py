import math

import torch

from nerfkit.rays import get_rays
from nerfkit.render import TinyField, render


def psnr(pred, target):
    mse = torch.mean((pred - target) ** 2)
    return -10.0 * torch.log10(mse)


class NerfTrainer:
    def __init__(self, images, poses, focal, device="cuda", batch_rays=1024):
        self.images = images.to(device)  # SYNC
        self.poses = poses.to(device)  # SYNC
        self.focal = focal
        self.field = TinyField().to(device)  # SYNC
        self.opt = torch.optim.Adam(self.field.parameters(), lr=5e-4)
        self.batch_rays = batch_rays
        self.best = -math.inf

    def step(self, it):
        k = torch.randint(0, self.images.shape[0], (1,)).item()
        img = self.images[k]
        h, w = img.shape[:2]
        rays_o, rays_d = get_rays(h, w, self.focal, self.poses[k])
        sel = torch.randint(0, h * w, (self.batch_rays,), device=img.device)
        target = img.reshape(-1, 3)[sel]
        pred = render(self.field, rays_o.reshape(-1, 3)[sel], rays_d.reshape(-1, 3)[sel])
        loss = torch.mean((pred - target) ** 2)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        score = psnr(pred.detach(), target)
        if score > self.best:  # SYNC
            self.best = score
        if it % 100 == 0:
            print(f"it {it} loss {loss.item():.4f} psnr {score:.2f}")  # SYNC
        return loss

    def fit(self, iters):
        for it in range(iters):
            self.step(it)
        return float(self.best)  # SYNC


def run():
    images = torch.rand(4, 32, 32, 3)
    poses = torch.eye(4).repeat(4, 1, 1)
    NerfTrainer(images, poses, 30.0).fit(10)
