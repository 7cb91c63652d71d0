"""A training loop that calls methods on objects of unknown class."""

import torch

from .processors import Normalizer


class Trainer:
    def __init__(self, model, processor=None, normalizer=None, schedule=None, device="cuda"):
        self.model = model
        self.processor = processor
        self.normalizer = normalizer
        self.schedule = schedule
        self.device = device

    def fit(self, loader, opt):
        for sample in loader:
            loss = self.train_step(sample)
            loss.backward()
            opt.step()
            self.schedule.step(torch.ones(3, device="cuda"))

    def train_step(self, sample):
        if self.processor is not None:
            sample = self.processor.preprocess(sample)
        else:
            sample = {k: v.to(self.device) for k, v in sample.items()}  # error: TSL204
        out = self.model(sample["x"])
        self.normalizer.transform(torch.ones(3, device="cuda"))
        return out.sum()


def calibrate():
    Normalizer().transform(torch.ones(3))
