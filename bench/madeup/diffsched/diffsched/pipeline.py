import numpy as np
import torch

from .schedulers import DDIMScheduler


class Pipeline:
    def __init__(self, unet, scheduler: DDIMScheduler):
        self.unet = unet
        self.scheduler = scheduler

    @property
    def device(self):
        return next(self.unet.parameters()).device

    @torch.no_grad()
    def __call__(self, batch_size=1, num_inference_steps=50, guidance_scale=1.0, generator=None, output_type="np"):
        shape = (batch_size, self.unet.in_channels, self.unet.sample_size, self.unet.sample_size)
        latents = torch.randn(shape, generator=generator, device=self.device)
        self.scheduler.set_timesteps(num_inference_steps, device=self.device)
        for i, t in enumerate(self.scheduler.timesteps):
            model_in = torch.cat([latents] * 2) if guidance_scale > 1.0 else latents
            model_in = self.scheduler.scale_model_input(model_in, t)
            noise_pred = self.unet(model_in, t)
            if guidance_scale > 1.0:
                uncond, cond = noise_pred.chunk(2)
                noise_pred = uncond + guidance_scale * (cond - uncond)
            latents = self.scheduler.step(noise_pred, t, latents, generator=generator)
        image = (latents / 2 + 0.5).clamp(0, 1)
        image = image.cpu().permute(0, 2, 3, 1).numpy()  # SYNC
        if output_type == "uint8":
            image = (image * 255).round().astype(np.uint8)
        return image
