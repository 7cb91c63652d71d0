"""diffusers 0.42.1 workloads: UNet training steps as in its training examples, samplers, pipelines.

Small configurations with random init (no weights on the device); data made on the device.
"""

from __future__ import annotations

from harness import Workload

B = 4


def _unet2d(diffusers, device):
    return diffusers.UNet2DModel(
        sample_size=32, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=8, attention_head_dim=8).to(device)


def _unet_cond(diffusers, device):
    return diffusers.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8).to(device)


def build_unet2d_ddpm(torch, device):
    """examples/unconditional_image_generation: add_noise, predict the noise, MSE; EMA update."""
    import diffusers
    import torch.nn.functional as F
    from diffusers.training_utils import EMAModel

    unet = _unet2d(diffusers, device)
    sched = diffusers.DDPMScheduler(num_train_timesteps=1000)
    ema = EMAModel(unet.parameters(), model_cls=diffusers.UNet2DModel, model_config=unet.config)
    ema.to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        clean = torch.rand(B, 3, 32, 32, device=device, generator=gen) * 2 - 1
        noise = torch.randn(clean.shape, device=device, generator=gen)
        t = torch.randint(0, sched.config.num_train_timesteps, (B,), device=device, generator=gen).long()
        noisy = sched.add_noise(clean, noise, t)
        pred = unet(noisy, t, return_dict=False)[0]
        return F.mse_loss(pred.float(), noise.float())

    def evaluate():
        x = torch.randn(B, 3, 32, 32, device=device, generator=gen)
        return unet(x, torch.full((B,), 10, device=device)).sample

    return Workload("unet2d_ddpm", train=train, modules=[unet], after_step=lambda: ema.step(unet.parameters()),
                    eval=evaluate)


def build_unet_cond_snr(torch, device):
    """examples/text_to_image: latents + text states, v-prediction target, min-SNR weighting."""
    import diffusers
    import torch.nn.functional as F
    from diffusers.training_utils import compute_snr

    unet = _unet_cond(diffusers, device)
    sched = diffusers.DDPMScheduler(num_train_timesteps=1000, prediction_type="v_prediction")
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        latents = torch.randn(B, 4, 16, 16, device=device, generator=gen)
        text = torch.randn(B, 8, 32, device=device, generator=gen)
        noise = torch.randn(latents.shape, device=device, generator=gen)
        t = torch.randint(0, 1000, (B,), device=device, generator=gen).long()
        noisy = sched.add_noise(latents, noise, t)
        target = sched.get_velocity(latents, noise, t)
        pred = unet(noisy, t, text, return_dict=False)[0]
        snr = compute_snr(sched, t)
        weights = torch.stack([snr, 5.0 * torch.ones_like(t)], dim=1).min(dim=1)[0] / (snr + 1)
        loss = F.mse_loss(pred.float(), target.float(), reduction="none")
        return (loss.mean(dim=list(range(1, len(loss.shape)))) * weights).mean()

    def evaluate():
        x = torch.randn(B, 4, 16, 16, device=device, generator=gen)
        return unet(x, 500, torch.randn(B, 8, 32, device=device, generator=gen)).sample

    return Workload("unet_cond_snr", train=train, modules=[unet], eval=evaluate)


def build_vae(torch, device):
    """AutoencoderKL: encode, sample the posterior, decode; reconstruction + KL."""
    import diffusers
    import torch.nn.functional as F

    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(32, 64), latent_channels=4,
        norm_num_groups=8, sample_size=32).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        x = torch.rand(B, 3, 32, 32, device=device, generator=gen) * 2 - 1
        post = vae.encode(x).latent_dist
        z = post.sample(generator=gen)
        rec = vae.decode(z).sample
        return F.mse_loss(rec, x) + 1e-6 * post.kl().mean()

    def evaluate():
        x = torch.rand(B, 3, 32, 32, device=device, generator=gen)
        return vae(x).sample

    return Workload("vae", train=train, modules=[vae], eval=evaluate)


def build_samplers(torch, device):
    """The denoising loop users write around a scheduler, for several schedulers."""
    import diffusers

    unet = _unet2d(diffusers, device).eval()
    gen = torch.Generator(device=device).manual_seed(0)
    kinds = {
        "DDPM": diffusers.DDPMScheduler, "DDIM": diffusers.DDIMScheduler,
        "EulerDiscrete": diffusers.EulerDiscreteScheduler, "EulerAncestral": diffusers.EulerAncestralDiscreteScheduler,
        "DPMSolverMultistep": diffusers.DPMSolverMultistepScheduler, "PNDM": diffusers.PNDMScheduler,
        "LMSDiscrete": diffusers.LMSDiscreteScheduler, "HeunDiscrete": diffusers.HeunDiscreteScheduler,
        "UniPCMultistep": diffusers.UniPCMultistepScheduler, "DEISMultistep": diffusers.DEISMultistepScheduler,
    }

    def sampler(cls):
        sched = cls(num_train_timesteps=1000)

        def run():
            sched.set_timesteps(6, device=device)
            x = torch.randn(2, 3, 32, 32, device=device, generator=gen) * sched.init_noise_sigma
            with torch.no_grad():
                for t in sched.timesteps:
                    inp = sched.scale_model_input(x, t)
                    eps = unet(inp, t).sample
                    x = sched.step(eps, t, x).prev_sample
            return x
        return run

    return Workload("samplers", cases=[(name, sampler(cls)) for name, cls in kinds.items()])


def build_pipelines(torch, device):
    """DDPMPipeline / DDIMPipeline calls, numpy output as users save images."""
    import diffusers

    unet = _unet2d(diffusers, device).eval()
    ddpm = diffusers.DDPMPipeline(unet=unet, scheduler=diffusers.DDPMScheduler(num_train_timesteps=1000))
    ddim = diffusers.DDIMPipeline(unet=unet, scheduler=diffusers.DDIMScheduler(num_train_timesteps=1000))
    for p in (ddpm, ddim):
        p.set_progress_bar_config(disable=True)
    gen = torch.Generator(device=device).manual_seed(0)
    return Workload("pipelines", cases=[
        ("DDPMPipeline", lambda: ddpm(batch_size=2, generator=gen, num_inference_steps=4, output_type="np")),
        ("DDIMPipeline", lambda: ddim(batch_size=2, generator=gen, num_inference_steps=4, eta=0.5, output_type="np")),
    ])


def build_sd3_flow_match(torch, device):
    """examples/dreambooth/train_dreambooth_sd3.py: logit-normal timesteps, flow-matching target,
    SD3 loss weighting; eval is the FlowMatchEuler sampling loop."""
    import diffusers
    from diffusers.training_utils import compute_density_for_timestep_sampling, compute_loss_weighting_for_sd3

    model = diffusers.SD3Transformer2DModel(
        sample_size=16, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=32, caption_projection_dim=32, pooled_projection_dim=16, out_channels=4,
        pos_embed_max_size=16).to(device)
    sched = diffusers.FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=3.0)
    gen = torch.Generator(device=device).manual_seed(0)

    def cond():
        return (torch.randn(B, 8, 32, device=device, generator=gen), torch.randn(B, 16, device=device, generator=gen))

    def train():
        latents = torch.randn(B, 4, 16, 16, device=device, generator=gen)
        noise = torch.randn(latents.shape, device=device, generator=gen)
        u = compute_density_for_timestep_sampling("logit_normal", B, logit_mean=0.0, logit_std=1.0, mode_scale=1.29)
        indices = (u * sched.config.num_train_timesteps).long()
        timesteps = sched.timesteps[indices].to(device=device)
        noisy = sched.scale_noise(latents, timesteps, noise)
        sigmas = sched.sigmas.to(device=device)[indices.to(device)].view(-1, 1, 1, 1)
        text, pooled = cond()
        pred = model(hidden_states=noisy, timestep=timesteps, encoder_hidden_states=text, pooled_projections=pooled,
                     return_dict=False)[0]
        weighting = compute_loss_weighting_for_sd3("logit_normal", sigmas=sigmas)
        err = (weighting.float() * (pred.float() - (noise - latents).float()) ** 2).reshape(B, -1)
        return torch.mean(err, 1).mean()

    def evaluate():
        sample = diffusers.FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=3.0)
        sample.set_timesteps(4, device=device)
        x = torch.randn(B, 4, 16, 16, device=device, generator=gen)
        text, pooled = cond()
        for t in sample.timesteps:
            pred = model(hidden_states=x, timestep=t.expand(B), encoder_hidden_states=text, pooled_projections=pooled,
                         return_dict=False)[0]
            x = sample.step(pred, t, x, return_dict=False)[0]
        return x

    return Workload("sd3_flow_match", train=train, modules=[model], eval=evaluate)


WORKLOADS = [build_unet2d_ddpm, build_sd3_flow_match, build_unet_cond_snr, build_vae, build_samplers, build_pipelines]
