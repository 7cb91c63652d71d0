import torch
from torch import nn

from .solvers import AdaptiveSolver, FixedGridSolver


class ODEFunc(nn.Module):
    def __init__(self, dim, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, hidden), nn.Tanh(), nn.Linear(hidden, dim))
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        tt = torch.ones_like(y[..., :1]) * t
        return self.net(torch.cat([tt, y], dim=-1))


class NeuralODE(nn.Module):
    def __init__(self, dim, adaptive=False, method="rk4"):
        super().__init__()
        self.func = ODEFunc(dim)
        self.solver = AdaptiveSolver(self.func) if adaptive else FixedGridSolver(self.func, method)
        self.register_buffer("t_default", torch.tensor([0.0, 1.0]))

    def forward(self, y0, t=None):
        if t is None:
            t = self.t_default
        return self.solver.integrate(y0, t)


def train_step(model, opt, y0, t, target):
    opt.zero_grad()
    pred = model(y0, t)
    loss = (pred[-1] - target).pow(2).mean()
    loss.backward()
    opt.step()
    return loss.detach()


def fit(model, opt, batches, epochs=10, device="cuda"):
    t = torch.linspace(0, 1, 10).to(device)  # SYNC
    history = []
    for epoch in range(epochs):
        for y0, target in batches:
            y0, target = y0.to(device), target.to(device)  # SYNC
            loss = train_step(model, opt, y0, t, target)
            history.append(loss)
        if epoch % 5 == 0:
            print(f"epoch {epoch} loss {history[-1]:.4f} nfe {model.func.nfe}")  # SYNC
    return torch.stack(history).cpu().numpy()  # SYNC
