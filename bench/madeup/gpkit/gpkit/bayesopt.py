"""Bayesian optimisation: expected improvement over random candidates, one point per round."""
import torch
from torch.distributions import Normal

from gpkit.models import ExactGP, fit


def expected_improvement(model, X, best_f):
    mean, var = model.posterior(X)
    sigma = var.sqrt()
    u = (mean - best_f) / sigma
    normal = Normal(torch.zeros_like(u), torch.ones_like(u))  # SYNC
    return sigma * (u * normal.cdf(u) + normal.log_prob(u).exp())  # SYNC


def optimize(objective, bounds, n_init=8, rounds=20, raw_samples=512, device="cuda"):
    lo, hi = bounds[0].to(device), bounds[1].to(device)
    d = lo.shape[0]
    train_x = lo + (hi - lo) * torch.rand(n_init, d, device=device)
    train_y = objective(train_x)
    for r in range(rounds):
        model = fit(ExactGP(train_x, train_y, ard_dims=d).to(device), iters=50, verbose=False)  # SYNC
        candidates = torch.rand(raw_samples, d)
        candidates = lo + (hi - lo) * candidates.to(device)  # SYNC
        ei = expected_improvement(model, candidates, train_y.max())
        best = candidates[ei.argmax()].unsqueeze(0)  # SYNC
        y = objective(best)
        train_x, train_y = torch.cat([train_x, best]), torch.cat([train_y, y])
        print(f"round {r}: best {train_y.max().item():.4f}")  # SYNC
    return train_x[train_y.argmax()], train_y.max()  # SYNC
