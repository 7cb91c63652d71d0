import torch


class Trainer:
    def __init__(self, model, opt, callbacks):
        self.model, self.opt, self.callbacks = model, opt, list(callbacks)

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def _hooks(self, hook_name, *args):
        for cb in self.callbacks:
            fn = getattr(cb, hook_name, None)
            if callable(fn):
                fn(self, *args)

    def _report(self, which, value):
        for cb in self.callbacks:
            getattr(cb, which)(self, value)

    def fit(self, loader, val, epochs=2, device="cuda"):
        for _ in range(epochs):
            for x, y in loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                for cb in self.callbacks:
                    getattr(cb, "on_step_end")(self, loss.detach())
            logs = {"val_loss": torch.stack([torch.nn.functional.mse_loss(self.model(a), b) for a, b in val]).mean()}
            self._call("on_epoch_end", logs)
            self._hooks("on_validation_end", logs["val_loss"])
            name = "on_" + "report"
            self._report(name, logs["val_loss"])
