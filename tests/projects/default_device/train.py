import torch

from model import Net

torch.set_default_device("cuda")


def train(net, steps):
    for _ in range(steps):
        loss = net(torch.randn(4, 8)).sum()
        loss.backward()
