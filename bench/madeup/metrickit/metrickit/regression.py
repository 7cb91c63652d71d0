import torch

from .base import Metric


class MeanSquaredError(Metric):
    def __init__(self, squared=True):
        super().__init__()
        self.squared = squared
        self.add_state("sum_squared_error", torch.tensor(0.0))
        self.add_state("total", torch.tensor(0))

    def update(self, preds, target):
        diff = preds - target
        self.sum_squared_error += torch.sum(diff * diff)
        self.total += target.numel()

    def compute(self):
        mse = self.sum_squared_error / self.total
        return mse if self.squared else torch.sqrt(mse)


class PearsonCorrCoef(Metric):
    def __init__(self):
        super().__init__()
        for name in ("mean_x", "mean_y", "var_x", "var_y", "corr_xy", "n_total"):
            self.add_state(name, torch.tensor(0.0))

    def update(self, preds, target):
        n_obs = preds.numel()
        mx_new = (self.n_total * self.mean_x + preds.sum()) / (self.n_total + n_obs)
        my_new = (self.n_total * self.mean_y + target.sum()) / (self.n_total + n_obs)
        self.var_x += ((preds - mx_new) * (preds - self.mean_x)).sum()
        self.var_y += ((target - my_new) * (target - self.mean_y)).sum()
        self.corr_xy += ((preds - mx_new) * (target - self.mean_y)).sum()
        self.mean_x, self.mean_y = mx_new, my_new
        self.n_total += n_obs

    def compute(self):
        if (self.var_x < 1e-8).any() or (self.var_y < 1e-8).any():  # SYNC
            return torch.full_like(self.corr_xy, float("nan"))
        return self.corr_xy / (self.var_x * self.var_y).sqrt()


def evaluate(model, loader, metrics, device="cuda"):
    model.eval()
    for m in metrics.values():
        m.to(device)  # SYNC
        m.reset()
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)  # SYNC
            out = model(x)
            for m in metrics.values():
                m.update(out, y)
    return {name: m.compute().item() for name, m in metrics.items()}  # SYNC
