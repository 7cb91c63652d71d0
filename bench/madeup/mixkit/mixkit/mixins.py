import math

import torch


class LoggingMixin:
    def log_step(self, step, out):
        if step % self.cfg.log_every == 0:
            print(f"step {step} loss {out.loss.item():.3f}")  # SYNC

    def check_finite(self, out):
        if not math.isfinite(out.loss.item()):  # SYNC
            raise RuntimeError("loss is not finite")


class CheckpointMixin:
    def save(self, path):
        torch.save({"model": self.model.state_dict(), "step": self.step}, path)  # SYNC
