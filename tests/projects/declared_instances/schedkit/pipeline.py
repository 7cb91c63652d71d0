import torch

from .schedulers import HostScheduler, Scheduler


class Pipeline:
    def __init__(self, model, scheduler: Scheduler, host: HostScheduler):
        self.model = model
        self.scheduler = scheduler
        self.host = host

    @torch.no_grad()
    def __call__(self, x, steps=50, device="cuda"):
        self.scheduler.set_timesteps(steps, device=device)
        for i, t in enumerate(self.scheduler.timesteps):
            x = self.scheduler.step(self.model(x, t), t, x)
        for t in self.host.timesteps:
            x = self.host.step(self.model(x, t), t, x)
        return x
