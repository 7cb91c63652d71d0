import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class WindowDataset(Dataset):
    def __init__(self, series, input_size, horizon, step=1):
        self.series = torch.as_tensor(series, dtype=torch.float32)
        self.input_size = input_size
        self.horizon = horizon
        n = self.series.shape[-1] - input_size - horizon + 1
        self.starts = torch.arange(0, max(n, 0), step)

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, idx):
        s = int(self.starts[idx])
        x = self.series[..., s:s + self.input_size]
        y = self.series[..., s + self.input_size:s + self.input_size + self.horizon]
        mask = ~torch.isnan(x)
        x = torch.nan_to_num(x)
        if mask.sum() == 0:
            mask[..., -1] = True
        return {"insample_y": x, "insample_mask": mask.float(), "outsample_y": y}


def collate(items):
    out = {}
    for k in items[0]:
        out[k] = torch.stack([it[k] for it in items])
    return out


def make_loader(df_values, input_size, horizon, batch_size=32, shuffle=True):
    ds = WindowDataset(np.asarray(df_values), input_size, horizon)
    return DataLoader(ds, batch_size=batch_size, shuffle=shuffle, collate_fn=collate)
