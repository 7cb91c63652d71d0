import numpy as np
import torch

MEAN = torch.tensor([0.485, 0.456, 0.406])
STD = torch.tensor([0.229, 0.224, 0.225])
HOST = torch.device("cpu")
LUT = torch.from_numpy(np.linspace(0.0, 1.0, 256).astype(np.float32))


def host_stats(x):
    x = x.detach().cpu()  # SYNC
    return x.mean(0), x.std(0)


def as_host(a):
    return torch.from_numpy(np.asarray(a))


class Palette:
    colors = torch.tensor([[0, 0, 0], [255, 0, 0], [0, 255, 0]], dtype=torch.uint8)

    def lookup(self, idx):
        return self.colors[idx]
