import numpy as np
import torch
from torch.utils.data import DataLoader

from medkit.data import SubjectsDataset
from medkit.transforms import Compose, CropForeground, OneHot, RandomFlip, RandomGamma, RescaleIntensity, ZNormalization
from medkit.transforms import make_subject


def train(model, n=4, device="cuda", epochs=1):
    subjects = [make_subject(np.random.rand(32, 32, 32), np.random.randint(0, 3, (32, 32, 32))) for _ in range(n)]
    tf = Compose([CropForeground(), RescaleIntensity(), ZNormalization(), RandomGamma(), RandomFlip(), OneHot()])
    loader = DataLoader(SubjectsDataset(subjects, tf), batch_size=1, num_workers=2)
    model = model.to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters())
    for _ in range(epochs):
        for batch in loader:
            x = batch["t1"].to(device)  # SYNC
            y = batch["label"].to(device)  # SYNC
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model
