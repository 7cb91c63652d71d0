import torch

from dskit.base import TensorStore


class Windows(TensorStore):
    def __getitem__(self, i: int):
        w = self.rows[i : i + 4]
        if w.isnan().any():  # ok: a dataset of another file's base class: host data
            w = torch.nan_to_num(w)
        return w


class Scorer:
    def __init__(self, rows: torch.Tensor):
        self.rows = rows

    def __getitem__(self, i: int):
        w = self.rows[i : i + 4]
        if w.isnan().any():  # error: TSL302
            w = torch.nan_to_num(w)
        return w
