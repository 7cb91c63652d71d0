class Callback:
    def on_batch_end(self, trainer, outputs):
        pass

    def on_validation_end(self, trainer, metrics):
        pass


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", patience=3, min_delta=0.0):
        self.monitor = monitor
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.wait = 0

    def on_validation_end(self, trainer, metrics):
        current = metrics[self.monitor]
        if current < self.best - self.min_delta:  # SYNC
            self.best = current
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                trainer.should_stop = True


class PrintLogger(Callback):
    def __init__(self, every=50):
        self.every = every

    def on_batch_end(self, trainer, outputs):
        if trainer.global_step % self.every == 0:
            print(f"step {trainer.global_step}: loss={outputs['loss']:.4f}")  # SYNC
