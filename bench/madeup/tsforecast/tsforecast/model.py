import numpy as np
import torch
from torch import nn

from .scalers import TemporalNorm


class MLPForecaster(nn.Module):
    def __init__(self, input_size, horizon, hidden=128, scaler_type="robust", quantiles=None):
        super().__init__()
        self.input_size = input_size
        self.horizon = horizon
        self.quantiles = torch.tensor(quantiles if quantiles is not None else [0.5])
        self.scaler = TemporalNorm(scaler_type)
        self.mlp = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),
                                 nn.Linear(hidden, horizon * len(self.quantiles)))

    def forward(self, windows):
        x = self.scaler.transform(windows["insample_y"], windows["insample_mask"])
        out = self.mlp(x).view(x.shape[0], self.horizon, -1)
        return self.scaler.inverse_transform(out.transpose(1, 2)).transpose(1, 2)

    def loss(self, y_hat, y):
        q = self.quantiles.to(y_hat.device)  # SYNC
        err = y.unsqueeze(-1) - y_hat
        return torch.max(q * err, (q - 1) * err).mean()


class Forecaster:
    def __init__(self, model, lr=1e-3, max_steps=500, val_check_steps=100, early_stop_patience=-1, device=None):
        self.model = model
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)  # SYNC
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.max_steps = max_steps
        self.val_check_steps = val_check_steps
        self.patience = early_stop_patience
        self.train_trajectories = []
        self.valid_trajectories = []

    def _to_device(self, batch):
        return {k: v.to(self.device) for k, v in batch.items()}  # SYNC

    def fit(self, loader, val_loader=None):
        step, best, bad = 0, np.inf, 0
        while step < self.max_steps:
            for batch in loader:
                batch = self._to_device(batch)
                y_hat = self.model(batch)
                loss = self.model.loss(y_hat, batch["outsample_y"])
                if torch.isnan(loss):  # SYNC
                    raise ValueError("loss is nan")
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                step += 1
                self.train_trajectories.append((step, loss.detach().cpu().item()))  # SYNC
                if val_loader is not None and step % self.val_check_steps == 0:
                    val = self.validate(val_loader)
                    self.valid_trajectories.append((step, val))
                    if val < best:
                        best, bad = val, 0
                    else:
                        bad += 1
                    if self.patience > 0 and bad >= self.patience:
                        return self
                if step >= self.max_steps:
                    break
        return self

    def validate(self, loader):
        self.model.eval()
        losses = []
        with torch.no_grad():
            for batch in loader:
                batch = self._to_device(batch)
                y_hat = self.model(batch)
                losses.append(self.model.loss(y_hat, batch["outsample_y"]))
        self.model.train()
        return torch.stack(losses).mean().item()  # SYNC

    def predict(self, loader):
        self.model.eval()
        preds = []
        with torch.no_grad():
            for batch in loader:
                y_hat = self.model(self._to_device(batch))
                preds.append(y_hat.cpu())  # SYNC
        return torch.cat(preds).numpy()
