"""neuralforecast 3.3.0 workloads, as its tutorials and tests run them: a synthetic panel of daily series made
here (a pandas frame with a future-known exogenous "price" and "promo", a historic "traffic", static "size" /
"region" and a categorical "weekday"), small models with random init, and per model family:

- the library's own training step (``BaseModel.training_step`` on a batch of its ``TimeSeriesDataModule``:
  windows, sampling, scaler, forward, loss; the harness does backward and the optimizer step), its
  ``validation_step`` as the eval forward, and ``NeuralForecast.fit`` (Lightning, ``max_steps=2``, validation
  every step), ``predict`` (with ``futr_df``), ``cross_validation`` and ``predict_insample``;
- the families: MLP / NHITS / NBEATS / NBEATSx; RNN / GRU / LSTM (recurrent and direct) / DilatedRNN / TCN /
  DeepAR; TFT / VanillaTransformer / Informer / Autoformer / FEDformer / PatchTST; the multivariate TSMixer /
  TSMixerx / MLPMultivariate / iTransformer / StemGNN / SOFTS / SOFTSSharp / TimeMixer / RMoK / TimeXer /
  XLinear; DLinear / NLinear / TiDE / BiTCN / DeepNPTS / KAN / TimesNet; HINT reconciliation;
- the point, quantile, distribution and mixture losses (``DistributionLoss`` Normal / StudentT / Poisson /
  NegativeBinomial / Tweedie / ISQF, PMM, GMM, NBMM, MQLoss, IQLoss, HuberMQLoss, ...) trained inside models
  and called on device tensors (``__call__``, ``sample``, ``domain_map`` / ``scale_decouple``);
- the ``TemporalNorm`` scalers, conformal ``PredictionIntervals``, ``simulate`` (sample paths), ``Auto*``
  models with the optuna backend, ``save`` / ``load``, explicit ``val_df``, early stopping, lr schedulers,
  sample weights and the ``available_mask``.

No files read, no downloads. neuralforecast imports ray at import time (its Auto models' ray backend), which
is not installed here: a stand-in ``ray`` module is put in ``sys.modules`` before the import (only the optuna
backend is used). TimeLLM (an LLM download) and xLSTM (the xlstm package) are not run.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import types

from harness import Workload

N_SERIES, T_LEN, H, L = 6, 96, 6, 12
_CACHE: dict = {}


def _ray_stand_in():
    """A minimal ``ray`` (air, tune, the Lightning callback, the search generator) where ray is missing:
    neuralforecast.core imports neuralforecast.common._base_auto, which imports ray at module level."""
    try:
        import ray  # noqa: F401

        return
    except ImportError:
        pass

    class _Stub:
        def __init__(self, *args, **kwargs):
            pass

    def _missing(name):
        raise AttributeError(name)

    ray = types.ModuleType("ray")  # noqa: F811
    air = types.ModuleType("ray.air")
    tune = types.ModuleType("ray.tune")
    integ = types.ModuleType("ray.tune.integration")
    tpl = types.ModuleType("ray.tune.integration.pytorch_lightning")
    search = types.ModuleType("ray.tune.search")
    basic = types.ModuleType("ray.tune.search.basic_variant")
    tpl.TuneReportCallback = type("TuneReportCallback", (_Stub,), {})
    basic.BasicVariantGenerator = type("BasicVariantGenerator", (_Stub,), {})
    tune.__getattr__ = lambda name: _missing(name) if name.startswith("__") else (lambda *a, **k: (name, a, k))
    air.__getattr__ = lambda name: _missing(name) if name.startswith("__") else _Stub
    ray.air, ray.tune, tune.integration, integ.pytorch_lightning, tune.search, search.basic_variant = (
        air, tune, integ, tpl, search, basic)
    for m in (ray, air, tune, integ, tpl, search, basic):
        sys.modules[m.__name__] = m


def _nf():
    _ray_stand_in()
    for name in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "neuralforecast",
                 "torchrl"):
        logging.getLogger(name).setLevel(logging.ERROR)
    import neuralforecast

    return neuralforecast


def _frames(n_series=N_SERIES, t_len=T_LEN, seed=0):
    """(df, static_df, futr_df): daily series with exogenous columns; futr_df covers the next H days."""
    import numpy as np
    import pandas as pd

    if ("frames", n_series, t_len, seed) in _CACHE:
        return _CACHE[("frames", n_series, t_len, seed)]
    rng = np.random.default_rng(seed)
    n = t_len + H
    rows = []
    for i in range(n_series):
        t = np.arange(n)
        ds = pd.date_range("2024-01-01", periods=n, freq="D")
        price = 1 + 0.2 * np.sin(t / 9 + i) + rng.normal(0, 0.02, n)
        promo = (rng.random(n) < 0.15).astype("float32")
        y = 20 + 3 * i + 4 * np.sin(2 * np.pi * t / 7 + i) - 5 * price + 3 * promo + rng.normal(0, 0.5, n)
        rows.append(pd.DataFrame({"unique_id": "s%d" % i, "ds": ds, "y": y.astype("float32"),
                                  "price": price.astype("float32"), "promo": promo,
                                  "traffic": (y + rng.normal(0, 1, n)).astype("float32"),
                                  "weekday": ds.dayofweek.astype(str)}))
    full = pd.concat(rows, ignore_index=True)
    full["weekday"] = full["weekday"].astype("category")
    cut = full.groupby("unique_id").cumcount() < t_len
    df = full[cut].reset_index(drop=True)
    futr = full[~cut][["unique_id", "ds", "price", "promo", "weekday"]].reset_index(drop=True)
    static = pd.DataFrame({"unique_id": ["s%d" % i for i in range(n_series)],
                           "size": np.linspace(0.5, 1.5, n_series).astype("float32"),
                           "region": (np.arange(n_series) % 2).astype("float32")})
    _CACHE[("frames", n_series, t_len, seed)] = (df, static, futr)
    return df, static, futr


def _trainer_kwargs(device):
    return dict(accelerator="gpu" if device.type == "cuda" else "cpu", devices=1, logger=False,
                enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False)


def _kw(cls, device, exog=True, **extra):
    """Common small-model arguments; exogenous lists where the model takes them."""
    kw = dict(h=H, input_size=L, max_steps=2, val_check_steps=1, batch_size=4, valid_batch_size=8,
              windows_batch_size=16, inference_windows_batch_size=32, learning_rate=1e-3, random_seed=1,
              **_trainer_kwargs(device))
    if cls.MULTIVARIATE:
        kw["n_series"] = N_SERIES
        kw["batch_size"] = N_SERIES
        kw["valid_batch_size"] = N_SERIES
    if exog:
        if cls.EXOGENOUS_FUTR:
            kw["futr_exog_list"] = ["price", "promo"]
        if cls.EXOGENOUS_HIST:
            kw["hist_exog_list"] = ["traffic"]
        if cls.EXOGENOUS_STAT:
            kw["stat_exog_list"] = ["size", "region"]
    kw.update(extra)
    return kw


def _move(batch, device):
    from lightning.fabric.utilities.apply_func import move_data_to_device

    return move_data_to_device(batch, device)


def _family(torch, device, name, models, exog=True, insample=True, cv=True, extra_cases=(), fit_kwargs=None):
    """One NeuralForecast over ``models``: setup fit, then the library's training_step / validation_step per model
    (train / eval) and fit, predict, cross_validation, predict_insample as cases."""
    _nf()
    from neuralforecast import NeuralForecast
    from neuralforecast.tsdataset import TimeSeriesDataModule

    df, static, futr = _frames()
    cols = ["unique_id", "ds", "y"] + (["price", "promo", "traffic"] if exog else [])
    df = df[cols]
    futr = futr[["unique_id", "ds", "price", "promo"]] if exog else None
    static_df = static if exog else None
    fit_kwargs = dict(val_size=H, **(fit_kwargs or {}))
    nf = NeuralForecast(models=models, freq="D")
    nf.fit(df, static_df=static_df, **fit_kwargs)
    for m in nf.models:
        m.to(device)
    loaders = {}

    def batch(m, kind):
        key = (id(m), kind)
        if key not in loaders:
            bs = N_SERIES if m.MULTIVARIATE else (m.batch_size if kind == "train" else m.valid_batch_size)
            dm = TimeSeriesDataModule(nf.dataset, batch_size=bs, valid_batch_size=bs, shuffle_train=kind == "train")
            loaders[key] = [dm.train_dataloader() if kind == "train" else dm.val_dataloader(), None]
        dl = loaders[key]
        if dl[1] is None:
            dl[1] = iter(dl[0])
        try:
            b = next(dl[1])
        except StopIteration:
            dl[1] = iter(dl[0])
            b = next(dl[1])
        return _move(b, device)

    def train():
        total = 0
        for m in nf.models:
            m.val_size = H
            m._trainer = None  # the fit dropped its Trainer: self.log() is then a no-op
            total = total + m.training_step(batch(m, "train"), 0)
        return total

    def evaluate():
        out = []
        for m in nf.models:
            m.val_size = H
            m._trainer = None
            m.validation_step_outputs = []
            out.append(m.validation_step(batch(m, "val"), 0))
        return out

    def train_mode():  # as fresh models are: Lightning keeps the mode a model is in when fit starts
        for m in nf.models:
            m.train()

    def fit():
        train_mode()
        nf.fit(df, static_df=static_df, **fit_kwargs)

    def predict():
        return nf.predict(futr_df=futr, static_df=static_df)

    def cross_validation():
        train_mode()
        return nf.cross_validation(df, static_df=static_df, n_windows=2, step_size=H, val_size=H)

    def predict_insample():
        return nf.predict_insample(step_size=H)

    cases = [("NeuralForecast.fit", fit), ("NeuralForecast.predict", predict)]
    if cv:
        cases.append(("NeuralForecast.cross_validation", cross_validation))
    if insample:
        cases.append(("NeuralForecast.predict_insample", predict_insample))
    cases += [(n, (lambda f=f: f(nf, df, static_df, futr))) for n, f in extra_cases]
    return Workload(name, train=train, modules=list(nf.models), eval=evaluate, cases=cases, lr=1e-3,
                    info={"models": [type(m).__name__ for m in nf.models]})


def build_mlp_nhits_nbeats(torch, device):
    """MLP, NHITS (pooling + interpolation), NBEATS (trend / seasonality stacks) and NBEATSx with exogenous."""
    _nf()
    from neuralforecast.losses.pytorch import MAE, MSE, HuberLoss
    from neuralforecast.models import MLP, NBEATS, NBEATSx, NHITS

    models = [MLP(**_kw(MLP, device, num_layers=2, hidden_size=32, scaler_type="standard")),
              NHITS(**_kw(NHITS, device, n_pool_kernel_size=[2, 2, 1], n_freq_downsample=[4, 2, 1],
                          mlp_units=3 * [[32, 32]], scaler_type="robust", loss=HuberLoss())),
              NBEATS(**_kw(NBEATS, device, stack_types=["identity", "trend", "seasonality"], mlp_units=3 * [[32, 32]],
                           loss=MSE())),
              NBEATSx(**_kw(NBEATSx, device, mlp_units=3 * [[32, 32]], scaler_type="minmax", loss=MAE()))]
    return _family(torch, device, "mlp_nhits_nbeats", models)


def build_recurrent(torch, device):
    """RNN / GRU / LSTM (recurrent and direct decoding), DilatedRNN, TCN, DeepAR (Student-t, Monte Carlo paths)."""
    _nf()
    from neuralforecast.losses.pytorch import MAE, MQLoss, DistributionLoss
    from neuralforecast.models import GRU, LSTM, RNN, TCN, DeepAR, DilatedRNN

    models = [RNN(**_kw(RNN, device, encoder_hidden_size=16, decoder_hidden_size=16, recurrent=True,
                        scaler_type="standard")),
              GRU(**_kw(GRU, device, encoder_hidden_size=16, decoder_hidden_size=16, recurrent=False,
                        loss=MQLoss(level=[80]))),
              LSTM(**_kw(LSTM, device, encoder_hidden_size=16, decoder_hidden_size=16, recurrent=True,
                         loss=DistributionLoss("Normal", level=[80]), scaler_type="robust")),
              LSTM(**_kw(LSTM, device, encoder_hidden_size=16, decoder_hidden_size=16, recurrent=False,
                         alias="LSTM_direct")),
              DilatedRNN(**_kw(DilatedRNN, device, encoder_hidden_size=16, decoder_hidden_size=16, loss=MAE())),
              TCN(**_kw(TCN, device, encoder_hidden_size=16, decoder_hidden_size=16, kernel_size=2,
                        dilations=[1, 2])),
              DeepAR(**_kw(DeepAR, device, lstm_hidden_size=16, lstm_n_layers=1, trajectory_samples=10,
                           loss=DistributionLoss("StudentT", level=[80, 90]), valid_loss=MQLoss(level=[80, 90])))]
    return _family(torch, device, "recurrent", models)


def build_transformers(torch, device):
    """TFT (variable selection, interpretable attention), VanillaTransformer, Informer, Autoformer, FEDformer,
    PatchTST."""
    _nf()
    from neuralforecast.losses.pytorch import MQLoss
    from neuralforecast.models import TFT, Autoformer, FEDformer, Informer, PatchTST, VanillaTransformer

    common = dict(hidden_size=16, n_head=2)
    models = [TFT(**_kw(TFT, device, hidden_size=16, n_head=2, loss=MQLoss(level=[80]), scaler_type="robust")),
              VanillaTransformer(**_kw(VanillaTransformer, device, **common, conv_hidden_size=16)),
              Informer(**_kw(Informer, device, **common, conv_hidden_size=16, factor=2)),
              Autoformer(**_kw(Autoformer, device, **common, conv_hidden_size=16, factor=2)),
              FEDformer(**_kw(FEDformer, device, hidden_size=16, n_head=8, conv_hidden_size=16, modes=4)),
              PatchTST(**_kw(PatchTST, device, hidden_size=16, n_heads=2, linear_hidden_size=32, patch_len=4,
                             stride=2, revin=True))]
    return _family(torch, device, "transformers", models)


def build_multivariate(torch, device):
    """The multivariate models (all series in one window): TSMixer, TSMixerx, MLPMultivariate, iTransformer,
    StemGNN, SOFTS, SOFTSSharp, TimeMixer, RMoK, TimeXer, XLinear."""
    _nf()
    from neuralforecast.losses.pytorch import MAE, MQLoss, DistributionLoss
    from neuralforecast.models import (RMoK, SOFTS, SOFTSSharp, MLPMultivariate, StemGNN, TimeMixer, TimeXer,
                                       TSMixer, TSMixerx, XLinear, iTransformer)

    models = [TSMixer(**_kw(TSMixer, device, n_block=2, ff_dim=16, revin=True, loss=MQLoss(level=[80]))),
              TSMixerx(**_kw(TSMixerx, device, n_block=2, ff_dim=16, revin=True)),
              MLPMultivariate(**_kw(MLPMultivariate, device, num_layers=2, hidden_size=32,
                                    loss=DistributionLoss("Normal", level=[80]))),
              iTransformer(**_kw(iTransformer, device, hidden_size=16, n_heads=2, e_layers=1, d_ff=32)),
              StemGNN(**_kw(StemGNN, device, n_stacks=2, multi_layer=2)),
              SOFTS(**_kw(SOFTS, device, hidden_size=16, d_core=16, e_layers=1, d_ff=32)),
              SOFTSSharp(**_kw(SOFTSSharp, device, hidden_size=16, d_core=16, e_layers=1, d_ff=32)),
              TimeMixer(**_kw(TimeMixer, device, d_model=16, d_ff=16, down_sampling_layers=1, top_k=3)),
              RMoK(**_kw(RMoK, device, taylor_order=3, jacobi_degree=4, wavelet_function="mexican_hat")),
              TimeXer(**_kw(TimeXer, device, patch_len=4, hidden_size=16, n_heads=2, e_layers=1, d_ff=32)),
              XLinear(**_kw(XLinear, device, loss=MAE()))]
    return _family(torch, device, "multivariate", models, insample=False)


def build_linear_conv_kan(torch, device):
    """DLinear, NLinear, TiDE, BiTCN, DeepNPTS, KAN, TimesNet."""
    _nf()
    from neuralforecast.losses.pytorch import MAE, MQLoss
    from neuralforecast.models import KAN, NLinear, BiTCN, DLinear, DeepNPTS, TiDE, TimesNet

    models = [DLinear(**_kw(DLinear, device, moving_avg_window=5)),
              NLinear(**_kw(NLinear, device)),
              TiDE(**_kw(TiDE, device, hidden_size=32, decoder_output_dim=8, temporal_decoder_dim=16,
                         loss=MQLoss(level=[80]))),
              BiTCN(**_kw(BiTCN, device, hidden_size=8)),
              DeepNPTS(**_kw(DeepNPTS, device, hidden_size=16, n_layers=2, loss=MAE())),
              KAN(**_kw(KAN, device, hidden_size=16, grid_size=4)),
              TimesNet(**_kw(TimesNet, device, hidden_size=16, conv_hidden_size=16, top_k=2, num_kernels=2))]
    return _family(torch, device, "linear_conv_kan", models)


def build_distribution_losses(torch, device):
    """Models trained on the distribution and mixture losses: DistributionLoss (Poisson, NegativeBinomial, Tweedie,
    ISQF), PMM, GMM, NBMM, plus IQLoss / HuberIQLoss / HuberMQLoss; predictions with levels and quantiles."""
    _nf()
    from neuralforecast.losses.pytorch import (GMM, NBMM, PMM, DistributionLoss, HuberIQLoss, HuberMQLoss, IQLoss,
                                               MQLoss)
    from neuralforecast.models import MLP, NHITS

    def mlp(loss, alias, **kw):
        return MLP(**_kw(MLP, device, exog=False, num_layers=2, hidden_size=32, loss=loss, alias=alias, **kw))

    models = [mlp(DistributionLoss("Poisson", level=[80]), "poisson"),
              mlp(DistributionLoss("NegativeBinomial", level=[80]), "negbin", valid_loss=MQLoss(level=[80])),
              mlp(DistributionLoss("Tweedie", level=[80], rho=1.5), "tweedie"),
              mlp(DistributionLoss("ISQF", level=[80], num_pieces=3), "isqf"),
              mlp(PMM(n_components=2, level=[80]), "pmm"),
              mlp(GMM(n_components=2, level=[80]), "gmm"),
              mlp(NBMM(n_components=2, level=[80]), "nbmm"),
              NHITS(**_kw(NHITS, device, exog=False, mlp_units=3 * [[16, 16]], loss=IQLoss(), alias="iq")),
              NHITS(**_kw(NHITS, device, exog=False, mlp_units=3 * [[16, 16]], loss=HuberIQLoss(), alias="huberiq")),
              NHITS(**_kw(NHITS, device, exog=False, mlp_units=3 * [[16, 16]], loss=HuberMQLoss(quantiles=[0.1, 0.5, 0.9]),
                          alias="hubermq"))]

    def predict_quantiles(nf, df, static_df, futr):
        return nf.predict(quantiles=[0.2, 0.5, 0.8])

    def simulate(nf, df, static_df, futr):
        return nf.simulate(n_paths=20, seed=0)

    return _family(torch, device, "distribution_losses", models, exog=False,
                   extra_cases=[("predict quantiles", predict_quantiles), ("NeuralForecast.simulate", simulate)])


def build_losses(torch, device):
    """The losses called on device tensors as a training loop does (y, y_hat, mask, y_insample): MAE, MSE, RMSE,
    MAPE, SMAPE, MASE, relMSE, QuantileLoss, MQLoss, HuberLoss, TukeyLoss, HuberQLoss, HuberMQLoss, Accuracy,
    sCRPS, FreDF, IQLoss, HuberIQLoss; and the distribution losses' ``domain_map`` / ``scale_decouple`` /
    ``__call__`` / ``sample`` (Normal, StudentT, Poisson, NegativeBinomial, Tweedie, ISQF, Bernoulli; PMM, GMM,
    NBMM)."""
    _nf()
    from neuralforecast.losses import pytorch as L_

    g = torch.Generator(device="cpu").manual_seed(0)
    B, n = 8, 1

    def t(*shape, pos=False):
        x = torch.randn(*shape, generator=g)
        return (x.abs() + 0.5 if pos else x).to(device)

    y, y_hat, y_ins = t(B, H, n, pos=True), t(B, H, n, pos=True), t(B, L, n, pos=True)
    mask = torch.ones(B, H, n, device=device)
    cases = []
    point = {"MAE": L_.MAE(), "MSE": L_.MSE(), "RMSE": L_.RMSE(), "MAPE": L_.MAPE(), "SMAPE": L_.SMAPE(),
             "MASE": L_.MASE(seasonality=7), "HuberLoss": L_.HuberLoss(),
             "TukeyLoss": L_.TukeyLoss(), "HuberQLoss": L_.HuberQLoss(q=0.7), "FreDF": L_.FreDF(),
             "QuantileLoss": L_.QuantileLoss(q=0.3)}
    for name, loss in point.items():
        loss = loss.to(device)
        cases.append((name, lambda loss=loss: loss(y=y, y_hat=y_hat, y_insample=y_ins, mask=mask)))
    rel = L_.relMSE().to(device)
    cases.append(("relMSE", lambda: rel(y=y, y_hat=y_hat, y_benchmark=y_hat * 0.9, mask=mask)))
    mq = L_.MQLoss(level=[80, 90]).to(device)
    hmq = L_.HuberMQLoss(level=[80]).to(device)
    cases.append(("MQLoss", lambda: mq(y=y, y_hat=mq.domain_map(t(B, H, n, 5)), y_insample=y_ins, mask=mask)))
    cases.append(("HuberMQLoss", lambda: hmq(y=y, y_hat=hmq.domain_map(t(B, H, n, 3)), y_insample=y_ins, mask=mask)))
    acc = L_.Accuracy().to(device)
    cases.append(("Accuracy", lambda: acc(y=(y > 1).float(), y_hat=(y_hat > 1).float(), y_insample=y_ins,
                                         mask=mask)))
    scrps = L_.sCRPS(level=[80]).to(device)
    cases.append(("sCRPS", lambda: scrps(y=y, y_hat=t(B, H, n, 3), y_insample=y_ins, mask=mask)))
    iq = L_.IQLoss().to(device)
    cases.append(("IQLoss", lambda: iq(y=y, y_hat=iq.domain_map(t(B, H, 1)), mask=mask)))

    def dist_case(loss, target=None):
        loss = loss.to(device)
        target = y if target is None else target

        def run():  # the network's output: [B, h, n_series * outputsize_multiplier]
            out = loss.domain_map(t(B, H, n * loss.outputsize_multiplier))
            loc, scale = t(B, 1, n, pos=True), t(B, 1, n, pos=True)
            args = loss.scale_decouple(output=out, loc=loc, scale=scale)
            val = loss(y=target, distr_args=args, mask=mask)
            samples = loss.sample(distr_args=args, num_samples=16)
            return val, samples

        return run

    for dname in ("Normal", "StudentT", "Poisson", "NegativeBinomial", "Tweedie", "Bernoulli"):
        kw = {"rho": 1.5} if dname == "Tweedie" else {"return_params": True}
        cases.append(("DistributionLoss(%s)" % dname, dist_case(L_.DistributionLoss(dname, level=[80], **kw),
                                                                 (y > 1).float() if dname == "Bernoulli" else None)))
    cases.append(("DistributionLoss(ISQF)", dist_case(L_.DistributionLoss("ISQF", level=[80], num_pieces=3))))
    for cls in (L_.PMM, L_.GMM, L_.NBMM):
        cases.append((cls.__name__, dist_case(cls(n_components=2, level=[80], return_params=True))))
    return Workload("losses", cases=cases)


def build_scalers(torch, device):
    """TemporalNorm with the scalers (identity, standard, robust, minmax, minmax1, invariant) on device
    windows: transform and inverse_transform, with a mask of missing points; and the masked statistics."""
    _nf()
    from neuralforecast.common import _scalers as S

    g = torch.Generator().manual_seed(0)
    x = (torch.randn(8, L + H, 3, generator=g) * 5 + 10).to(device)
    mask = (torch.rand(8, L + H, 3, generator=g) > 0.1).float().to(device)
    cases = []
    for st in ("identity", "standard", "robust", "minmax", "minmax1", "invariant"):
        norm = S.TemporalNorm(scaler_type=st, dim=1, num_features=3).to(device)

        def run(norm=norm):
            z = norm.transform(x=x, mask=mask)
            return norm.inverse_transform(z)

        cases.append(("TemporalNorm(%s)" % st, run))
    cases.append(("masked_median", lambda: S.masked_median(x, mask, dim=1)))
    cases.append(("masked_mean", lambda: S.masked_mean(x, mask, dim=1)))
    return Workload("scalers", cases=cases)


def build_hint(torch, device):
    """HINT: a base model (NHITS with a Normal distribution) reconciled over a hierarchy (BottomUp, MinTraceOLS,
    MinTraceWLS) of two bottom series and their total."""
    _nf()
    import numpy as np
    import pandas as pd

    from neuralforecast import NeuralForecast
    from neuralforecast.losses.pytorch import GMM, DistributionLoss
    from neuralforecast.models import HINT, NHITS

    df, _s, _f = _frames()
    bottom = df[df.unique_id.isin(["s0", "s1"])][["unique_id", "ds", "y"]]
    total = bottom.groupby("ds", as_index=False)["y"].sum().assign(unique_id="total")
    hdf = pd.concat([total[["unique_id", "ds", "y"]], bottom], ignore_index=True)
    S = np.array([[1, 1], [1, 0], [0, 1]], dtype="float32")
    models = []
    for rec, loss in [("BottomUp", DistributionLoss("Normal", level=[80])), ("MinTraceOLS", GMM(n_components=2,
                                                                                                  level=[80])),
                      ("MinTraceWLS", DistributionLoss("StudentT", level=[80]))]:
        base = NHITS(**_kw(NHITS, device, exog=False, mlp_units=3 * [[16, 16]], loss=loss))
        models.append(HINT(h=H, S=S, model=base, reconciliation=rec, alias="HINT_" + rec))
    nf = NeuralForecast(models=models, freq="D")
    nf.fit(hdf, val_size=H)

    cases = [("HINT fit", lambda: nf.fit(hdf, val_size=H)), ("HINT predict", lambda: nf.predict())]
    return Workload("hint", cases=cases)


def build_prediction_intervals(torch, device):
    """Conformal prediction intervals: ``fit(prediction_intervals=PredictionIntervals(...))`` (cross-validated
    conformity scores) with the error and distribution methods, then ``predict(level=...)``."""
    _nf()
    from neuralforecast import NeuralForecast
    from neuralforecast.losses.pytorch import MAE, DistributionLoss
    from neuralforecast.models import MLP, NHITS
    from neuralforecast.utils import PredictionIntervals

    df, _s, _f = _frames()
    df = df[["unique_id", "ds", "y"]]
    out = []
    for method in ("conformal_error", "conformal_distribution"):
        models = [MLP(**_kw(MLP, device, exog=False, num_layers=2, hidden_size=16, loss=MAE())),
                  NHITS(**_kw(NHITS, device, exog=False, mlp_units=3 * [[16, 16]],
                              loss=DistributionLoss("Normal", level=[80])))]
        nf = NeuralForecast(models=models, freq="D")
        pi = PredictionIntervals(n_windows=2, method=method)
        out += [("fit(%s)" % method, lambda nf=nf, pi=pi: nf.fit(df, prediction_intervals=pi)),
                ("predict(%s)" % method, lambda nf=nf: nf.predict(level=[80, 90]))]
    return Workload("prediction_intervals", cases=out)


def build_auto_optuna(torch, device):
    """Auto models (hyper-parameter search) with the optuna backend: AutoNHITS, AutoMLP, AutoLSTM, AutoTSMixer
    with a config function of the trial, 2 samples each, then predict with the best model."""
    _nf()
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    from neuralforecast import NeuralForecast
    from neuralforecast.auto import AutoLSTM, AutoMLP, AutoNHITS, AutoTSMixer
    from neuralforecast.losses.pytorch import MAE

    df, _s, _f = _frames()
    df = df[["unique_id", "ds", "y"]]
    base = dict(max_steps=2, val_check_steps=1, batch_size=4, windows_batch_size=16, random_seed=1,
                **_trainer_kwargs(device))

    def cfg(extra):
        def config(trial):
            c = dict(base, input_size=trial.suggest_categorical("input_size", [L, 2 * L]),
                     learning_rate=trial.suggest_float("learning_rate", 1e-4, 1e-2, log=True))
            c.update({k: (v(trial) if callable(v) else v) for k, v in extra.items()})
            return c
        return config

    models = [AutoNHITS(h=H, loss=MAE(), config=cfg({"mlp_units": 3 * [[16, 16]]}), backend="optuna", num_samples=2),
              AutoMLP(h=H, config=cfg({"hidden_size": lambda tr: tr.suggest_categorical("hidden_size", [16, 32])}),
                      backend="optuna", num_samples=2),
              AutoLSTM(h=H, config=cfg({"encoder_hidden_size": 16, "decoder_hidden_size": 16}), backend="optuna",
                       num_samples=2),
              AutoTSMixer(h=H, n_series=N_SERIES, config=cfg({"n_block": 1, "ff_dim": 16, "batch_size": N_SERIES,
                                                         "n_series": N_SERIES}),
                          backend="optuna", num_samples=2)]
    nf = NeuralForecast(models=models, freq="D")
    return Workload("auto_optuna", cases=[("Auto fit", lambda: nf.fit(df, val_size=H)),
                                          ("Auto predict", lambda: nf.predict())])


def build_training_options(torch, device):
    """What the fit loop does with its options: early stopping on the validation loss, an explicit ``val_df``,
    an lr scheduler and AdamW, ``num_lr_decays``, step_size > 1, start padding, ``sample_weight`` and
    ``available_mask`` columns, categorical exogenous with embeddings, local scalers of the frame
    (``local_scaler_type``) and ``use_init_models``."""
    _nf()
    import numpy as np

    from neuralforecast import NeuralForecast
    from neuralforecast.losses.pytorch import MAE, MSE
    from neuralforecast.models import MLP, NHITS, TiDE

    df, static, futr = _frames()
    rng = np.random.default_rng(1)
    df = df.copy()
    df["sample_weight"] = rng.uniform(0.5, 1.5, len(df)).astype("float32")
    df["available_mask"] = (rng.random(len(df)) > 0.05).astype("float32")
    tdf = df[["unique_id", "ds", "y", "price", "promo", "traffic", "sample_weight", "available_mask"]]
    cutoff = tdf.groupby("unique_id").cumcount() >= T_LEN - 2 * H
    val_df = tdf[cutoff][["unique_id", "ds", "y", "price", "promo", "traffic"]]
    train_df = tdf[~cutoff]

    early = NHITS(**_kw(NHITS, device, max_steps=6, early_stop_patience_steps=1, mlp_units=3 * [[16, 16]],
                        optimizer=torch.optim.AdamW, optimizer_kwargs={"weight_decay": 1e-3},
                        lr_scheduler=torch.optim.lr_scheduler.OneCycleLR,
                        lr_scheduler_kwargs={"max_lr": 1e-2, "total_steps": 6}, alias="early"))
    decays = MLP(**_kw(MLP, device, max_steps=4, num_lr_decays=2, step_size=2, start_padding_enabled=True,
                       hidden_size=16, num_layers=2, loss=MSE(), valid_loss=MAE(), alias="decays"))
    nf1 = NeuralForecast(models=[early, decays], freq="D", local_scaler_type="standard")

    cat = dict(futr_exog_list=["price", "weekday"], cat_exog_list=["weekday"], categorical_cardinalities={"weekday": 7},
               hist_exog_list=None, stat_exog_list=None)
    tide = TiDE(**_kw(TiDE, device, hidden_size=16, decoder_output_dim=4, temporal_decoder_dim=8, **cat))
    mlp_cat = MLP(**_kw(MLP, device, hidden_size=16, num_layers=2, alias="mlp_cat", **cat))
    cdf = df[["unique_id", "ds", "y", "price", "weekday"]]
    cfutr = futr[["unique_id", "ds", "price", "weekday"]]
    nf2 = NeuralForecast(models=[tide, mlp_cat], freq="D")
    nf2.fit(cdf, val_size=H)
    return Workload("training_options", cases=[
        ("fit early stopping + val_df + weights", lambda: nf1.fit(train_df, static_df=static, val_df=val_df,
                                                                   use_init_models=True)),
        ("predict local scaler", lambda: nf1.predict(futr_df=futr[["unique_id", "ds", "price", "promo"]],
                                                     static_df=static)),
        ("fit categorical exog", lambda: nf2.fit(cdf, val_size=H)),
        ("predict categorical exog", lambda: nf2.predict(futr_df=cfutr)),
    ])


def build_save_load(torch, device):
    """``NeuralForecast.save`` and ``NeuralForecast.load`` (safetensors checkpoints) then predict with the loaded
    models, and a model's own ``save`` / ``load``."""
    _nf()
    from neuralforecast import NeuralForecast
    from neuralforecast.models import LSTM, NHITS

    df, _s, _f = _frames()
    df = df[["unique_id", "ds", "y"]]
    models = [NHITS(**_kw(NHITS, device, exog=False, mlp_units=3 * [[16, 16]])),
              LSTM(**_kw(LSTM, device, exog=False, encoder_hidden_size=16, decoder_hidden_size=16))]
    nf = NeuralForecast(models=models, freq="D", local_scaler_type="robust")
    nf.fit(df, val_size=H)
    folder = tempfile.mkdtemp(prefix="nf-")

    def save_load_predict():
        nf.save(path=folder, overwrite=True, save_dataset=True)
        loaded = NeuralForecast.load(path=folder)
        for m in loaded.models:  # trainer settings are not saved: set them again, as the docs say
            m.trainer_kwargs.update(_trainer_kwargs(device))
        return loaded.predict()

    def model_save_load():
        path = os.path.join(folder, "nhits.ckpt")
        nf.models[0].save(path)
        return type(nf.models[0]).load(path)

    return Workload("save_load", cases=[("save/load/predict", save_load_predict), ("model save/load", model_save_load)])


def build_utils(torch, device):
    """``level_to_quantiles`` / ``quantiles_to_level``, ``TimeSeriesDataset.from_df`` and the data module's
    batches moved to the device (the sample-path helpers run under ``NeuralForecast.simulate``)."""
    _nf()
    from neuralforecast import utils as U
    from neuralforecast.tsdataset import TimeSeriesDataModule, TimeSeriesDataset

    df, static, futr = _frames()
    cases = [
        ("level_to_quantiles", lambda: U.quantiles_to_level(U.level_to_quantiles([80, 90]))),
        ("TimeSeriesDataset.from_df", lambda: TimeSeriesDataset.from_df(df[["unique_id", "ds", "y", "price"]],
                                                                        static_df=static)),
    ]

    def loader():
        ds, *_rest = TimeSeriesDataset.from_df(df[["unique_id", "ds", "y"]])
        dm = TimeSeriesDataModule(ds, batch_size=3)
        return [_move(b, device) for b in dm.train_dataloader()]

    cases.append(("TimeSeriesDataModule batches", loader))
    return Workload("utils", cases=cases)


WORKLOADS = [build_mlp_nhits_nbeats, build_recurrent, build_transformers, build_multivariate, build_linear_conv_kan,
             build_distribution_losses, build_losses, build_scalers, build_hint, build_prediction_intervals,
             build_auto_optuna, build_training_options, build_save_load, build_utils]
