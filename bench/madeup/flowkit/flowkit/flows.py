import math

import torch
from torch import nn


class StandardNormal(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features
        self.register_buffer("_log_z", torch.tensor(0.5 * features * math.log(2 * math.pi)), persistent=False)

    def log_prob(self, inputs):
        if inputs.shape[1] != self.features:  # ok: a size
            raise ValueError("wrong number of features")
        return -0.5 * (inputs ** 2).sum(dim=1) - self._log_z

    def sample(self, n):
        return torch.randn(n, self.features, device=self._log_z.device)


class Flow(nn.Module):
    def __init__(self, transform, distribution):
        super().__init__()
        self._transform = transform
        self._distribution = distribution

    def log_prob(self, inputs):
        noise, logabsdet = self._transform(inputs)
        return self._distribution.log_prob(noise) + logabsdet

    def sample(self, n):
        noise = self._distribution.sample(n)
        samples, _ = self._transform.inverse(noise)
        return samples

    def nll_bits_per_dim(self, inputs):
        nll = -self.log_prob(inputs).mean()
        return (nll / (inputs.shape[1] * math.log(2))).item()  # SYNC
