"""k-diffusion 0.1.1.post1 workloads, as its train.py and sample scripts run them: models built from
configs (``config.load_config`` / ``make_model`` / ``make_denoiser_wrapper`` / ``make_sample_density``),
the Karras, variance and simple-loss denoisers trained on noised batches with the EMA warm-up and its
LR schedulers, every sampler (Euler, Heun, DPM-2, LMS, DPM-Solver fast/adaptive, DPM++ 2S/SDE/2M/2M-SDE/3M-SDE,
the log-likelihood ODE) over its sigma schedules, the external wrappers (VDenoiser, CompVis eps/v
denoisers), the KID/FID metrics and ``compute_features``, the gradient-noise-scale tracker and the
augmentation pipeline. Random init, synthetic images; no downloads.
"""

from __future__ import annotations

from harness import Workload

B, C, H = 4, 3, 16


def _config(model, density, **extra):
    import k_diffusion as K

    cfg = {"model": dict(model, input_size=[H, H], sigma_sample_density=density), "dataset": {"type": "none"}}
    cfg["model"].update(extra)
    return K.config.load_config(cfg)


def _image_v1(**kw):
    m = {"type": "image_v1", "input_channels": C, "mapping_out": 64, "depths": [1, 1], "channels": [32, 64],
         "self_attn_depths": [False, True], "sigma_min": 1e-2, "sigma_max": 80}
    m.update(kw)
    return m


def _train_from_config(torch, device, name, cfg, class_cond=0):
    """train.py's step: sample density, noise, model.loss(...).mean(), then the EMA update with EMAWarmup."""
    import copy

    import k_diffusion as K

    inner = K.config.make_model(cfg).to(device)
    model = K.config.make_denoiser_wrapper(cfg)(inner)
    model_ema = copy.deepcopy(model)
    sample_density = K.config.make_sample_density(cfg["model"])
    ema_sched = K.utils.EMAWarmup(power=cfg["ema_sched"]["power"], max_value=cfg["ema_sched"]["max_value"])
    gen = torch.Generator(device=device).manual_seed(0)
    aug = cfg["model"].get("augment_wrapper")

    def kwargs(n):
        kw = {}
        if aug:
            kw["aug_cond"] = torch.randn(n, 9, device=device, generator=gen)
        if class_cond:
            kw["class_cond"] = torch.randint(0, class_cond + 1, (n,), device=device, generator=gen)
        return kw

    def train():
        reals = torch.rand(B, C, H, H, device=device, generator=gen) * 2 - 1
        noise = torch.randn_like(reals)
        with K.utils.enable_stratified(0, 1):
            sigma = sample_density([B], device=device)
        return model.loss(reals, noise, sigma, **kwargs(B)).mean()

    def after():
        K.utils.ema_update(model, model_ema, ema_sched.get_value())
        ema_sched.step()

    def evaluate():
        """The demo: a few Karras-schedule DPM++ 2M SDE steps with the EMA model."""
        sigmas = K.sampling.get_sigmas_karras(4, cfg["model"]["sigma_min"], cfg["model"]["sigma_max"], rho=7.,
                                              device=device)
        x = torch.randn(B, C, H, H, device=device, generator=gen) * sigmas[0]
        return K.sampling.sample_dpmpp_2m_sde(model_ema, x, sigmas, extra_args=kwargs(B), eta=0.0, solver_type="heun",
                                              disable=True)

    return Workload(name, train=train, modules=[model, model_ema], params=list(inner.parameters()),
                    after_step=after, eval=evaluate, lr=cfg["optimizer"]["lr"])


def build_image_v1_karras_lognormal(torch, device):
    cfg = _config(_image_v1(augment_wrapper=True, loss_weighting="karras"),
                  {"type": "lognormal", "mean": -1.2, "std": 1.2}, sigma_data=0.5)
    return _train_from_config(torch, device, "image_v1_karras_lognormal", cfg)


def build_image_v1_variance_loglogistic(torch, device):
    cfg = _config(_image_v1(augment_wrapper=False, has_variance=True),
                  {"type": "loglogistic", "loc": -0.5, "scale": 0.5, "min_value": 1e-2, "max_value": 80})
    return _train_from_config(torch, device, "image_v1_variance_loglogistic", cfg)


def build_image_v1_simple_vdiffusion(torch, device):
    cfg = _config(_image_v1(augment_wrapper=False, skip_stages=0, patch_size=2),
                  {"type": "v-diffusion", "min_value": 1e-2, "max_value": 80}, loss_config="simple")
    return _train_from_config(torch, device, "image_v1_simple_vdiffusion", cfg)


def build_image_v1_snr_split_lognormal(torch, device):
    cfg = _config(_image_v1(augment_wrapper=True), {"type": "split-lognormal", "mean": -1.0, "std_1": 1.0,
                                                   "std_2": 1.5}, loss_weighting="snr", loss_scales=2)
    return _train_from_config(torch, device, "image_v1_snr_split_lognormal", cfg)


def build_image_transformer_v1_classcond(torch, device):
    cfg = _config({"type": "image_transformer_v1", "input_channels": C, "patch_size": [4, 4], "depth": 2, "width": 64,
                   "sigma_min": 1e-2, "sigma_max": 80},
                  {"type": "cosine-interpolated"}, loss_weighting="soft-min-snr")
    cfg["dataset"]["num_classes"] = 5
    return _train_from_config(torch, device, "image_transformer_v1_classcond", cfg, class_cond=5)


def build_image_transformer_v1_loguniform(torch, device):
    cfg = _config({"type": "image_transformer_v1", "input_channels": C, "patch_size": [2, 2], "depth": 2, "width": 64,
                   "sigma_min": 1e-2, "sigma_max": 80}, {"type": "loguniform"})
    return _train_from_config(torch, device, "image_transformer_v1_loguniform", cfg)


def build_image_v1_cross_cond(torch, device):
    """ImageDenoiserModelV1 with mapping, U-Net and cross-attention conditioning (the text-conditioned setup)."""
    import k_diffusion as K

    inner = K.models.ImageDenoiserModelV1(C, 64, [1, 1], [32, 64], [False, True], cross_attn_depths=[False, True],
                                          mapping_cond_dim=8, unet_cond_dim=1, cross_cond_dim=16).to(device)
    model = K.Denoiser(inner, sigma_data=0.5)
    gen = torch.Generator(device=device).manual_seed(0)

    def cond(n):
        pad = torch.zeros(n, 7, device=device)  # 1.0 marks padding (the model scales it to -10000)
        pad[:, 5:] = 1.0
        return {"mapping_cond": torch.randn(n, 8, device=device, generator=gen),
                "unet_cond": torch.randn(n, 1, H, H, device=device, generator=gen),
                "cross_cond": torch.randn(n, 7, 16, device=device, generator=gen), "cross_cond_padding": pad}

    def train():
        reals = torch.rand(B, C, H, H, device=device, generator=gen)
        sigma = K.utils.rand_log_normal([B], loc=-1.2, scale=1.2, device=device)
        return model.loss(reals, torch.randn_like(reals), sigma, **cond(B)).mean()

    def evaluate():
        sigmas = K.sampling.get_sigmas_exponential(4, 0.05, 20, device=device)
        x = torch.randn(B, C, H, H, device=device, generator=gen) * sigmas[0]
        return K.sampling.sample_euler(model, x, sigmas, extra_args=cond(B), disable=True)

    return Workload("image_v1_cross_cond", train=train, modules=[model], eval=evaluate)


def _small_denoiser(torch, device):
    import k_diffusion as K

    inner = K.models.ImageDenoiserModelV1(C, 32, [1, 1], [16, 32], [False, False]).to(device)
    return K.Denoiser(inner, sigma_data=0.5).eval()


def build_samplers(torch, device):
    """Every sampler of k_diffusion.sampling on a small denoiser, over the four sigma schedules."""
    import k_diffusion as K
    from k_diffusion import sampling as S

    model = _small_denoiser(torch, device)
    gen = torch.Generator(device=device).manual_seed(0)
    smin, smax = 0.05, 20.0

    def x0(sig):
        return torch.randn(2, C, H, H, device=device, generator=gen) * sig

    def schedule(kind):
        if kind == "karras":
            return S.get_sigmas_karras(5, smin, smax, device=device)
        if kind == "exponential":
            return S.get_sigmas_exponential(5, smin, smax, device=device)
        if kind == "polyexponential":
            return S.get_sigmas_polyexponential(5, smin, smax, rho=2.0, device=device)
        return S.get_sigmas_vp(5, device=device)

    def run(fn, kind="karras", **kw):
        def call():
            with torch.no_grad():
                sigmas = schedule(kind)
                return fn(model, x0(sigmas[0]), sigmas, disable=True, **kw)
        return call

    def dpm_fast():
        with torch.no_grad():
            return S.sample_dpm_fast(model, x0(smax), smin, smax, 6, disable=True)

    def dpm_adaptive():
        with torch.no_grad():
            return S.sample_dpm_adaptive(model, x0(smax), smin, smax, rtol=0.2, atol=0.1, disable=True,
                                         return_info=True)

    def loglik():
        return S.log_likelihood(model, torch.rand(1, C, 8, 8, device=device, generator=gen), smin, smax,
                                atol=1e-2, rtol=1e-2)

    calls = []

    def cb(info):
        calls.append(info["i"])

    cases = [
        ("euler", run(S.sample_euler, s_churn=1.0, s_tmin=0.1, s_tmax=10.0)),
        ("euler_ancestral", run(S.sample_euler_ancestral, "exponential")),
        ("heun", run(S.sample_heun, "polyexponential", callback=cb)),
        ("dpm_2", run(S.sample_dpm_2, "vp")),
        ("dpm_2_ancestral", run(S.sample_dpm_2_ancestral)),
        ("lms", run(S.sample_lms, order=3)),
        ("dpm_fast", dpm_fast),
        ("dpm_adaptive", dpm_adaptive),
        ("dpmpp_2s_ancestral", run(S.sample_dpmpp_2s_ancestral)),
        ("dpmpp_sde", run(S.sample_dpmpp_sde)),
        ("dpmpp_2m", run(S.sample_dpmpp_2m, "exponential")),
        ("dpmpp_2m_sde-midpoint", run(S.sample_dpmpp_2m_sde)),
        ("dpmpp_2m_sde-heun", run(S.sample_dpmpp_2m_sde, solver_type="heun")),
        ("dpmpp_3m_sde", run(S.sample_dpmpp_3m_sde)),
        ("log_likelihood", loglik),
    ]
    del K
    return Workload("samplers", cases=cases)


def build_external_wrappers(torch, device):
    """VDenoiser and the CompVis eps / v DDPM wrappers around plain networks: training loss and sampling."""
    import math

    import k_diffusion as K
    from k_diffusion import external

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Conv2d(C + 1, 32, 3, padding=1), torch.nn.SiLU(),
                                            torch.nn.Conv2d(32, C, 3, padding=1))
            betas = torch.linspace(1e-4, 2e-2, 1000, dtype=torch.float64)
            self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, 0).float())

        def forward(self, x, t):
            tt = t.float().view(-1, 1, 1, 1).expand(x.shape[0], 1, *x.shape[2:]) / 1000
            return self.body(torch.cat([x, tt], 1))

        def apply_model(self, x, t, cond=None):
            return self(x, t)

    v_net, eps_net, vv_net = Net().to(device), Net().to(device), Net().to(device)
    vden = external.VDenoiser(v_net)
    eps = external.CompVisDenoiser(eps_net, quantize=False, device=device)
    vpred = external.CompVisVDenoiser(vv_net, quantize=True, device=device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        reals = torch.rand(B, C, H, H, device=device, generator=gen)
        sigma = K.utils.rand_log_normal([B], device=device)
        loss = vden.loss(reals, torch.randn_like(reals), sigma).mean()
        t = torch.randint(0, 1000, (B,), device=device, generator=gen)
        s = eps.t_to_sigma(t)
        loss = loss + eps.loss(reals, torch.randn_like(reals), s).mean()
        return loss + vpred.loss(reals, torch.randn_like(reals), vpred.t_to_sigma(t), cond=None).mean()

    def sample_eps():
        sigmas = eps.get_sigmas(6)
        x = torch.randn(2, C, H, H, device=device, generator=gen) * sigmas[0]
        return K.sampling.sample_dpmpp_2m(eps, x, sigmas, disable=True)

    def sample_v():
        sigmas = K.sampling.get_sigmas_karras(5, vpred.sigma_min.item(), vpred.sigma_max.item(), device=device)
        x = torch.randn(2, C, H, H, device=device, generator=gen) * sigmas[0]
        return K.sampling.sample_euler_ancestral(vpred, x, sigmas, extra_args={"cond": None}, disable=True)

    def sample_vden():
        sigmas = K.sampling.get_sigmas_karras(5, 0.05, math.tan(0.99 * math.pi / 2) / 10, device=device)
        x = torch.randn(2, C, H, H, device=device, generator=gen) * sigmas[0]
        return K.sampling.sample_heun(vden, x, sigmas, disable=True)

    def sigma_t_roundtrip():
        s = torch.rand(8, device=device, generator=gen) * 10 + 0.1
        return eps.t_to_sigma(eps.sigma_to_t(s)), vpred.sigma_to_t(s, quantize=True)

    def evaluate():
        with torch.no_grad():
            return sample_eps()

    return Workload("external_wrappers", train=train, modules=[v_net, eps_net, vv_net, vden, eps, vpred],
                    eval=evaluate, cases=[("CompVisDenoiser-dpmpp_2m", sample_eps),
                                          ("CompVisVDenoiser-euler_ancestral", sample_v),
                                          ("VDenoiser-heun", sample_vden), ("sigma_to_t", sigma_t_roundtrip)])


def build_denoiser_weightings(torch, device):
    """Denoiser.loss under each weighting and with multi-scale DCT frequency weighting (scales > 1)."""
    import k_diffusion as K

    gen = torch.Generator(device=device).manual_seed(0)
    inner = K.models.ImageDenoiserModelV1(C, 32, [1, 1], [16, 32], [False, False]).to(device)

    def case(weighting, scales):
        den = K.Denoiser(inner, sigma_data=0.5, weighting=weighting, scales=scales)

        def step():
            reals = torch.rand(B, C, H, H, device=device, generator=gen)
            sigma = K.utils.rand_log_normal([B], loc=-1.2, scale=1.2, device=device)
            loss = den.loss(reals, torch.randn_like(reals), sigma).mean()
            loss.backward()
            return loss
        return step

    return Workload("denoiser_weightings", cases=[("%s-scales%d" % (w, s), case(w, s))
                                                  for w in ("karras", "soft-min-snr", "snr") for s in (1, 3)])


def build_sample_densities(torch, device):
    import k_diffusion as K

    u = K.utils

    def strat():
        with u.enable_stratified(group=1, groups=4):
            return u.rand_log_normal([16], device=device), u.rand_v_diffusion([16], device=device)

    return Workload("sample_densities", cases=[
        ("rand_log_normal", lambda: u.rand_log_normal([64], -1.2, 1.2, device=device)),
        ("rand_log_logistic", lambda: u.rand_log_logistic([64], 0.0, 0.5, 1e-2, 80.0, device=device)),
        ("rand_log_uniform", lambda: u.rand_log_uniform([64], 1e-2, 80.0, device=device)),
        ("rand_v_diffusion", lambda: u.rand_v_diffusion([64], 0.5, 1e-2, 80.0, device=device)),
        ("rand_split_log_normal", lambda: u.rand_split_log_normal([64], -1.0, 1.0, 1.5, device=device)),
        ("rand_cosine_interpolated", lambda: u.rand_cosine_interpolated([64], H, 8, H, 0.5, 1e-3, 1e3,
                                                                         device=device)),
        ("stratified", strat),
        ("stratified_uniform", lambda: u.stratified_uniform([32], group=2, groups=4, device=device)),
    ])


def build_schedules_and_ema(torch, device):
    """The EMA helpers as a training loop steps them, around a real optimizer step. (Its LR schedulers pass
    ``verbose`` to torch's LRScheduler, which torch 2.11 no longer takes.)"""
    import copy

    import k_diffusion as K

    net = torch.nn.Linear(16, 16).to(device)
    ema = copy.deepcopy(net)
    gen = torch.Generator(device=device).manual_seed(0)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    warm = K.utils.EMAWarmup(power=2 / 3, max_value=0.9999)

    def step():
        def run():
            loss = net(torch.randn(8, 16, device=device, generator=gen)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            K.utils.ema_update(net, ema, warm.get_value())
            warm.step()
            return loss
        return run

    def ema_dict():
        vals = {"loss": torch.zeros([], device=device)}
        return K.utils.ema_update_dict(vals, {"loss": torch.rand([], device=device, generator=gen)}, 0.9)

    def to_pil():
        img = K.utils.to_pil_image(torch.rand(C, H, H, device=device, generator=gen) * 2 - 1)
        return K.utils.from_pil_image(img)

    cases = [("step+ema_update", step())] + [("ema_update_dict", ema_dict), ("to_pil_image", to_pil)]
    return Workload("schedules_and_ema", cases=cases)


def build_gns(torch, device):
    """GradientNoiseScale from per-microbatch and whole-batch squared gradient norms (train.py's gns path)."""
    import k_diffusion as K

    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 1)).to(device)
    gns = K.gns.GradientNoiseScale()
    gen = torch.Generator(device=device).manual_seed(0)

    def grad_sq(x, y):
        net.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        return sum(p.grad.pow(2).sum() for p in net.parameters())

    def update():
        x = torch.randn(8, 16, device=device, generator=gen)
        y = torch.randn(8, 1, device=device, generator=gen)
        small = torch.stack([grad_sq(x[i:i + 2], y[i:i + 2]) for i in range(0, 8, 2)]).mean()
        large = grad_sq(x, y)
        gns.update(small, large, 2, 8)
        return gns.get_gns(), gns.get_stats()

    return Workload("gns", cases=[("GradientNoiseScale.update", update)])


def build_evaluation(torch, device):
    """KID and FID on feature batches, compute_features with an accelerate Accelerator and a sampler."""
    import accelerate

    import k_diffusion as K

    gen = torch.Generator(device=device).manual_seed(0)
    model = _small_denoiser(torch, device)
    extractor = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(C * H * H, 32)).to(device)
    acc = accelerate.Accelerator(cpu=device.type != "cuda")

    def feats():
        return torch.randn(64, 32, device=device, generator=gen), torch.randn(64, 32, device=device, generator=gen)

    def sample_fn(n):
        sigmas = K.sampling.get_sigmas_karras(3, 0.05, 20, device=device)
        x = torch.randn(n, C, H, H, device=device, generator=gen) * sigmas[0]
        return K.sampling.sample_dpmpp_2m(model, x, sigmas, disable=True)

    def compute():
        with torch.no_grad():
            fake = K.evaluation.compute_features(acc, sample_fn, extractor, 8, 4)
            real = extractor(torch.rand(8, C, H, H, device=device, generator=gen))
            return K.evaluation.kid(fake, real), K.evaluation.fid(fake, real)

    return Workload("evaluation", cases=[("kid", lambda: K.evaluation.kid(*feats())),
                                         ("fid", lambda: K.evaluation.fid(*feats())),
                                         ("squared_mmd", lambda: K.evaluation.squared_mmd(*feats())),
                                         ("compute_features+kid+fid", compute)])


def build_augmentation(torch, device):
    """KarrasAugmentationPipeline on PIL images (the dataset transform), then the wrapped model's forward with
    the returned aug_cond on the device."""
    from PIL import Image

    import k_diffusion as K
    import numpy as np

    pipe = K.augmentation.KarrasAugmentationPipeline(a_prob=0.5)
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 255, (H, H, 3), dtype=np.uint8)) for _ in range(4)]
    inner = K.models.ImageDenoiserModelV1(C, 32, [1, 1], [16, 32], [False, False], mapping_cond_dim=9).to(device)
    wrapped = K.augmentation.KarrasAugmentWrapper(inner)
    den = K.Denoiser(wrapped, sigma_data=0.5)

    def batch():
        outs = [pipe(im) for im in images]
        reals = torch.stack([o[0] for o in outs]).to(device)
        aug_cond = torch.stack([o[2] for o in outs]).to(device)
        return reals, aug_cond

    def train():
        reals, aug_cond = batch()
        sigma = K.utils.rand_log_normal([len(reals)], device=device)
        return den.loss(reals, torch.randn_like(reals), sigma, aug_cond=aug_cond).mean()

    def evaluate():
        reals, aug_cond = batch()
        return den(reals, torch.full([len(reals)], 1.0, device=device), aug_cond=aug_cond)

    return Workload("augmentation", train=train, modules=[den], eval=evaluate, cases=[("pipeline", batch)])


WORKLOADS = [build_image_v1_karras_lognormal, build_image_v1_variance_loglogistic, build_image_v1_simple_vdiffusion,
             build_image_v1_snr_split_lognormal, build_image_transformer_v1_classcond,
             build_image_transformer_v1_loguniform, build_image_v1_cross_cond, build_samplers,
             build_external_wrappers, build_denoiser_weightings, build_sample_densities, build_schedules_and_ema,
             build_gns, build_evaluation, build_augmentation]
