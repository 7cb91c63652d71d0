"""Annotated tensor parameters: their device is what every caller in the project passes."""
import torch
from torch import LongTensor


class NegativeSampler:
    def corrupt_batch(self, positive_batch: LongTensor) -> LongTensor:
        # every caller (training.py) samples on the host: a CPU mask on a CPU tensor
        keep = positive_batch[:, 0] > 0
        return positive_batch[keep]  # ok: the batch is on the CPU


def filter_rows(rows: torch.Tensor, limit: int) -> torch.Tensor:
    # one caller passes a host tensor, another a GPU tensor: the device stays unknown
    return rows[rows[:, 0] < limit]  # error: TSL103


def unique_heads(triples: torch.Tensor) -> torch.Tensor:
    # no caller in the project but its tests (on the CPU): an entry point, any device
    return triples[:, 0].unique()  # error: TSL102
