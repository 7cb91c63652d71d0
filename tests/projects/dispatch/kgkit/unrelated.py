"""A class that is no subclass of the loop: the loop's calls do not reach its method of the same name."""

import torch


class Evaluator:
    def process_batch(self, batch, start: int, stop: int) -> torch.Tensor:
        rows = batch["positives"]
        return rows[start:stop].to(device="cuda")

    def run(self, batches):
        for batch in batches:
            self.process_batch(batch, 0, 4)
