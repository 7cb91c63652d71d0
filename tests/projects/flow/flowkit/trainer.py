"""A trainer whose device default only the package's own tests leave out: its users pick the device."""

import torch


class Trainer:
    def __init__(self, model, device="cpu"):
        self.model = model
        self.device = device

    def train_one_batch(self, sample):
        sample = {k: v.to(self.device) for k, v in sample.items()}  # error: TSL204
        return self.model(**sample).sum()

    def train(self, loader, optimizer):
        for sample in loader:
            loss = self.train_one_batch(sample)
            loss.backward()
            optimizer.step()


class Scaler:
    def __init__(self, device="cpu"):
        self.device = device

    def scale(self, x):
        return x * torch.tensor([2.0]).to(self.device)  # ok: the package builds it with the default


def default_scaler():
    return Scaler()
