from __future__ import annotations

from typing import TypedDict

import torch

from .base import TrainingLoop


class SBatch(TypedDict):
    positives: torch.Tensor


class SLCWALoop(TrainingLoop[SBatch]):
    @staticmethod
    def process_batch_static(model, batch: SBatch, start: int | None, stop: int | None) -> torch.Tensor:
        positives = batch["positives"]
        positives = positives[start:stop].to(device=model.device)  # error: TSL204
        return model(positives).sum()

    def process_batch(self, batch: SBatch, start: int, stop: int) -> torch.Tensor:
        return self.process_batch_static(model=self.model, batch=batch, start=start, stop=stop)
