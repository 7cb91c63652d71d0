"""neuraloperator 2.0.0 workloads: its operators (FNO 1d/2d/3d, TFNO, UNO, CODANO, UQNO, FNOGNO, GINO)
trained with its losses (LpLoss, H1Loss, HdivLoss, Burgers/IC equation losses, quantile loss, the
Relobralo / SoftAdapt aggregators), its ``Trainer`` / ``IncrementalFNOTrainer`` fit loops with
``DefaultDataProcessor``, ``IncrementalDataProcessor`` and ``MGPatchingDataProcessor``, its normalizers,
differentiation helpers and layers (DISCO convolutions, GNO block, attention kernel integral, Fourier
continuation, finite-difference convolution). Random init, synthetic fields; no downloads.
"""

from __future__ import annotations

from harness import Workload

B, S = 4, 32  # batch, grid side


def _model_workload(torch, device, name, model, make_batch, loss, eval_loss=None, lr=1e-3, cases=()):
    model = model.to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        x, y = make_batch(gen)
        return loss(model(x), y)

    def evaluate():
        x, y = make_batch(gen)
        out = model(x)
        return (eval_loss or loss)(out, y)

    return Workload(name, train=train, modules=[model], eval=evaluate, lr=lr, cases=list(cases))


def _fields(torch, device, c_in=1, c_out=1, dims=2, side=S):
    def make(gen):
        shape = (B,) + (side,) * dims
        x = torch.randn((shape[0], c_in) + shape[1:], device=device, generator=gen)
        y = torch.randn((shape[0], c_out) + shape[1:], device=device, generator=gen)
        return x, y
    return make


def build_fno2d_lp(torch, device):
    from neuralop import H1Loss, LpLoss
    from neuralop.models import FNO

    model = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=3)
    return _model_workload(torch, device, "fno2d_lp", model, _fields(torch, device), LpLoss(d=2, p=2),
                           H1Loss(d=2))


def build_fno1d_h1(torch, device):
    from neuralop import H1Loss, LpLoss
    from neuralop.models import FNO

    model = FNO(n_modes=(12,), in_channels=2, out_channels=1, hidden_channels=16, n_layers=2,
                domain_padding=0.25, norm="group_norm", channel_mlp_skip="linear", fno_skip="identity")
    return _model_workload(torch, device, "fno1d_h1", model, _fields(torch, device, c_in=2, dims=1, side=64),
                           H1Loss(d=1), LpLoss(d=1, p=2, reduction="mean"))


def build_fno3d(torch, device):
    from neuralop import LpLoss
    from neuralop.models import FNO

    model = FNO(n_modes=(4, 4, 4), in_channels=1, out_channels=2, hidden_channels=8, n_layers=2,
                separable=False, preactivation=True)
    return _model_workload(torch, device, "fno3d", model, _fields(torch, device, c_out=2, dims=3, side=12),
                           LpLoss(d=3, p=2))


def build_tfno_tucker(torch, device):
    from neuralop import H1Loss, LpLoss
    from neuralop.models import TFNO

    model = TFNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2,
                 factorization="tucker", implementation="factorized", rank=0.42)
    return _model_workload(torch, device, "tfno_tucker", model, _fields(torch, device), H1Loss(d=2),
                           LpLoss(d=2, p=2))


def build_tfno_cp_reconstructed(torch, device):
    from neuralop import LpLoss
    from neuralop.models import TFNO

    model = TFNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2,
                 factorization="cp", implementation="reconstructed", rank=0.3, stabilizer="tanh",
                 resolution_scaling_factor=[1.0, 1.0])
    return _model_workload(torch, device, "tfno_cp_reconstructed", model, _fields(torch, device), LpLoss(d=2))


def build_fno_ada_in_mixed(torch, device):
    """FNO with instance norm and half-precision spectral blocks under autocast."""
    from neuralop import LpLoss
    from neuralop.models import FNO

    model = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2, norm="instance_norm",
                fno_block_precision="mixed" if device.type == "cuda" else "full", positional_embedding="grid").to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    make = _fields(torch, device)
    loss = LpLoss(d=2)

    def train():
        x, y = make(gen)
        with torch.autocast(device.type, enabled=device.type == "cuda"):
            out = model(x)
        return loss(out.float(), y)

    def evaluate():
        x, y = make(gen)
        return loss(model(x), y)

    return Workload("fno_ada_in_mixed", train=train, modules=[model], eval=evaluate, lr=1e-3)


def build_uno(torch, device):
    from neuralop import LpLoss
    from neuralop.models import UNO

    model = UNO(3, 3, 16, uno_out_channels=[16, 32, 32, 16], uno_n_modes=[[5, 5], [5, 5], [5, 5], [5, 5]],
                uno_scalings=[[1.0, 1.0], [0.5, 0.5], [1, 1], [2, 2]], horizontal_skips_map={3: 0},
                n_layers=4, domain_padding=0.2, channel_mlp_skip="linear")
    return _model_workload(torch, device, "uno", model, _fields(torch, device, c_in=3, c_out=3), LpLoss(d=2))


def build_codano(torch, device):
    from neuralop import LpLoss
    from neuralop.models import CODANO

    n_layers = 3
    ids = ["a", "b", "c"]
    model = CODANO(output_variable_codimension=1, hidden_variable_codimension=2, lifting_channels=8,
                   use_positional_encoding=True, positional_encoding_dim=4, positional_encoding_modes=[8, 8],
                   use_horizontal_skip_connection=True, static_channel_dim=2, horizontal_skips_map={2: 0},
                   variable_ids=ids, n_layers=n_layers, n_heads=[2] * n_layers, n_modes=[[8, 8]] * n_layers,
                   attention_scaling_factors=[0.5] * n_layers,
                   per_layer_scaling_factors=[[1, 1], [0.5, 0.5], [2, 2]], enable_cls_token=True).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    loss = LpLoss(d=2)

    def batch():
        x = torch.randn(2, 3, S, S, device=device, generator=gen)
        static = torch.randn(2, 2, S, S, device=device, generator=gen)
        return x, static

    def train():
        x, static = batch()
        return loss(model(x, static, ids), x)

    def evaluate():
        x, static = batch()
        return model(x[:, :2], static, ids[:2])

    return Workload("codano", train=train, modules=[model], eval=evaluate, lr=1e-3)


def build_uqno_quantile(torch, device):
    """UQNO: a frozen FNO solution plus a residual FNO trained with the pointwise quantile loss."""
    from neuralop.losses.data_losses import PointwiseQuantileLoss
    from neuralop.models import FNO, UQNO

    base = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2)
    resid = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2)
    model = UQNO(base_model=base, residual_model=resid).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    make = _fields(torch, device)
    loss = PointwiseQuantileLoss(alpha=0.9)

    def train():
        x, y = make(gen)
        sol, q = model(x)
        return loss(q, y - sol)

    def evaluate():
        x, y = make(gen)
        sol, q = model(x)
        return ((y - sol).abs() <= q.abs()).float().mean()

    return Workload("uqno_quantile", train=train, params=list(resid.parameters()), modules=[model],
                    eval=evaluate, lr=1e-3)


def build_fnogno(torch, device):
    from neuralop.models import FNOGNO

    model = FNOGNO(in_channels=3, out_channels=2, gno_radius=0.2, gno_coord_dim=2, gno_pos_embed_type="transformer",
                   gno_transform_type="nonlinear", fno_n_modes=(8, 8), fno_hidden_channels=16, fno_n_layers=2,
                   gno_use_open3d=False, gno_use_torch_scatter=False).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    lin = torch.linspace(0, 1, S, device=device)
    in_p = torch.stack(torch.meshgrid(lin, lin, indexing="ij"), dim=-1)

    def batch():
        out_p = torch.rand(100, 2, device=device, generator=gen)
        f = torch.randn(S, S, 3, device=device, generator=gen)
        return out_p, f

    def train():
        out_p, f = batch()
        return model(in_p, out_p, f).pow(2).mean()

    def evaluate():
        out_p, f = batch()
        return model(in_p, out_p, f)

    return Workload("fnogno", train=train, modules=[model], eval=evaluate, lr=1e-3)


def build_gino(torch, device):
    from neuralop import LpLoss
    from neuralop.models import GINO

    model = GINO(in_channels=3, out_channels=2, latent_feature_channels=2, in_gno_radius=0.3, out_gno_radius=0.3,
                 gno_use_torch_scatter=False, gno_coord_dim=2, in_gno_pos_embed_type="transformer",
                 out_gno_pos_embed_type="transformer", in_gno_channel_mlp_hidden_layers=[16, 16],
                 out_gno_channel_mlp_hidden_layers=[16, 16], in_gno_transform_type="linear",
                 out_gno_transform_type="nonlinear_kernelonly", fno_n_modes=(8, 8), fno_hidden_channels=16,
                 fno_n_layers=2).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    lat = torch.stack(torch.meshgrid([torch.linspace(0, 1, 16, device=device)] * 2, indexing="xy"))
    lat = lat.permute(1, 2, 0)
    loss = LpLoss(d=1)

    def batch():
        geom = torch.rand(120, 2, device=device, generator=gen)
        queries = torch.rand(80, 2, device=device, generator=gen)
        x = torch.randn(2, 120, 3, device=device, generator=gen)
        feats = torch.randn(2, 16, 16, 2, device=device, generator=gen)
        y = torch.randn(2, 80, 2, device=device, generator=gen)
        return geom, queries, x, feats, y

    def train():
        geom, queries, x, feats, y = batch()
        out = model(x=x, input_geom=geom, latent_queries=lat, output_queries=queries, latent_features=feats)
        return loss(out, y)

    def evaluate():
        geom, queries, x, feats, _ = batch()
        return model(x=x, input_geom=geom, latent_queries=lat, output_queries=queries, latent_features=feats)

    return Workload("gino", train=train, modules=[model], eval=evaluate, lr=1e-3)


def build_burgers_physics(torch, device):
    """Physics-informed FNO on Burgers (t, x) fields: data + equation + initial-condition losses summed
    by WeightedSumLoss, as the PINO example trains."""
    from neuralop import BurgersEqnLoss, ICLoss, LpLoss, WeightedSumLoss
    from neuralop.models import FNO

    model = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    lp = LpLoss(d=2)
    eqn = BurgersEqnLoss(visc=0.01, method="fdm")
    ic = ICLoss()
    total = WeightedSumLoss(losses=[lp, eqn, ic], weights=[1.0, 0.1, 0.5])

    def batch():
        x = torch.randn(B, 1, 16, S, device=device, generator=gen)
        return x, x.clone()

    def train():
        x, y = batch()
        return total(model(x), y=y, x=x)

    def evaluate():
        x, y = batch()
        out = model(x)
        return lp(out, y), eqn(out)

    return Workload("burgers_physics", train=train, modules=[model], eval=evaluate, lr=1e-3)


def _aggregated(torch, device, name, agg_cls, **kw):
    from neuralop import H1Loss, LpLoss
    from neuralop.models import FNO

    model = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2).to(device)
    agg = agg_cls(list(model.parameters()), num_losses=2, **kw)
    gen = torch.Generator(device=device).manual_seed(0)
    make = _fields(torch, device)
    lp, h1 = LpLoss(d=2), H1Loss(d=2)
    step = [0]

    def train():
        x, y = make(gen)
        out = model(x)
        loss, _weights = agg({"l2": lp(out, y), "h1": h1(out, y)}, step[0])
        step[0] += 1
        return loss

    def evaluate():
        x, y = make(gen)
        return lp(model(x), y)

    return Workload(name, train=train, modules=[model], eval=evaluate, lr=1e-3)


def build_relobralo(torch, device):
    from neuralop import Relobralo
    return _aggregated(torch, device, "relobralo", Relobralo)


def build_softadapt(torch, device):
    from neuralop import SoftAdapt
    return _aggregated(torch, device, "softadapt", SoftAdapt)


class _DictData:
    """A map-style dataset of {'x', 'y'} samples, as neuralop's datasets give."""

    def __init__(self, torch, n, c_in=1, c_out=1, side=S, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, c_in, side, side, generator=g)
        self.y = torch.randn(n, c_out, side, side, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i]}


def build_trainer_fit(torch, device):
    """neuralop.Trainer.train: a DataLoader of dict samples, DefaultDataProcessor with unit-Gaussian
    normalizers fitted on the training data, H1 training loss, L2/H1 eval losses, a scheduler, eval each epoch."""
    from torch.utils.data import DataLoader

    from neuralop import H1Loss, LpLoss, Trainer
    from neuralop.data.transforms.data_processors import DefaultDataProcessor
    from neuralop.data.transforms.normalizers import UnitGaussianNormalizer
    from neuralop.models import FNO
    from neuralop.training import AdamW

    def fit(verbose):
        train = _DictData(torch, 16)
        test = _DictData(torch, 8, seed=1)
        in_norm = UnitGaussianNormalizer(dim=[0, 2, 3])
        in_norm.fit(train.x)
        out_norm = UnitGaussianNormalizer(dim=[0, 2, 3])
        out_norm.fit(train.y)
        proc = DefaultDataProcessor(in_norm, out_norm).to(device)
        model = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2).to(device)
        opt = AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        trainer = Trainer(model=model, n_epochs=2, device=device, data_processor=proc, eval_interval=1,
                          verbose=verbose)
        h1, l2 = H1Loss(d=2), LpLoss(d=2, p=2)
        return trainer.train(train_loader=DataLoader(train, batch_size=4, shuffle=True),
                             test_loaders={"32": DataLoader(test, batch_size=4)}, optimizer=opt, scheduler=sched,
                             training_loss=h1, eval_losses={"h1": h1, "l2": l2})

    return Workload("trainer_fit", cases=[("Trainer.train", lambda: fit(False)),
                                          ("Trainer.train-verbose", lambda: fit(True))])


def build_trainer_mixed_plateau(torch, device):
    """Trainer with mixed precision, a ReduceLROnPlateau scheduler and save_best / checkpointing."""
    import tempfile

    from torch.utils.data import DataLoader

    from neuralop import LpLoss, Trainer
    from neuralop.models import TFNO

    tmp = tempfile.mkdtemp(prefix="neuralop-ckpt-")

    def fit():
        model = TFNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16, n_layers=2).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
        trainer = Trainer(model=model, n_epochs=2, device=device, mixed_precision=device.type == "cuda",
                          verbose=True)
        l2 = LpLoss(d=2)
        return trainer.train(train_loader=DataLoader(_DictData(torch, 12), batch_size=4),
                             test_loaders={"test": DataLoader(_DictData(torch, 8, seed=2), batch_size=4)},
                             optimizer=opt, scheduler=sched, training_loss=l2, eval_losses={"l2": l2},
                             save_best="test_l2", save_dir=tmp)

    return Workload("trainer_mixed_plateau", cases=[("Trainer.train", fit)])


def build_incremental_trainer(torch, device):
    """IncrementalFNOTrainer: the loss-gap and gradient-explained incremental modes, with the
    IncrementalDataProcessor's resolution curriculum."""
    from torch.utils.data import DataLoader

    from neuralop import LpLoss
    from neuralop.data.transforms.data_processors import IncrementalDataProcessor
    from neuralop.models import FNO
    from neuralop.training import IncrementalFNOTrainer

    def fit(mode):
        model = FNO(n_modes=(8, 8), max_n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=16,
                    n_layers=2).to(device)
        model.fno_blocks.n_modes = (2, 2)
        proc = IncrementalDataProcessor(device=device, subsampling_rates=[2, 1], dataset_resolution=S,
                                        dataset_indices=[2, 3], epoch_gap=1).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
        kw = {"incremental_loss_gap": True} if mode == "loss_gap" else {"incremental_grad": True,
                                                                        "incremental_buffer": 2}
        trainer = IncrementalFNOTrainer(model=model, n_epochs=3, device=device, data_processor=proc, **kw)
        l2 = LpLoss(d=2)
        return trainer.train(train_loader=DataLoader(_DictData(torch, 12), batch_size=4),
                             test_loaders={"test": DataLoader(_DictData(torch, 8, seed=3), batch_size=4)},
                             optimizer=opt, scheduler=sched, training_loss=l2, eval_losses={"l2": l2})

    return Workload("incremental_trainer", cases=[("loss_gap", lambda: fit("loss_gap")),
                                                  ("grad_explained", lambda: fit("grad"))])


def build_mg_patching(torch, device):
    """MGPatchingDataProcessor: multigrid patches in, stitched out, through the Trainer."""
    from torch.utils.data import DataLoader

    from neuralop import LpLoss, Trainer
    from neuralop.data.transforms.data_processors import MGPatchingDataProcessor
    from neuralop.models import FNO

    def fit():
        model = FNO(n_modes=(8, 8), in_channels=2, out_channels=1, hidden_channels=16, n_layers=2).to(device)
        proc = MGPatchingDataProcessor(model=model, levels=1, padding_fraction=0.125, stitching=True,
                                       device=device).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
        trainer = Trainer(model=model, n_epochs=1, device=device, data_processor=proc)
        l2 = LpLoss(d=2)
        return trainer.train(train_loader=DataLoader(_DictData(torch, 8), batch_size=4),
                             test_loaders={"test": DataLoader(_DictData(torch, 4, seed=4), batch_size=4)},
                             optimizer=opt, scheduler=sched, training_loss=l2, eval_losses={"l2": l2})

    return Workload("mg_patching", cases=[("Trainer.train", fit)])


def build_losses(torch, device):
    """The data losses and differentiation helpers on device fields, forward and backward."""
    from neuralop import FiniteDiff, FourierDiff, H1Loss, LpLoss, non_uniform_fd
    from neuralop.losses.data_losses import HdivLoss, MSELoss, PointwiseQuantileLoss

    gen = torch.Generator(device=device).manual_seed(0)

    def pair(c=1, dims=2):
        shape = (B, c) + (S,) * dims
        x = torch.randn(shape, device=device, generator=gen, requires_grad=True)
        return x, torch.randn(shape, device=device, generator=gen)

    def lp():
        x, y = pair()
        out = [LpLoss(d=2, p=p, reduction=r)(x, y) for p in (1, 2) for r in ("sum", "mean")]
        out.append(LpLoss(d=2).abs(x, y))
        sum(out).backward()

    def h1():
        x, y = pair()
        v = H1Loss(d=2, reduction="mean")(x, y) + H1Loss(d=2).abs(x, y)
        v.backward()

    def hdiv():
        x, y = pair(c=2)
        HdivLoss(d=2)(x, y).backward()

    def quantile_mse():
        x, y = pair()
        (PointwiseQuantileLoss(alpha=0.1)(x, y) + MSELoss()(x, y)).backward()

    def finite_diff():
        u = torch.randn(B, S, S, device=device, generator=gen)
        fd = FiniteDiff(dim=2, h=(0.1, 0.1), periodic_in_x=True, periodic_in_y=False)
        return fd.dx(u), fd.dy(u, order=2), fd.laplacian(u), fd.gradient(u)

    def fourier_diff():
        u = torch.randn(B, S, S, device=device, generator=gen)
        fd = FourierDiff(dim=2, L=(1.0, 1.0))
        return fd.dx(u), fd.laplacian(u)

    def nonuniform():
        pts = torch.rand(200, 2, device=device, generator=gen)
        vals = torch.sin(pts[:, 0]) * pts[:, 1]
        return non_uniform_fd(pts, vals, num_neighbors=5, derivative_indices=[0, 1])

    return Workload("losses", cases=[("LpLoss", lp), ("H1Loss", h1), ("HdivLoss", hdiv),
                                     ("PointwiseQuantileLoss+MSELoss", quantile_mse), ("FiniteDiff", finite_diff),
                                     ("FourierDiff", fourier_diff), ("non_uniform_fd", nonuniform)])


def build_normalizers(torch, device):
    from neuralop.data.transforms.normalizers import UnitGaussianNormalizer

    gen = torch.Generator(device=device).manual_seed(0)

    def fit_transform():
        data = torch.randn(16, 2, S, S, device=device, generator=gen) * 3 + 1
        n = UnitGaussianNormalizer(dim=[0, 2, 3])
        n.fit(data)
        return n.inverse_transform(n.transform(data))

    def partial_fit():
        n = UnitGaussianNormalizer(dim=[0, 2, 3])
        for _ in range(3):
            n.partial_fit(torch.randn(8, 2, S, S, device=device, generator=gen), batch_size=4)
        return n(torch.randn(2, 2, S, S, device=device, generator=gen))

    def dict_norm():
        data = [{"x": torch.randn(2, S, S, device=device, generator=gen),
                 "y": torch.randn(1, S, S, device=device, generator=gen)} for _ in range(6)]
        norms = UnitGaussianNormalizer.from_dataset(data, dim=[0, 2, 3], keys=["x", "y"])
        return [norms[k].transform(data[0][k]) for k in norms]

    return Workload("normalizers", cases=[("fit+transform", fit_transform), ("partial_fit", partial_fit),
                                          ("UnitGaussianNormalizer.from_dataset", dict_norm)])


def build_layers(torch, device):
    """GNO block, attention kernel integral, finite-difference convolution, Fourier continuation, spectral
    convolution with resolution scaling, in a training step."""
    from neuralop.layers.attention_kernel_integral import AttentionKernelIntegral
    from neuralop.layers.differential_conv import FiniteDifferenceConvolution
    from neuralop.layers.fourier_continuation import FCLegendre
    from neuralop.layers.gno_block import GNOBlock
    from neuralop.layers.spectral_convolution import SpectralConv

    gno = GNOBlock(in_channels=3, out_channels=3, coord_dim=2, radius=0.25, transform_type="nonlinear",
                   channel_mlp_layers=[16, 16], use_torch_scatter_reduce=False,
                   use_open3d_neighbor_search=False).to(device)
    attn = AttentionKernelIntegral(in_channels=4, out_channels=4, n_heads=2, head_n_channels=8).to(device)
    fdc = FiniteDifferenceConvolution(2, 2, n_dim=2, kernel_size=3).to(device)
    spec = SpectralConv(2, 2, n_modes=(8, 8), resolution_scaling_factor=2).to(device)
    fc = FCLegendre(d=2, n_additional_pts=8).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        y = torch.rand(150, 2, device=device, generator=gen)
        x = torch.rand(60, 2, device=device, generator=gen)
        f = torch.randn(150, 3, device=device, generator=gen)
        a = torch.randn(2, 64, 4, device=device, generator=gen)
        pos = torch.rand(2, 64, 2, device=device, generator=gen)
        u = torch.randn(B, 2, S, S, device=device, generator=gen)
        v = gno(y, x, f).pow(2).mean() + attn(a, pos).pow(2).mean()
        v = v + spec(fdc(u, 1.0 / S)).pow(2).mean() + fc(u[:, :1], dim=2).pow(2).mean()
        return v

    def evaluate():
        return spec(torch.randn(B, 2, S, S, device=device, generator=gen))

    return Workload("layers", train=train, modules=[gno, attn, fdc, spec, fc], eval=evaluate, lr=1e-3)


WORKLOADS = [build_fno2d_lp, build_fno1d_h1, build_fno3d, build_tfno_tucker, build_tfno_cp_reconstructed,
             build_fno_ada_in_mixed, build_uno, build_codano, build_uqno_quantile, build_fnogno, build_gino,
             build_burgers_physics, build_relobralo, build_softadapt, build_trainer_fit, build_trainer_mixed_plateau,
             build_incremental_trainer, build_mg_patching, build_losses, build_normalizers, build_layers]
