import torch
from torch.utils.data import DataLoader

from .amp import make_scaler
from .data import move


class Trainer:
    def __init__(self, model, opt, dataset, device):
        self.model = model
        self.opt = opt
        self.device = device
        self.scaler = make_scaler()  # a GradScaler made in another file
        self.loader = DataLoader(dataset, batch_size=32)

    def fit(self, epochs: int):
        for epoch in range(epochs):
            for step, batch in enumerate(self.loader):
                batch = move(batch, self.device)
                loss = self.model(batch)
                self.scaler.scale(loss).backward()
                self.scaler.step(self.opt)  # error: TSL407
                self.scaler.update()
                torch.save(self.model.state_dict(), "last.pt")  # error: TSL408
