import torch


def masked_median(x, mask, dim=-1, keepdim=True):
    x_nan = x.masked_fill(mask < 1, float("nan"))
    med, _ = x_nan.nanmedian(dim=dim, keepdim=keepdim)
    return torch.nan_to_num(med, nan=0.0)


def std_stats(x, mask, dim=-1, eps=1e-6):
    n = torch.clamp(mask.sum(dim=dim, keepdim=True), min=1.0)
    mean = (x * mask).sum(dim=dim, keepdim=True) / n
    var = ((x - mean) ** 2 * mask).sum(dim=dim, keepdim=True) / n
    std = torch.sqrt(var)
    std[std == 0] = 1.0
    std = std + eps
    return mean, std


def robust_stats(x, mask, dim=-1, eps=1e-6):
    med = masked_median(x, mask, dim)
    mad = masked_median((x - med).abs(), mask, dim)
    mad = torch.where(mad == 0, torch.ones_like(mad), mad)
    return med, mad + eps


class TemporalNorm(torch.nn.Module):
    def __init__(self, scaler_type="standard", dim=-1):
        super().__init__()
        self.stats = {"standard": std_stats, "robust": robust_stats}[scaler_type]
        self.dim = dim

    def transform(self, x, mask):
        shift, scale = self.stats(x, mask, dim=self.dim)
        self.x_shift, self.x_scale = shift, scale
        return (x - shift) / scale

    def inverse_transform(self, z, shift=None, scale=None):
        shift = self.x_shift if shift is None else shift
        scale = self.x_scale if scale is None else scale
        return z * scale + shift
