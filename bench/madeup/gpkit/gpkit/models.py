import math
import warnings

import torch
from torch import nn

from gpkit.kernels import Positive, RBFKernel, ScaleKernel
from gpkit.linalg import inv_quad_logdet, psd_safe_cholesky


class ExactGP(nn.Module):
    def __init__(self, train_x, train_y, ard_dims=1):
        super().__init__()
        self.train_x, self.train_y = train_x, train_y
        self.mean_constant = nn.Parameter(torch.zeros(()))
        self.covar = ScaleKernel(RBFKernel(ard_dims))
        self.raw_noise = nn.Parameter(torch.tensor(-2.0))
        self.noise_constraint = Positive(1e-4)

    @property
    def noise(self):
        return self.noise_constraint.transform(self.raw_noise)

    def prior(self, x):
        K = self.covar(x, x)
        return self.mean_constant.expand(x.shape[0]), K

    def marginal_log_likelihood(self):
        mean, K = self.prior(self.train_x)
        K = K + self.noise * torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
        inv_quad, logdet = inv_quad_logdet(K, self.train_y - mean)
        n = self.train_y.shape[-1]
        return -0.5 * (inv_quad + logdet + n * math.log(2 * math.pi)) / n

    @torch.no_grad()
    def posterior(self, test_x):
        mean, K = self.prior(self.train_x)
        K = K + self.noise * torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
        L = psd_safe_cholesky(K)
        Ks = self.covar(self.train_x, test_x)
        alpha = torch.cholesky_solve((self.train_y - mean).unsqueeze(-1), L)
        pred_mean = self.mean_constant + (Ks.transpose(-1, -2) @ alpha).squeeze(-1)
        v = torch.cholesky_solve(Ks, L)
        pred_var = self.covar(test_x, test_x, diag=True) - (Ks * v).sum(0)
        if (pred_var < 0).any():  # SYNC
            warnings.warn("negative predictive variances clamped to zero")
        return pred_mean, pred_var.clamp_min(1e-9)


def fit(model, iters=100, lr=0.1, verbose=True):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for i in range(iters):
        opt.zero_grad()
        loss = -model.marginal_log_likelihood()
        loss.backward()
        if verbose and i % 10 == 0:
            ls = model.covar.base_kernel.lengthscale
            print(f"iter {i}: loss {loss.item():.3f} lengthscale {ls.mean().item():.3f}")  # SYNC
        opt.step()
    return model
