"""Invertible transforms: each returns (outputs, log|det J|); composites add the log-determinants."""
import numpy as np
import torch
from torch import nn

from flowkit.splines import unconstrained_rqs


class Transform(nn.Module):
    def forward(self, inputs, context=None):
        raise NotImplementedError

    def inverse(self, inputs, context=None):
        raise NotImplementedError


class CompositeTransform(Transform):
    def __init__(self, transforms):
        super().__init__()
        self._transforms = nn.ModuleList(transforms)

    @staticmethod
    def _cascade(inputs, funcs, context):
        outputs = inputs
        total = inputs.new_zeros(inputs.shape[0])
        for func in funcs:
            outputs, logabsdet = func(outputs, context)
            total += logabsdet
        return outputs, total

    def forward(self, inputs, context=None):
        return self._cascade(inputs, self._transforms, context)

    def inverse(self, inputs, context=None):
        return self._cascade(inputs, [t.inverse for t in self._transforms[::-1]], context)


class ActNorm(Transform):
    def __init__(self, features):
        super().__init__()
        self.register_buffer("initialized", torch.tensor(False, dtype=torch.bool))
        self.log_scale = nn.Parameter(torch.zeros(features))
        self.shift = nn.Parameter(torch.zeros(features))

    def forward(self, inputs, context=None):
        if self.training and not self.initialized:  # SYNC
            self._initialize(inputs)
        outputs = torch.exp(self.log_scale) * inputs + self.shift
        return outputs, self.log_scale.sum() * inputs.new_ones(inputs.shape[0])

    def inverse(self, inputs, context=None):
        outputs = (inputs - self.shift) * torch.exp(-self.log_scale)
        return outputs, -self.log_scale.sum() * inputs.new_ones(inputs.shape[0])

    def _initialize(self, inputs):
        with torch.no_grad():
            std = inputs.std(dim=0)
            self.log_scale.data = -torch.log(std)
            self.shift.data = -(inputs / std).mean(dim=0)
            self.initialized.fill_(True)


class RandomPermutation(Transform):
    def __init__(self, features):
        super().__init__()
        self.register_buffer("_permutation", torch.randperm(features))

    def forward(self, inputs, context=None):
        return inputs[:, self._permutation], inputs.new_zeros(inputs.shape[0])  # ok: an index on the device

    def inverse(self, inputs, context=None):
        return inputs[:, torch.argsort(self._permutation)], inputs.new_zeros(inputs.shape[0])


class SplineCoupling(Transform):
    def __init__(self, mask, hidden=64, num_bins=8):
        super().__init__()
        mask = torch.as_tensor(mask)
        features = torch.arange(mask.numel())
        self.register_buffer("identity_features", features.masked_select(mask <= 0))
        self.register_buffer("transform_features", features.masked_select(mask > 0))
        self.num_bins = num_bins
        n_id, n_tr = len(self.identity_features), len(self.transform_features)
        self.net = nn.Sequential(nn.Linear(n_id, hidden), nn.ReLU(), nn.Linear(hidden, n_tr * (3 * num_bins - 1)))

    def _params(self, identity):
        p = self.net(identity).view(identity.shape[0], -1, 3 * self.num_bins - 1)
        w, h, d = p[..., :self.num_bins], p[..., self.num_bins:2 * self.num_bins], p[..., 2 * self.num_bins:]
        return w, h, d

    def forward(self, inputs, context=None, inverse=False):
        identity = inputs[:, self.identity_features]
        w, h, d = self._params(identity)
        out, lad = unconstrained_rqs(inputs[:, self.transform_features], w, h, d, inverse=inverse)
        outputs = torch.empty_like(inputs)
        outputs[:, self.identity_features] = identity
        outputs[:, self.transform_features] = out
        return outputs, lad.sum(dim=1)

    def inverse(self, inputs, context=None):
        return self.forward(inputs, context, inverse=True)


def checkerboard(features, even=True):
    mask = np.zeros(features)
    mask[::2] = 1 if even else 0
    mask[1::2] = 0 if even else 1
    return mask
