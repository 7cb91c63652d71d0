import torch
from torch.utils.data import DataLoader

from voxkit.transforms import Compose, CropForeground, Normalize, Volumes


def train(model, arrays, labels, opt, device="cuda"):
    loader = DataLoader(Volumes(arrays, labels, Compose([CropForeground(32), Normalize()])), batch_size=2)
    for batch in loader:
        x = batch["image"].to(device)  # error: TSL204
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())  # error: TSL001
