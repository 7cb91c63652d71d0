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
        lengths = torch.tensor([len(s) for s in seqs])
        tokens = torch.full((len(seqs), int(lengths.max())), pad, dtype=torch.long)
        for i, s in enumerate(seqs):
            tokens[i, : len(s)] = torch.as_tensor(s)
        return cls(tokens, lengths)

    def to(self, device):
        return Batch(self.tokens.to(device, non_blocking=True), self.lengths.to(device, non_blocking=True))


def stream(batches, device):
    for b in batches:
        yield b.to(device)


def collate(samples):
    return {"tokens": torch.stack([s[0] for s in samples]), "labels": torch.stack([s[1] for s in samples])}
