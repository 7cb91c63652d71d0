import torch

from ckit.callbacks import EarlyStopping, Printer


class Trainer:
    def __init__(self, model, loss_fn, device="cuda"):
        self.model = model.to(device)
        self.loss_fn = loss_fn
        self.device = device
        self.callbacks = [EarlyStopping(), Printer()]
        self.metrics = {}
        self.epoch = 0
        self.stop = False

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            self.epoch = epoch
            self.metrics["val_loss"] = self.validate(loader)
            for cb in self.callbacks:
                cb.on_epoch_end(self)
            if self.stop:
                return

    @torch.no_grad()
    def validate(self, loader):
        total = torch.zeros((), device=self.device)
        for x, y in loader:
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            total += self.loss_fn(self.model(x), y)
        return total
