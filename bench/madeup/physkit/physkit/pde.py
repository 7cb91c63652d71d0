import torch
from torch import nn


def gradients(u, x, order=1):
    for _ in range(order):
        u = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    return u


class Burgers:
    def __init__(self, nu=0.01 / 3.1416, device="cuda"):
        self.nu = nu
        self.device = device
        self.lb = torch.tensor([-1.0, 0.0])
        self.ub = torch.tensor([1.0, 1.0])

    def sample_interior(self, n):
        pts = torch.rand(n, 2, device=self.device)
        return self.lb.to(self.device) + pts * (self.ub - self.lb).to(self.device)  # SYNC

    def residual(self, model, xt):
        xt = xt.clone().requires_grad_(True)
        u = model(xt)
        du = gradients(u, xt)
        u_x, u_t = du[:, :1], du[:, 1:]
        u_xx = gradients(u_x, xt)[:, :1]
        return u_t + u * u_x - self.nu * u_xx

    def initial(self, n):
        x = torch.linspace(-1, 1, n, device=self.device)[:, None]
        xt = torch.cat([x, torch.zeros_like(x)], dim=1)
        return xt, -torch.sin(torch.pi * x)


class MLP(nn.Module):
    def __init__(self, width=64, depth=4):
        super().__init__()
        layers = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        self.net = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, x):
        return self.net(x)
