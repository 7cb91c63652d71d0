import torch.nn.functional as F

from fitkit.metrics import Accuracy, MeanMetric


class Trainer:
    def __init__(self, model, opt, callbacks=()):
        self.model = model
        self.opt = opt
        self.callbacks = list(callbacks)
        self.should_stop = False

    def fit(self, loader, epochs=3):
        acc, mean = Accuracy(), MeanMetric()
        for _ in range(epochs):
            for x, y in loader:
                x, y = x.cuda(), y.cuda()  # error: TSL204
                out = self.model(x)
                loss = F.cross_entropy(out, y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                mean.update(loss)
                acc.update(out, y)
                for cb in self.callbacks:
                    cb.on_batch_end(self, {"loss": mean.compute(), "acc": acc.compute()})
                if self.should_stop:
                    return
