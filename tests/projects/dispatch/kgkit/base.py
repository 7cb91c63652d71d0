"""A training loop whose per-batch work is a method the subclasses in other files override."""

from __future__ import annotations

from abc import abstractmethod
from typing import Generic, TypeVar

import torch
from torch.utils.data import DataLoader

from .graph import Sampler
from .typing import MappedTriples
from .utils import LongTensor

BatchType = TypeVar("BatchType")


class TrainingLoop(Generic[BatchType]):
    def train_epoch(self, batches: DataLoader, triples: MappedTriples, index: LongTensor) -> float:
        total = 0.0
        sampler = Sampler(8)
        for batch in batches:
            total += self.forward_pass(batch, 0, 8)
            self.optimizer.step()
            sampler.sample(index, index)
            if triples.sum():  # error: TSL302
                total += 1.0
        return total

    def forward_pass(self, batch: BatchType, start: int, stop: int) -> float:
        loss = self.process_batch(batch=batch, start=start, stop=stop)
        loss.backward()
        self.report(0)
        return 0.0

    @abstractmethod
    def process_batch(self, batch: BatchType, start: int, stop: int) -> torch.Tensor:
        raise NotImplementedError

    def report(self, step):
        pass
