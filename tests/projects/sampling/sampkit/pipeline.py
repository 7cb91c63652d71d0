import torch


def refresh(schedulers, n, sigmas):
    for s in schedulers:  # by name, in a loop of a function of unknown frequency: not a veto
        s.set_timesteps(n, sigmas)


class Pipeline:
    def __init__(self, model, scheduler, sigmas):
        self.model = model
        self.scheduler = scheduler
        self.sigmas = sigmas

    def encode_reference(self, image):
        return image.mean().item()  # ok: called in a loop before the sampling loop  frequency: once

    def guidance(self, x):
        return x.abs().max().item()  # error: TSL001  (inside the sampling loop: every step)

    def __call__(self, x, references, n):
        refs = []
        for r in references:
            refs.append(self.encode_reference(r))
        self.scheduler.set_timesteps(n, self.sigmas)  # by name: a receiver of unknown class
        for t in self.scheduler.timesteps:
            out = self.model(x)
            scale = self.guidance(out)
            x = self.scheduler.step(out * scale, t, x)
        return x

    def chunks(self, x, pieces, n):
        for piece in pieces:
            self.scheduler.set_timesteps(n, self.sigmas)  # once per chunk, by name
            for t in self.scheduler.timesteps:
                x = self.scheduler.step(self.model(x + piece), t, x)
        return x
