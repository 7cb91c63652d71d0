import math

import torch
from torch import nn


class SpectralConv2d(nn.Module):
    def __init__(self, in_ch, out_ch, modes1, modes2):
        super().__init__()
        self.modes1, self.modes2 = modes1, modes2
        scale = 1 / (in_ch * out_ch)
        self.w1 = nn.Parameter(scale * torch.rand(in_ch, out_ch, modes1, modes2, dtype=torch.cfloat))
        self.w2 = nn.Parameter(scale * torch.rand(in_ch, out_ch, modes1, modes2, dtype=torch.cfloat))

    @staticmethod
    def compl_mul(a, w):
        return torch.einsum("bixy,ioxy->boxy", a, w)

    def forward(self, x):
        b, _, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :self.modes1, :self.modes2] = self.compl_mul(x_ft[:, :, :self.modes1, :self.modes2], self.w1)
        out_ft[:, :, -self.modes1:, :self.modes2] = self.compl_mul(x_ft[:, :, -self.modes1:, :self.modes2], self.w2)
        return torch.fft.irfft2(out_ft, s=(h, w))


def grid(shape, device):
    b, h, w = shape[0], shape[2], shape[3]
    gx = torch.linspace(0, 1, h, device=device).view(1, 1, h, 1).expand(b, 1, h, w)
    gy = torch.linspace(0, 1, w, device=device).view(1, 1, 1, w).expand(b, 1, h, w)
    return torch.cat([gx, gy], dim=1)


class FNO2d(nn.Module):
    def __init__(self, modes=12, width=32, layers=4, in_ch=1, out_ch=1, padding=8):
        super().__init__()
        self.padding = padding
        self.lift = nn.Conv2d(in_ch + 2, width, 1)
        self.spectral = nn.ModuleList(SpectralConv2d(width, width, modes, modes) for _ in range(layers))
        self.pointwise = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(layers))
        self.proj = nn.Sequential(nn.Conv2d(width, 128, 1), nn.GELU(), nn.Conv2d(128, out_ch, 1))

    def forward(self, x):
        x = torch.cat([x, grid(x.shape, x.device)], dim=1)
        x = self.lift(x)
        if self.padding:
            x = nn.functional.pad(x, [0, self.padding, 0, self.padding])
        for i, (s, p) in enumerate(zip(self.spectral, self.pointwise)):
            x = s(x) + p(x)
            if i < len(self.spectral) - 1:
                x = nn.functional.gelu(x)
        if self.padding:
            x = x[..., :-self.padding, :-self.padding]
        return self.proj(x)


class LpLoss:
    def __init__(self, p=2, relative=True, reduce=True):
        self.p, self.relative, self.reduce = p, relative, reduce

    def __call__(self, pred, y):
        b = pred.shape[0]
        diff = torch.norm(pred.reshape(b, -1) - y.reshape(b, -1), self.p, 1)
        if self.relative:
            diff = diff / torch.norm(y.reshape(b, -1), self.p, 1)
        return diff.mean() if self.reduce else diff.sum()


class UnitGaussianNormalizer:
    def __init__(self, x, eps=1e-5):
        self.mean = torch.mean(x, 0)
        self.std = torch.std(x, 0)
        self.eps = eps

    def cuda(self):
        self.mean = self.mean.cuda()  # SYNC
        self.std = self.std.cuda()  # SYNC
        return self

    def encode(self, x):
        return (x - self.mean) / (self.std + self.eps)

    def decode(self, x):
        return x * (self.std + self.eps) + self.mean


def train(model, loader, test_loader, normalizer, epochs=10, lr=1e-3, device="cuda"):
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, 100, 0.5)
    loss_fn = LpLoss()
    normalizer.cuda()
    for ep in range(epochs):
        model.train()
        train_l2 = 0.0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            out = normalizer.decode(model(x))
            loss = loss_fn(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            train_l2 += loss.item()  # SYNC
        sched.step()
        model.eval()
        test_l2 = 0.0
        with torch.no_grad():
            for x, y in test_loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                test_l2 += loss_fn(normalizer.decode(model(x)), y).item()  # SYNC
        print(ep, train_l2 / len(loader), test_l2 / len(test_loader), math.sqrt(train_l2))
