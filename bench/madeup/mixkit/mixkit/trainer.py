import torch

from mixkit.config import TrainConfig
from mixkit.mixins import CheckpointMixin, LoggingMixin
from mixkit.model import Classifier


def batches(x, y, bs, device):
    for i in range(0, len(x), bs):
        yield x[i:i + bs].to(device), y[i:i + bs].to(device)  # SYNC


def make_step(model, opt, clip):
    def step(xb, yb):
        out = model(xb, labels=yb)
        opt.zero_grad()
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return out
    return step


class Trainer(LoggingMixin, CheckpointMixin):
    def __init__(self, model: Classifier, cfg: TrainConfig):
        self.cfg = cfg
        self.model = model.to(cfg.device)  # SYNC
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr)
        self.step = 0

    def fit(self, x, y, bs=64):
        step_fn = make_step(self.model, self.opt, self.cfg.clip)
        for _ in range(self.cfg.epochs):
            for xb, yb in batches(x, y, bs, self.cfg.device):
                out = step_fn(xb, yb)
                self.check_finite(out)
                self.log_step(self.step, out)
                self.step += 1
        return self

    @torch.no_grad()
    def accuracy(self, x, y, bs=256):
        correct = 0
        for xb, yb in batches(x, y, bs, self.cfg.device):
            out = self.model(xb)
            correct += (out.logits.argmax(-1) == yb).sum().item()  # SYNC
        return correct / len(x)


def main():
    x, y = torch.randn(512, 32), torch.randint(0, 5, (512,))
    trainer = Trainer(Classifier(), TrainConfig()).fit(x, y)
    print(trainer.accuracy(x, y))
    trainer.save("/tmp/ckpt.pt")
