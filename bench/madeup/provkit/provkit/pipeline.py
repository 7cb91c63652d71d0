import torch

from provkit.consts import HOST, LUT, MEAN, STD, Palette, as_host, host_stats


class Sampler:
    def __init__(self, n, seed=0, device="cpu"):
        self.n = n
        self.gen = torch.Generator(device=device).manual_seed(seed)
        self.device = device

    def draw(self, k):
        idx = torch.randperm(self.n, generator=self.gen, device=self.device)[:k]
        if idx.max() >= self.n:  # ok: the sampler's device is the CPU default (no caller passes another)
            raise IndexError
        return idx


class Normalizer:
    def __init__(self, device="cpu"):
        self._device = device

    def __call__(self, x):
        return (x - MEAN.to(self._device)[:, None, None]) / STD.to(self._device)[:, None, None]  # SYNC


def colorize(mask):
    pal = Palette()
    rgb = pal.lookup(mask.cpu())  # SYNC
    if (rgb.sum(-1) == 0).all():  # ok: a host tensor
        return None
    return rgb


def summarize(features):
    mean, std = host_stats(features)
    if (std == 0).any():  # ok: host tensors
        print("constant features")
    table = as_host([1, 2, 3])
    return mean.tolist(), table.max().item()  # ok: host tensors


def curve(x):
    y = LUT[(x.clamp(0, 1) * 255).long().cpu()]  # SYNC
    if y.min() < 0:  # ok: a host tensor
        raise ValueError
    return y.to(HOST)


def train(model, images, opt, device="cuda"):
    norm = Normalizer(device=device)
    sampler = Sampler(len(images))
    for step in range(100):
        idx = sampler.draw(32)
        x = norm(images[idx].to(device))  # SYNC
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(summarize(x), colorize(x.argmax(1)))
