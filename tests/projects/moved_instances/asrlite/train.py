import torch.nn as nn
from torch.utils.data import DataLoader

from asrlite.decode import greedy, untouched
from asrlite.model import Encoder


class Runner:
    def __init__(self, model, processor: nn.Module):
        self.model = model
        self.processor = processor

    def evaluate(self, loader: DataLoader):
        hyps = []
        for batch in loader:
            sample = self.processor.prepare(batch)
            scores, lengths = self.model(sample["feats"], sample["lengths"])
            hyps.extend(greedy(scores, lengths))
        return hyps


def main(loader, processor):
    runner = Runner(Encoder().to("cuda"), processor)
    return runner.evaluate(loader)


def opaque(fn, x, y):
    first, second = fn(x, y)
    return untouched(first, second)
