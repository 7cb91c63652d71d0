class Callback:
    def on_epoch_end(self, trainer):
        pass


class EarlyStopping(Callback):
    """Called through a list of callbacks of several classes, with the trainer passing itself."""

    def __init__(self, patience=3):
        self.patience = patience
        self.best = None
        self.wait = 0

    def on_epoch_end(self, trainer):
        current = trainer.metrics["val_loss"]
        if self.best is None or current < self.best:  # error: TSL302
            self.best = current
            self.wait = 0
        else:
            self.wait += 1
            trainer.stop = self.wait >= self.patience


class Printer(Callback):
    def on_epoch_end(self, trainer):
        print(trainer.epoch)
