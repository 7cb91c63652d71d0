import torch

from kgkit.records import Scores
from kgkit.sampling import NegativeSampler, filter_rows


class TrainingLoop:
    def __init__(self, triples: torch.Tensor):
        self.triples = triples.cpu()
        self.sampler = NegativeSampler()

    def train_step(self, model: torch.nn.Module, step: int):
        positives = self.triples[step * 8:(step + 1) * 8]
        negatives = self.sampler.corrupt_batch(positives)
        kept = filter_rows(positives, 5)
        on_gpu = filter_rows(negatives.to("cuda", non_blocking=True), 5)
        return model(negatives.to("cuda", non_blocking=True)) + kept.sum() + on_gpu.sum()


def report(scores: Scores, step: int):
    if scores.hits.any():  # error: TSL302
        print(step)
    if scores.rank > 3:  # ok: an int field
        print(step)

