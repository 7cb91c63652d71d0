import torch


class KarrasScheduler:
    def set_timesteps(self, n, sigmas):
        self.timesteps = self._convert(sigmas, n)

    def _convert(self, sigmas, n):
        lo = sigmas[-1].item()  # ok: set_timesteps runs before sampling loops only  frequency: once
        return torch.linspace(lo, 1.0, n)

    def step(self, out, t, x):
        return x - out * t


class DecoderScheduler:
    def set_timesteps(self, n, sigmas):
        self.timesteps = self._grid(sigmas, n)

    def _grid(self, sigmas, n):
        hi = sigmas[0].item()  # error: TSL001  (the decoder's forward resets it: every step)
        return torch.linspace(0.0, hi, n)

    def step(self, out, t, x):
        return x + out * t
