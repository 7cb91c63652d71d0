import torch
from torch import distributions as D
from torch import nn


class MixtureDensityHead(nn.Module):
    def __init__(self, in_dim, out_dim, n_components=5):
        super().__init__()
        self.k = n_components
        self.out_dim = out_dim
        self.pi = nn.Linear(in_dim, n_components)
        self.mu = nn.Linear(in_dim, n_components * out_dim)
        self.sigma = nn.Linear(in_dim, n_components * out_dim)

    def distribution(self, h):
        logits = self.pi(h)
        mu = self.mu(h).view(-1, self.k, self.out_dim)
        sigma = torch.nn.functional.softplus(self.sigma(h)).view(-1, self.k, self.out_dim) + 1e-4
        mix = D.Categorical(logits=logits)  # SYNC
        comp = D.Independent(D.Normal(mu, sigma), 1)  # SYNC
        return D.MixtureSameFamily(mix, comp)

    def forward(self, h, y):
        return -self.distribution(h).log_prob(y).mean()  # SYNC


def em_step(x, means, variances, weights):
    n, k = x.shape[0], means.shape[0]
    log_resp = torch.empty(n, k, device=x.device)
    for j in range(k):
        log_resp[:, j] = D.Normal(means[j], variances[j].sqrt(), validate_args=False).log_prob(x).sum(-1) + weights[j].log()
    resp = torch.softmax(log_resp, dim=1)
    nk = resp.sum(0) + 1e-10
    means = resp.T @ x / nk[:, None]
    variances = (resp.T @ (x * x)) / nk[:, None] - means ** 2
    weights = nk / n
    return means, variances.clamp_min(1e-6), weights


def fit_gmm(x, k=8, iters=100, tol=1e-4):
    means = x[torch.randperm(x.shape[0], device=x.device)[:k]]
    variances = torch.ones_like(means)
    weights = torch.full((k,), 1.0 / k, device=x.device)
    prev = None
    for _ in range(iters):
        means, variances, weights = em_step(x, means, variances, weights)
        if prev is not None and torch.allclose(means, prev, atol=tol):  # SYNC
            break
        prev = means
    return means, variances, weights
