"""pytorch-forecasting 1.8.0 workloads: its models (TemporalFusionTransformer, N-BEATS, N-HiTS, DeepAR,
RecurrentNetwork, DecoderMLP, TiDE, NBeatsKAN, TimeXer, xLSTMTime) built ``from_dataset`` on a small
synthetic ``TimeSeriesDataSet`` (a pandas frame made here), trained with their losses (the forward + loss
of ``BaseModel.step``; the harness does backward and the optimizer step), an eval forward with
``to_prediction``/``to_quantiles``, its metrics and distribution losses on device tensors, and whole
``lightning.Trainer(max_steps=2)`` fits followed by ``model.predict`` as the tutorials run them.
Random init; batches come from the dataset's own dataloader and are moved to the device.
"""

from __future__ import annotations

from harness import Workload, figure_logger

N_SERIES, T_LEN = 8, 60
ENC, PRED = 24, 6
BS = 16


def _frame():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    t = np.tile(np.arange(T_LEN), N_SERIES)
    s = np.repeat(np.arange(N_SERIES), T_LEN)
    value = 5 + s * 0.5 + np.sin(t / 5.0 + s) * 2 + rng.normal(0, 0.3, len(t))
    df = pd.DataFrame({
        "series": s.astype(str), "time_idx": t, "value": value.astype("float32"),
        "count": rng.poisson(3 + s % 4, len(t)).astype("float32"),
        "frac": rng.uniform(0.05, 0.95, len(t)).astype("float32"),
        "price": rng.uniform(0.5, 1.5, len(t)).astype("float32"),
        "month": (t % 12).astype(str), "region": (s % 3).astype(str),
        "label": rng.choice(["lo", "mid", "hi"], len(t)),
    })
    df["month"] = df["month"].astype("category")
    df["region"] = df["region"].astype("category")
    return df


def _dataset(kind="covariates", target="value", relative_time_idx=True, **overrides):
    """A TimeSeriesDataSet as the tutorials build them; 'target_only' for N-BEATS-style models."""
    from pytorch_forecasting import GroupNormalizer, TimeSeriesDataSet

    df = _frame()
    cutoff = T_LEN - PRED
    if kind == "target_only":
        kw = dict(time_varying_unknown_reals=[target], target_normalizer=GroupNormalizer(groups=["series"]))
    else:
        kw = dict(static_categoricals=["series", "region"], time_varying_known_categoricals=["month"],
                  time_varying_known_reals=["time_idx", "price"], time_varying_unknown_reals=[target],
                  target_normalizer=GroupNormalizer(groups=["series"], transformation="softplus"),
                  add_relative_time_idx=relative_time_idx, add_target_scales=True, add_encoder_length=True)
    kw.update(overrides)
    train = TimeSeriesDataSet(df[df.time_idx < cutoff], time_idx="time_idx", target=target, group_ids=["series"],
                              max_encoder_length=ENC, max_prediction_length=PRED, **kw)
    val = TimeSeriesDataSet.from_dataset(train, df, predict=True, stop_randomization=True)
    return train, val


class _Batches:
    """Cycles the dataset's own dataloader (collate on the CPU) and moves each batch to the device."""

    def __init__(self, ds, device, train=True, batch_size=BS):
        self.dl = ds.to_dataloader(train=train, batch_size=batch_size, num_workers=0)
        self.device = device
        self.it = iter(self.dl)

    def __call__(self):
        try:
            batch = next(self.it)
        except StopIteration:
            self.it = iter(self.dl)
            batch = next(self.it)
        return _to_device(batch, self.device)


def _to_device(batch, device):
    """What Lightning's batch transfer does."""
    from lightning.fabric.utilities.apply_func import move_data_to_device

    return move_data_to_device(batch, device)


def _model_workload(torch, device, name, model, train_ds, val_ds, extra_cases=()):
    """BaseModel.step's forward + loss as the train step; eval: forward, to_prediction, to_quantiles."""
    from pytorch_forecasting.metrics import MASE, MultiLoss

    model = model.to(device)
    train_batches = _Batches(train_ds, device)
    val_batches = _Batches(val_ds, device, train=False)

    def train():
        x, y = train_batches()
        out = model(x)
        if isinstance(model.loss, (MASE, MultiLoss)):
            return model.loss(out["prediction"], y, encoder_target=x["encoder_target"],
                              encoder_lengths=x["encoder_lengths"])
        return model.loss(out["prediction"], y)

    def evaluate():
        x, _y = val_batches()
        out = model(x)
        pred = model.to_prediction(out)
        q = model.to_quantiles(out)
        return pred, q

    def interpret():
        model.eval()
        with torch.no_grad():
            x, _y = val_batches()
            out = model(x)
        return model.interpret_output(out) if hasattr(model, "interpret_output") else out

    cases = [("interpret_output", interpret)] if hasattr(model, "interpret_output") else []
    return Workload(name, train=train, modules=[model], eval=evaluate, cases=cases + list(extra_cases), lr=1e-3)


def build_tft_quantile(torch, device):
    from pytorch_forecasting import QuantileLoss, TemporalFusionTransformer

    train, val = _dataset()
    model = TemporalFusionTransformer.from_dataset(train, hidden_size=16, attention_head_size=2,
                                                   hidden_continuous_size=8, dropout=0.1, loss=QuantileLoss(),
                                                   learning_rate=0.03, log_interval=-1)
    return _model_workload(torch, device, "tft_quantile", model, train, val)


def build_tft_multitarget(torch, device):
    from pytorch_forecasting import MAE, SMAPE, MultiLoss, MultiNormalizer, TemporalFusionTransformer
    from pytorch_forecasting.data import EncoderNormalizer, TorchNormalizer

    train, val = _dataset(target=["value", "count"],
                          time_varying_unknown_reals=["value", "count"],
                          target_normalizer=MultiNormalizer([EncoderNormalizer(), TorchNormalizer()]))
    model = TemporalFusionTransformer.from_dataset(train, hidden_size=16, attention_head_size=1,
                                                   hidden_continuous_size=8, loss=MultiLoss([MAE(), SMAPE()]),
                                                   log_interval=-1)
    return _model_workload(torch, device, "tft_multitarget", model, train, val)


def build_nbeats(torch, device):
    from pytorch_forecasting import NBeats

    train, val = _dataset("target_only", add_relative_time_idx=False)
    model = NBeats.from_dataset(train, widths=[32, 128], backcast_loss_ratio=0.1, log_interval=-1)
    return _model_workload(torch, device, "nbeats", model, train, val)


def build_nbeats_generic_kan(torch, device):
    from pytorch_forecasting import NBeatsKAN

    train, val = _dataset("target_only")
    model = NBeatsKAN.from_dataset(train, stack_types=["generic"], num_blocks=[1], num_block_layers=[2],
                                   widths=[32], log_interval=-1)
    return _model_workload(torch, device, "nbeats_kan", model, train, val)


def build_nhits(torch, device):
    from pytorch_forecasting import NHiTS, QuantileLoss

    train, val = _dataset(relative_time_idx=False)
    model = NHiTS.from_dataset(train, hidden_size=32, loss=QuantileLoss(), log_interval=-1)
    return _model_workload(torch, device, "nhits", model, train, val)


def build_nhits_normal(torch, device):
    from pytorch_forecasting import NHiTS
    from pytorch_forecasting.metrics import NormalDistributionLoss

    train, val = _dataset("target_only")
    model = NHiTS.from_dataset(train, hidden_size=32, loss=NormalDistributionLoss(), log_interval=-1)
    return _model_workload(torch, device, "nhits_normal", model, train, val)


def build_deepar_normal(torch, device):
    from pytorch_forecasting import DeepAR, NormalDistributionLoss

    train, val = _dataset()
    model = DeepAR.from_dataset(train, hidden_size=16, rnn_layers=2, loss=NormalDistributionLoss(), log_interval=-1)
    wl = _model_workload(torch, device, "deepar_normal", model, train, val)
    batches = _Batches(val, device, train=False)

    def sample_paths():  # DeepAR.forward with n_samples: autoregressive sampling of trajectories
        model.eval()
        with torch.no_grad():
            x, _ = batches()
            return model(x, n_samples=20)

    wl.cases = list(wl.cases) + [("forward-n_samples", sample_paths)]
    return wl


def build_deepar_negbin(torch, device):
    from pytorch_forecasting import DeepAR, GroupNormalizer, NegativeBinomialDistributionLoss

    train, val = _dataset(target="count", time_varying_unknown_reals=["count"],
                          target_normalizer=GroupNormalizer(groups=["series"], center=False))
    model = DeepAR.from_dataset(train, hidden_size=16, cell_type="GRU", loss=NegativeBinomialDistributionLoss(),
                                log_interval=-1)
    return _model_workload(torch, device, "deepar_negbin", model, train, val)


def build_deepar_multivariate(torch, device):
    from pytorch_forecasting import DeepAR, MultivariateNormalDistributionLoss
    from pytorch_forecasting.data import NaNLabelEncoder

    train, val = _dataset(categorical_encoders={"series": NaNLabelEncoder().fit(_frame().series)})
    model = DeepAR.from_dataset(train, hidden_size=16, loss=MultivariateNormalDistributionLoss(rank=4),
                                log_interval=-1)
    wl = _model_workload(torch, device, "deepar_multivariate", model, train, val)
    return wl


def build_rnn_lstm_mase(torch, device):
    from pytorch_forecasting import MASE, RecurrentNetwork

    train, val = _dataset()
    model = RecurrentNetwork.from_dataset(train, cell_type="LSTM", hidden_size=16, rnn_layers=2, loss=MASE(),
                                          log_interval=-1)
    return _model_workload(torch, device, "rnn_lstm_mase", model, train, val)


def build_decoder_mlp_crossentropy(torch, device):
    from pytorch_forecasting import CrossEntropy, DecoderMLP
    from pytorch_forecasting.data import NaNLabelEncoder

    train, val = _dataset(target="label", time_varying_unknown_reals=["value"], target_normalizer=NaNLabelEncoder(),
                          add_target_scales=False)
    model = DecoderMLP.from_dataset(train, hidden_size=32, loss=CrossEntropy(), log_interval=-1)
    return _model_workload(torch, device, "decoder_mlp_crossentropy", model, train, val)


def build_tide(torch, device):
    from pytorch_forecasting import TiDEModel

    train, val = _dataset(relative_time_idx=False)
    model = TiDEModel.from_dataset(train, hidden_size=32, temporal_width_future=4, temporal_hidden_size_future=16,
                                   log_interval=-1)
    return _model_workload(torch, device, "tide", model, train, val)


def build_timexer(torch, device):
    from pytorch_forecasting.models import TimeXer

    train, val = _dataset()
    model = TimeXer.from_dataset(train, hidden_size=32, n_heads=2, e_layers=1, d_ff=32, patch_length=4,
                                 log_interval=-1)
    return _model_workload(torch, device, "timexer", model, train, val)


def build_xlstm(torch, device):
    from pytorch_forecasting.models import xLSTMTime

    train, val = _dataset("target_only")
    model = xLSTMTime.from_dataset(train, input_size=1, output_size=PRED, hidden_size=16, xlstm_type="slstm",
                                   num_layers=1, log_interval=-1)
    return _model_workload(torch, device, "xlstm", model, train, val)


def build_baseline(torch, device):
    """Baseline as the tutorials use it: predict on the validation loader, then MAE against y."""
    from pytorch_forecasting import MAE, Baseline

    _train, val = _dataset()
    # an explicit loss: Baseline's default SMAPE() is one shared default instance, which other models'
    # training steps have already updated (its deepcopy in save_hyperparameters then fails)
    model = Baseline(loss=MAE()).to(device)
    batches = _Batches(val, device, train=False)
    vdl = val.to_dataloader(train=False, batch_size=BS, num_workers=0)
    accel = "gpu" if device.type == "cuda" else "cpu"

    def forward():
        x, _y = batches()
        return model.to_prediction(model(x))

    def predict_mae():
        kw = dict(accelerator=accel, devices=1, logger=False, enable_progress_bar=False)
        pred = Baseline(loss=MAE()).predict(vdl, return_y=True, trainer_kwargs=kw)
        out = pred.output  # predict's output stays on the device; y is collected on the CPU
        return MAE().to(out.device)(out, _to_device(pred.y, out.device))

    return Workload("baseline", modules=[model], eval=forward, cases=[("predict+MAE", predict_mae)])


# ---- metrics and distribution losses -----------------------------------------------------------
def build_metrics(torch, device):
    """Point, quantile and distribution losses as training losses (forward + backward) and as torchmetrics
    (update / compute / reset), with to_prediction / to_quantiles, on (target, weight) and packed targets."""
    import pytorch_forecasting.metrics as M
    from torch.nn.utils import rnn

    gen = torch.Generator(device=device).manual_seed(0)
    head = torch.nn.Linear(8, 8).to(device)

    def feats(n):
        return head(torch.randn(BS, PRED, 8, device=device, generator=gen))[..., :n]

    def target(kind="real"):
        if kind == "count":
            return torch.randint(0, 10, (BS, PRED), device=device, generator=gen).float()
        if kind == "class":
            return torch.randint(0, 3, (BS, PRED), device=device, generator=gen)
        if kind == "unit":
            return torch.rand(BS, PRED, device=device, generator=gen) * 0.9 + 0.05
        return torch.rand(BS, PRED, device=device, generator=gen) * 5 + 0.5

    def weighted(y):
        return (y, torch.rand(BS, device=device, generator=gen))

    def packed(y):
        lengths = torch.tensor([PRED] * (BS // 2) + [PRED - 2] * (BS - BS // 2))
        return (rnn.pack_padded_sequence(y, lengths, batch_first=True, enforce_sorted=False), None)

    scale = torch.stack([torch.zeros(BS, device=device), torch.ones(BS, device=device)], dim=1)

    def dist_params(metric, n, encoder):
        raw = feats(n)
        # the models' transform_output: rescale the raw network output with the target scale
        return metric.rescale_parameters(raw, target_scale=scale, encoder=encoder)

    def case(metric, n, kind="real", wrap=None, dist=False, **enc):
        encoder = _encoder(**enc) if dist else None

        def run():
            pred = dist_params(metric, n, encoder) if dist else feats(n)
            y = target(kind)
            yy = wrap(y) if wrap else y
            value = metric(pred, yy)  # the training loss
            value.backward()
            metric.update(pred.detach(), yy)
            out = metric.compute()
            metric.reset()
            with torch.no_grad():
                p = metric.to_prediction(pred.detach())
                q = metric.to_quantiles(pred.detach())
            return value, out, p, q
        return run

    cases = [
        ("QuantileLoss", case(M.QuantileLoss(), 7)),
        ("QuantileLoss-weighted", case(M.QuantileLoss([0.1, 0.5, 0.9]), 3, wrap=weighted)),
        ("MAE", case(M.MAE(), 1)), ("MAE-packed", case(M.MAE(), 1, wrap=packed)),
        ("RMSE", case(M.RMSE(), 1)), ("SMAPE", case(M.SMAPE(), 1)), ("MAPE", case(M.MAPE(), 1)),
        ("PoissonLoss", case(M.PoissonLoss(), 1, kind="count")),
        ("TweedieLoss", case(M.TweedieLoss(), 1, kind="count")),
        ("CrossEntropy", case(M.CrossEntropy(), 3, kind="class")),
        ("NormalDistributionLoss", case(M.NormalDistributionLoss(), 2, dist=True)),
        ("NormalDistributionLoss-packed", case(M.NormalDistributionLoss(), 2, wrap=packed, dist=True)),
        ("NegativeBinomialDistributionLoss",
         case(M.NegativeBinomialDistributionLoss(), 2, kind="count", dist=True, center=False)),
        ("LogNormalDistributionLoss", case(M.LogNormalDistributionLoss(), 2, dist=True, transformation="log")),
        ("BetaDistributionLoss", case(M.BetaDistributionLoss(), 2, kind="unit", dist=True, transformation="logit")),
        ("ImplicitQuantileNetworkDistributionLoss",
         case(M.ImplicitQuantileNetworkDistributionLoss(input_size=4, hidden_size=8).to(device), 4, dist=True)),
    ]

    def mase():
        metric = M.MASE()
        pred = feats(1)
        enc = torch.rand(BS, ENC, device=device, generator=gen)
        lengths = torch.randint(ENC // 2, ENC + 1, (BS,), device=device, generator=gen)
        value = metric(pred, target(), encoder_target=enc, encoder_lengths=lengths)
        value.backward()
        return value

    def multiloss():
        metric = M.MultiLoss([M.MAE(), M.QuantileLoss([0.1, 0.5, 0.9])], weights=[1.0, 0.5])
        pred = [feats(1), feats(3)]
        y = ([target(), target()], torch.ones(BS, device=device))
        value = metric(pred, y)
        value.backward()
        metric.update(pred, y)
        return value, metric.compute(), metric.to_prediction(pred), metric.to_quantiles(pred)

    def composite():
        metric = M.MAE() + 0.5 * M.SMAPE()
        pred, y = feats(1), target()
        value = metric(pred, y)
        value.backward()
        return value

    def aggregation():
        from pytorch_forecasting.metrics.base_metrics import AggregationMetric

        metric = AggregationMetric(M.MAE())
        pred, y = feats(1), target()
        value = metric(pred, y)
        value.backward()
        return value

    def multivariate():
        metric = M.MultivariateNormalDistributionLoss(rank=2)
        raw = head(torch.randn(BS, PRED, 8, device=device, generator=gen))[..., : 2 + 2]
        params = metric.rescale_parameters(raw, target_scale=scale, encoder=_encoder())
        y = target()
        value = metric(params, y)
        value.backward()
        with torch.no_grad():
            p = params.detach()
            return value, metric.to_prediction(p, n_samples=10), metric.to_quantiles(p, n_samples=10)

    cases += [("MASE", mase), ("MultiLoss", multiloss), ("CompositeMetric", composite),
              ("AggregationMetric", aggregation), ("MultivariateNormalDistributionLoss", multivariate)]
    return Workload("metrics", cases=cases)


def _encoder(**kwargs):
    import torch
    from pytorch_forecasting.data import TorchNormalizer

    return TorchNormalizer(method="identity", **kwargs).fit(torch.rand(16) * 0.8 + 0.1)


# ---- data: normalizers and the dataset's own batching ------------------------------------------
def build_normalizers(torch, device):
    """Target normalizers as the dataset and the models use them: fitted on the CPU data (the dataset's
    preprocessing), then the models' output transform (``normalizer(dict(prediction, target_scale))``)
    on device tensors, with target scales as the batches carry them."""
    import numpy as np
    from pytorch_forecasting.data import EncoderNormalizer, GroupNormalizer, TorchNormalizer
    from pytorch_forecasting.data.encoders import MultiNormalizer, NaNLabelEncoder

    gen = torch.Generator(device=device).manual_seed(0)
    df = _frame()
    y_cpu = torch.as_tensor(df["value"].to_numpy())

    def pred(*shape):
        return torch.rand(*shape, device=device, generator=gen) * 2 - 0.5

    cases = []
    for name, norm in [("TorchNormalizer-standard", TorchNormalizer()),
                       ("TorchNormalizer-robust", TorchNormalizer(method="robust")),
                       ("EncoderNormalizer-softplus", EncoderNormalizer(transformation="softplus")),
                       ("EncoderNormalizer-log1p", EncoderNormalizer(transformation="log1p")),
                       ("TorchNormalizer-relu", TorchNormalizer(transformation="relu")),
                       ("TorchNormalizer-logit", TorchNormalizer(transformation="logit"))]:
        src = y_cpu / (y_cpu.max() + 1) if "logit" in name else y_cpu

        def run(norm=norm, src=src):
            norm.fit(src)
            z, scale = norm.transform(src, return_norm=True)  # the dataset's preprocessing (CPU)
            target_scale = torch.as_tensor(np.asarray(norm.get_parameters()), dtype=torch.float32,
                                           device=device).expand(BS, -1)
            return z, norm(dict(prediction=pred(BS, PRED), target_scale=target_scale))
        cases.append((name, run))

    group = GroupNormalizer(groups=["series"], transformation="softplus").fit(df["value"], df)
    multi = MultiNormalizer([TorchNormalizer(), EncoderNormalizer()])
    multi.fit(np.stack([df["value"].to_numpy(), df["count"].to_numpy()], axis=1))

    def group_inverse():
        params = torch.as_tensor(group.get_parameters(df["series"].iloc[:BS].to_numpy()), device=device,
                                 dtype=torch.float32)
        return group(dict(prediction=pred(BS, PRED), target_scale=params))

    def multi_norm():
        scales = [torch.rand(BS, 2, device=device, generator=gen) + 0.5 for _ in range(2)]
        return multi(dict(prediction=[pred(BS, PRED), pred(BS, PRED)], target_scale=scales))

    lab = NaNLabelEncoder(add_nan=True).fit(df["label"])

    def labels():
        return lab(dict(prediction=pred(BS, PRED, 4)))

    cases += [("GroupNormalizer-inverse", group_inverse), ("MultiNormalizer", multi_norm), ("NaNLabelEncoder", labels)]
    return Workload("normalizers", cases=cases)


def build_dataset_batches(torch, device):
    """TimeSeriesDataSet.__getitem__ and its collate (CPU), then the batch moved to the device, as
    Lightning's transfer does; also x_to_index and the dataset's own helpers."""
    train, val = _dataset()
    dl = train.to_dataloader(train=True, batch_size=BS, num_workers=0)
    vdl = val.to_dataloader(train=False, batch_size=BS, num_workers=0)

    def one_batch():
        x, y = _to_device(next(iter(dl)), device)
        return x["encoder_cont"].sum(), y[0].sum()

    def val_batch():
        x, y = next(iter(vdl))
        return val.x_to_index(x), _to_device((x, y), device)

    return Workload("dataset_batches", cases=[("train_batch", one_batch), ("predict_batch", val_batch)])


# ---- whole Lightning fits and predict ---------------------------------------------------------
def build_trainer_fit(torch, device):
    """lightning.Trainer(max_steps=2).fit with validation, then model.predict (raw, quantiles, with x) as the
    tutorials run them: TFT (with a figure logger and log_interval=1), DeepAR, N-BEATS, N-HiTS."""
    import lightning
    import matplotlib

    matplotlib.use("Agg")
    from pytorch_forecasting import (DeepAR, NBeats, NHiTS, NormalDistributionLoss, QuantileLoss,
                                     TemporalFusionTransformer)

    accel = "gpu" if device.type == "cuda" else "cpu"

    def fit(make, kind="covariates", figures=False, relative=True):
        def run():
            train, val = _dataset(kind, relative_time_idx=relative)
            model = make(train)
            trainer = lightning.Trainer(max_steps=2, accelerator=accel, devices=1,
                                        logger=figure_logger() if figures else False,
                                        enable_checkpointing=False, enable_progress_bar=False,
                                        enable_model_summary=False, limit_val_batches=1, num_sanity_val_steps=0,
                                        gradient_clip_val=0.1, log_every_n_steps=1)
            tdl = train.to_dataloader(train=True, batch_size=BS, num_workers=0)
            vdl = val.to_dataloader(train=False, batch_size=BS, num_workers=0)
            trainer.fit(model, train_dataloaders=tdl, val_dataloaders=vdl)
            trainer.validate(model, dataloaders=vdl, verbose=False)  # max_steps ends fit before its epoch's validation
            kw = dict(trainer_kwargs=dict(accelerator=accel, devices=1, logger=False, enable_progress_bar=False))
            raw = model.predict(vdl, mode="raw", return_x=True, **kw)
            q = model.predict(vdl, mode="quantiles", **kw)
            p = model.predict(vdl, return_index=True, return_decoder_lengths=True, **kw)
            if hasattr(model, "interpret_output"):
                model.interpret_output(raw.output, reduction="sum")
            fitted[0] = (model, raw)
            return trainer.callback_metrics, q, p
        return run

    fitted = [None]

    def actual_by_variable():
        """After the fits (the last one's model and raw prediction). Its groupby_apply passes a tuple of
        CUDA scalars to torch.split_with_sizes; under the recorder's CUDA trace hook that call can fail
        with SystemError, so it is a case of its own."""
        model, raw = fitted[0]
        return model.calculate_prediction_actual_by_variable(raw.x, raw.output.prediction)

    return Workload("trainer_fit", cases=[
        ("fit_tft", fit(lambda ds: TemporalFusionTransformer.from_dataset(
            ds, hidden_size=16, attention_head_size=2, hidden_continuous_size=8, loss=QuantileLoss(),
            log_interval=1, learning_rate=0.03), figures=True)),
        ("fit_deepar", fit(lambda ds: DeepAR.from_dataset(ds, hidden_size=16, loss=NormalDistributionLoss(),
                                                          log_interval=-1))),
        ("fit_nbeats", fit(lambda ds: NBeats.from_dataset(ds, widths=[32, 128], log_interval=1), "target_only",
                           figures=True)),
        ("fit_nhits", fit(lambda ds: NHiTS.from_dataset(ds, hidden_size=32, log_interval=-1), relative=False)),
        ("calculate_prediction_actual_by_variable", actual_by_variable),
    ])


WORKLOADS = [build_baseline, build_tft_quantile, build_tft_multitarget, build_nbeats, build_nbeats_generic_kan,
             build_nhits, build_nhits_normal, build_deepar_normal, build_deepar_negbin, build_deepar_multivariate,
             build_rnn_lstm_mase, build_decoder_mlp_crossentropy, build_tide, build_timexer, build_xlstm,
             build_metrics, build_normalizers, build_dataset_batches, build_trainer_fit]
