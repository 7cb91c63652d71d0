import torch

from sampkit.schedulers import DecoderScheduler


class Decoder(torch.nn.Module):
    def __init__(self, sigmas):
        super().__init__()
        self.sigmas = sigmas
        self.decoder_scheduler = DecoderScheduler()

    def forward(self, z):
        # the attribute's class is known: this call is DecoderScheduler.set_timesteps only
        self.decoder_scheduler.set_timesteps(4, self.sigmas)
        for t in self.decoder_scheduler.timesteps:
            z = self.decoder_scheduler.step(z, t, z)
        return z
