import torch
from torch.utils.data import Dataset


class TensorStore(Dataset):
    def __init__(self, rows: torch.Tensor):
        self.rows = rows

    def __len__(self):
        return len(self.rows)
