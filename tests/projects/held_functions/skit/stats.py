import torch


def robust_stats(x, dim):
    med = torch.median(x, dim=dim, keepdim=True).values
    return med, torch.median(torch.abs(x - med), dim=dim, keepdim=True).values


def std_stats(x, dim):
    return torch.mean(x, dim=dim, keepdim=True), torch.std(x, dim=dim, keepdim=True)
