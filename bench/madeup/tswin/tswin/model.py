import random

import torch
from torch import nn

from .scaling import RevIN, StandardScaler


def make_windows(series, lookback, horizon):
    n = series.shape[0] - lookback - horizon + 1
    idx = torch.arange(lookback + horizon)[None, :] + torch.arange(n)[:, None]
    windows = series[idx]
    return windows[:, :lookback], windows[:, lookback:]


class Seq2Seq(nn.Module):
    def __init__(self, n_features, hidden=64, horizon=24):
        super().__init__()
        self.revin = RevIN(n_features)
        self.encoder = nn.GRU(n_features, hidden, batch_first=True)
        self.decoder = nn.GRUCell(n_features, hidden)
        self.head = nn.Linear(hidden, n_features)
        self.horizon = horizon

    def forward(self, x, y=None, teacher_forcing=0.5):
        x = self.revin(x, "norm")
        _, h = self.encoder(x)
        h = h[0]
        inp = x[:, -1]
        outs = []
        for t in range(self.horizon):
            h = self.decoder(inp, h)
            pred = self.head(h)
            outs.append(pred)
            use_tf = y is not None and random.random() < teacher_forcing
            inp = y[:, t] if use_tf else pred
        return self.revin(torch.stack(outs, 1), "denorm")


def fit(model, series, lookback=96, horizon=24, epochs=20, batch=64, device="cuda", patience=3):
    scaler = StandardScaler().fit(series)
    x_all, y_all = make_windows(scaler.transform(series), lookback, horizon)
    n_val = len(x_all) // 5
    x_tr, y_tr, x_va, y_va = x_all[:-n_val], y_all[:-n_val], x_all[-n_val:], y_all[-n_val:]
    model = model.to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    best, bad = float("inf"), 0
    x_va, y_va = x_va.to(device), y_va.to(device)  # SYNC
    for epoch in range(epochs):
        perm = torch.randperm(len(x_tr))
        for i in range(0, len(perm), batch):
            idx = perm[i:i + batch]
            xb, yb = x_tr[idx].to(device), y_tr[idx].to(device)  # SYNC
            loss = nn.functional.mse_loss(model(xb, yb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            val = nn.functional.mse_loss(model(x_va), y_va)
        if val < best:  # SYNC
            best, bad = val.item(), 0  # SYNC
        else:
            bad += 1
            if bad >= patience:
                break
    return best
