import torch
from torch import Tensor, nn

from .checks import check_is_tensor, check_range, check_shape


def rgb_to_hsv(image: Tensor, eps: float = 1e-8) -> Tensor:
    check_is_tensor(image)
    check_shape(image, ["B", "3", "H", "W"])
    maxc, max_idx = image.max(dim=-3)
    minc = image.min(dim=-3)[0]
    v = maxc
    deltac = maxc - minc
    s = deltac / (v + eps)
    deltac = torch.where(deltac == 0, torch.ones_like(deltac), deltac)
    rc, gc, bc = torch.unbind(maxc.unsqueeze(-3) - image, dim=-3)
    h1 = bc - gc
    h2 = (rc - bc) + 2.0 * deltac
    h3 = (gc - rc) + 4.0 * deltac
    h = torch.stack((h1, h2, h3), dim=-3) / deltac.unsqueeze(-3)
    h = torch.gather(h, dim=-3, index=max_idx.unsqueeze(-3)).squeeze(-3)
    h = (h / 6.0) % 1.0
    return torch.stack((2 * torch.pi * h, s, v), dim=-3)


def adjust_brightness(image: Tensor, factor) -> Tensor:
    check_range(image, 0.0, 1.0, "image")
    if isinstance(factor, float):
        factor = torch.tensor([factor], device=image.device, dtype=image.dtype)  # SYNC
    elif not isinstance(factor, Tensor):
        raise TypeError("factor")
    if (factor < 0).any():  # SYNC
        raise ValueError("factor must be non-negative")
    return (image + factor.view(-1, 1, 1, 1)).clamp(0.0, 1.0)


def equalize(image: Tensor, bins: int = 256) -> Tensor:
    out = []
    for img in image.flatten(0, -3):
        hist = torch.histc(img * 255, bins=bins, min=0, max=255)
        lut = (torch.cumsum(hist, 0) / hist.sum() * 255).clamp(0, 255)
        idx = (img * 255).long().clamp(0, bins - 1)
        out.append(lut[idx] / 255)
    return torch.stack(out).view_as(image)


class ColorJitter(nn.Module):
    def __init__(self, brightness=0.2, p=0.5):
        super().__init__()
        self.brightness = brightness
        self.p = p

    def forward(self, image: Tensor) -> Tensor:
        b = image.shape[0]
        apply = torch.rand(b, device=image.device) < self.p
        if not apply.any():  # SYNC
            return image
        factors = (torch.rand(b, device=image.device) * 2 - 1) * self.brightness
        out = image.clone()
        out[apply] = adjust_brightness(image[apply], factors[apply])  # SYNC
        return out
