import torch


class Callback:
    def on_step_end(self, trainer, loss):
        pass

    def on_epoch_end(self, trainer, logs):
        pass


class BestKeeper(Callback):
    """Its methods are called by name from the trainer's loop: their parameters take what it hands on."""

    def __init__(self):
        self.best = None
        self.last = None

    def on_epoch_end(self, trainer, logs):
        score = logs["val_loss"]
        if self.best is None or score < self.best:  # error: TSL302
            self.best = score

    def on_step_end(self, trainer, loss):
        self.last = float(loss)  # error: TSL004

    def on_validation_end(self, trainer, loss):
        if loss > 1.0:  # error: TSL302
            print("nan")

    def on_report(self, trainer, value):
        print(value > 0)  # ok: dispatched with a name no call gives as text
