import torch
from torch import nn

from .geometry import Interval, to_tensor


def gradient(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]


class FNN(nn.Module):
    def __init__(self, sizes, activation=torch.tanh):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.activation = activation

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


class Poisson1D:
    def __init__(self, geom, source, bc_value=0.0):
        self.geom = geom
        self.source = source
        self.bc_value = bc_value

    def residual(self, x, u):
        du = gradient(u, x)
        ddu = gradient(du, x)
        return -ddu - self.source(x)


class Model:
    def __init__(self, pde, net, device="cuda", num_domain=64, num_boundary=2):
        self.pde = pde
        self.net = net.to(device)  # SYNC
        self.device = device
        self.num_domain = num_domain
        self.num_boundary = num_boundary
        self.history = {"loss": [], "step": []}
        self.best = float("inf")

    def _points(self):
        x_dom = to_tensor(self.pde.geom.random_points(self.num_domain), self.device, requires_grad=True)
        x_bc = to_tensor(self.pde.geom.uniform_points(self.num_boundary), self.device)
        return x_dom, x_bc

    def losses(self, x_dom, x_bc):
        u = self.net(x_dom)
        res = self.pde.residual(x_dom, u)
        bc = self.net(x_bc) - self.pde.bc_value
        return [res.pow(2).mean(), bc.pow(2).mean()]

    def train(self, iterations=1000, lr=1e-3, display_every=100, resample_every=None):
        opt = torch.optim.Adam(self.net.parameters(), lr=lr)
        x_dom, x_bc = self._points()
        for it in range(iterations):
            if resample_every and it % resample_every == 0:
                x_dom, x_bc = self._points()
            losses = self.losses(x_dom, x_bc)
            total = torch.stack(losses).sum()
            opt.zero_grad()
            total.backward()
            opt.step()
            if it % display_every == 0:
                values = [l.item() for l in losses]  # SYNC
                self.history["loss"].append(values)
                self.history["step"].append(it)
                if total < self.best:  # SYNC
                    self.best = total.item()  # SYNC
        return self.history

    def predict(self, x):
        self.net.eval()
        xt = to_tensor(x, self.device)
        with torch.no_grad():
            y = self.net(xt)
        return y.cpu().numpy()  # SYNC
