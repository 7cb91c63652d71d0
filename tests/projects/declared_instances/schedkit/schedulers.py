import numpy as np
import torch


class Scheduler:
    """Tables made on the host in `__init__`; `set_timesteps` moves the timesteps to the device."""

    def __init__(self, n=1000):
        self.n = n
        self.alphas_cumprod = torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, n), dim=0)
        self.final = torch.tensor(1.0)
        self.timesteps = torch.from_numpy(np.arange(n)[::-1].copy())
        self.steps = None

    def set_timesteps(self, steps, device=None):
        self.steps = steps
        ts = (np.arange(steps) * (self.n // steps))[::-1].copy()
        self.timesteps = torch.from_numpy(ts).to(device)  # once per sampling run (cold: not shown)

    def step(self, out, timestep, sample):
        prev = timestep - self.n // self.steps
        a = self.alphas_cumprod[timestep]  # error: TSL303
        a_prev = self.alphas_cumprod[prev] if prev >= 0 else self.final  # error: TSL303, TSL302
        host = self.alphas_cumprod[torch.arange(3)]  # a host index: no copy
        return a_prev.sqrt() * sample + (1 - a).sqrt() * out + host.sum()


class HostScheduler:
    """Its timesteps never leave the host: indexing its tables with them copies nothing."""

    def __init__(self, n=1000):
        self.n = n
        self.sigmas = torch.linspace(0.0, 1.0, n)
        self.timesteps = torch.arange(n - 1, -1, -1)

    def step(self, out, timestep, sample):
        s = self.sigmas[timestep]
        return sample + s * out
