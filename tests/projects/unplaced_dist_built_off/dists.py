import torch


def gaussian(loc, scale):
    return torch.distributions.Normal(loc, scale, validate_args=False)
