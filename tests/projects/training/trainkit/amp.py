import torch


def make_scaler(enabled: bool = True):
    return torch.amp.GradScaler("cuda", enabled=enabled)
