"""Processors a trainer holds without knowing their class (passed in from outside)."""

import torch


class Processor:
    def __init__(self, device="cuda"):
        self.device = device

    def preprocess(self, data_dict):
        # reached only through `self.processor.preprocess(sample)`: a loader's batch
        x = data_dict["x"].to(self.device)  # error: TSL204
        return {"x": x}


class PatchProcessor(Processor):
    def preprocess(self, data_dict):
        x = data_dict["x"].to(self.device)  # error: TSL204
        return {"x": x[:, :4]}


class Normalizer:
    def transform(self, x):
        # a placed call passes a CPU tensor: the by-name call's batch is not joined in
        if x.sum() > 0:
            return x - 1
        return x


class Scheduler:
    def step(self, x):
        # `step` is also an optimizer's and a scheduler's method: nothing reaches this by name
        if x.sum() > 0:
            return x
        return x * 2
