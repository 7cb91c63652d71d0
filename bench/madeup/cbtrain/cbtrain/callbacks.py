import math
import os

import torch


class Callback:
    def on_train_start(self, trainer):
        pass

    def on_batch_end(self, trainer, outputs):
        pass

    def on_epoch_end(self, trainer, logs):
        pass


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", patience=3, min_delta=0.0, mode="min"):
        self.monitor, self.patience, self.min_delta, self.mode = monitor, patience, min_delta, mode
        self.wait = 0
        self.best_score = torch.tensor(math.inf if mode == "min" else -math.inf)

    def _improved(self, current):
        if self.mode == "min":
            return current < self.best_score - self.min_delta
        return current > self.best_score + self.min_delta

    def on_epoch_end(self, trainer, logs):
        current = logs[self.monitor]
        if not torch.isfinite(current):  # SYNC
            trainer.should_stop = True
            return
        if self._improved(current.to(self.best_score.device)):  # SYNC
            self.best_score = current
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                trainer.should_stop = True


class ModelCheckpoint(Callback):
    def __init__(self, dirpath, monitor="val_loss"):
        self.dirpath, self.monitor = dirpath, monitor
        self.best = None

    def on_epoch_end(self, trainer, logs):
        score = logs[self.monitor]
        if self.best is None or score < self.best:  # SYNC
            self.best = score
            path = os.path.join(self.dirpath, f"epoch{trainer.epoch}-{self.monitor}={score:.4f}.pt")  # SYNC
            torch.save(trainer.model.state_dict(), path)  # SYNC


class LRMonitor(Callback):
    def on_batch_end(self, trainer, outputs):
        trainer.history.setdefault("lr", []).append(trainer.optimizer.param_groups[0]["lr"])


class ProgressLogger(Callback):
    def __init__(self, every=50):
        self.every = every
        self.running = None

    def on_batch_end(self, trainer, outputs):
        loss = outputs["loss"].detach()
        self.running = loss if self.running is None else 0.98 * self.running + 0.02 * loss
        if trainer.global_step % self.every == 0:
            print(f"step {trainer.global_step}: loss {self.running.item():.4f}")  # SYNC
