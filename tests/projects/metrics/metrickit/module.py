import torch.nn as nn
import torch.nn.functional as F
from lightning import LightningModule

from metrickit.metrics import build_loss_tracker, build_quiet_loss_tracker, build_train_metrics, make_writer


class Classifier(LightningModule):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.net = nn.Linear(32, num_classes)
        self.train_metrics = build_train_metrics(num_classes)
        self.loss_tracker = build_loss_tracker()
        self.quiet_tracker = build_quiet_loss_tracker()
        self.writer = make_writer("runs")

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = F.cross_entropy(logits, y)
        self.train_metrics.update(logits, y)  # error: TSL409
        self.loss_tracker.update(loss)  # error: TSL409
        self.quiet_tracker.update(loss)  # ok: nan_strategy="disable"
        self.writer.add_scalar("loss", loss, self.global_step)  # error: TSL410
        return loss

    def on_train_epoch_end(self):
        self.log_dict(self.train_metrics.compute())  # ok: once per epoch
        self.train_metrics.reset()
