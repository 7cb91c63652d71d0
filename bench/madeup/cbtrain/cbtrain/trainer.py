import torch

from .callbacks import Callback, EarlyStopping, ProgressLogger


def move_to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)  # SYNC
    if isinstance(batch, dict):
        return {k: move_to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to_device(v, device) for v in batch)
    return batch


class Trainer:
    def __init__(self, model, optimizer, callbacks=None, device=None, max_epochs=10, grad_clip=None):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)  # SYNC
        self.optimizer = optimizer
        self.callbacks = list(callbacks or []) + [ProgressLogger()]
        self.max_epochs = max_epochs
        self.grad_clip = grad_clip
        self.should_stop = False
        self.global_step = 0
        self.epoch = 0
        self.history = {}

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def training_step(self, batch):
        x, y = batch
        out = self.model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        return {"loss": loss, "correct": (out.argmax(1) == y).sum()}

    def validate(self, loader):
        self.model.eval()
        total_loss = torch.zeros((), device=self.device)
        correct = 0
        count = 0
        with torch.no_grad():
            for batch in loader:
                batch = move_to_device(batch, self.device)
                out = self.training_step(batch)
                total_loss += out["loss"] * batch[1].shape[0]
                correct += out["correct"]
                count += batch[1].shape[0]
        self.model.train()
        return {"val_loss": total_loss / count, "val_acc": correct / count}

    def fit(self, train_loader, val_loader):
        self._call("on_train_start")
        for self.epoch in range(self.max_epochs):
            for batch in train_loader:
                batch = move_to_device(batch, self.device)
                out = self.training_step(batch)
                self.optimizer.zero_grad(set_to_none=True)
                out["loss"].backward()
                if self.grad_clip is not None:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
                self.optimizer.step()
                self.global_step += 1
                self._call("on_batch_end", out)
            logs = self.validate(val_loader)
            print(f"epoch {self.epoch}: " + ", ".join(f"{k}={v.item():.4f}" for k, v in logs.items()))  # SYNC
            self._call("on_epoch_end", logs)
            if self.should_stop:
                break
        return self.history
