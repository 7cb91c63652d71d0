class Callback:
    def on_batch_end(self, trainer, outputs):
        pass


class StopAtLoss(Callback):
    def __init__(self, monitor="loss", threshold=0.01):
        self.monitor = monitor
        self.threshold = threshold

    def on_batch_end(self, trainer, outputs):
        # reached by name (`for cb in self.callbacks`), with a dict of another file's metrics
        current = outputs[self.monitor]
        if current < self.threshold:  # error: TSL302
            trainer.should_stop = True


class Counter(Callback):
    def __init__(self):
        self.calls = 0

    def on_batch_end(self, trainer, outputs):
        self.calls += len(outputs)  # ok: the number of entries
