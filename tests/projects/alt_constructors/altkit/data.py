from dataclasses import dataclass

import torch


@dataclass
class Batch:
    tokens: torch.Tensor
    lengths: torch.Tensor

    @property
    def mask(self):
        steps = torch.arange(self.tokens.shape[1], device=self.tokens.device)
        return steps[None, :] < self.lengths[:, None]

    @classmethod
    def padded(cls, seqs, pad=0):
        """An alternate constructor: `cls(...)` is an instance of the class."""
        lengths = torch.tensor([len(s) for s in seqs])
        tokens = torch.full((len(seqs), int(lengths.max())), pad, dtype=torch.long)  # ok: a host tensor
        return cls(tokens, lengths)

    def to(self, device):
        return Batch(self.tokens.to(device, non_blocking=True), self.lengths.to(device, non_blocking=True))


def stream(batches, device):
    for b in batches:
        yield b.to(device)
