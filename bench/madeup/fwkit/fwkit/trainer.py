import torch
import torch.nn.functional as F

from fwkit.metrics import Accuracy, MeanMetric
from fwkit.registry import build_model


class Trainer:
    def __init__(self, cfg, callbacks=(), device="cuda"):
        self.device = torch.device(device)
        self.model = build_model(cfg).to(self.device)  # SYNC
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.callbacks = list(callbacks)
        self.global_step = 0
        self.should_stop = False
        self.history = []

    def transfer(self, batch):
        return {k: v.to(self.device) for k, v in batch.items()}  # SYNC

    def training_step(self, batch):
        out = self.model(batch["x"])
        loss = F.cross_entropy(out["logits"], batch["y"])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return {"loss": loss.detach(), "logits": out["logits"].detach()}

    def fit(self, train_loader, val_loader, epochs=3):
        for _ in range(epochs):
            for batch in train_loader:
                outputs = self.training_step(self.transfer(batch))
                self.global_step += 1
                for cb in self.callbacks:
                    cb.on_batch_end(self, outputs)
            metrics = self.validate(val_loader)
            self.history.append({k: float(v) for k, v in metrics.items()})  # SYNC
            for cb in self.callbacks:
                cb.on_validation_end(self, metrics)
            if self.should_stop:
                break

    @torch.no_grad()
    def validate(self, loader):
        acc, mean = Accuracy(), MeanMetric()
        for batch in loader:
            batch = self.transfer(batch)
            out = self.model(batch["x"])
            mean.update(F.cross_entropy(out["logits"], batch["y"]))
            acc.update(out["logits"], batch["y"])
        return {"val_loss": mean.compute(), "val_acc": acc.compute()}
