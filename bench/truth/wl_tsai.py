"""tsai 1.0.1 workloads, as its tutorials (nbs/tutorial_nbs) run it: synthetic time-series classification,
regression and forecasting data made here (NumPy arrays: a few channels of sines with class-dependent
frequency, trend and noise), tsai's datasets and data loaders (``get_ts_dls`` / ``TSDataLoaders`` with
``device=cuda``: fastai moves each batch to the device and runs the batch transforms there), ``ts_learner`` /
``TSClassifier`` / ``TSRegressor`` / ``TSForecaster`` and fastai's training loop.

- the training step is the library's: a batch from its train loader (item and batch transforms), the model's
  forward and the learner's loss; the harness does backward and the optimizer step; the eval forward is a
  validation batch; cases: ``fit_one_cycle`` (metrics, callbacks), ``get_X_preds``, ``feature_importance``,
  ``step_importance``, ``calibrate_model``, ``top_losses`` / confusion matrix, ``export`` + ``load_learner``;
- model families: InceptionTimePlus, ResNetPlus, XceptionTimePlus, FCNPlus, ResCNN, XCMPlus, OmniScaleCNN, TCN,
  mWDN, xresnet1d, MLP, gMLP; TSTPlus, TST, PatchTST, TSiTPlus, TSPerceiver, TransformerModel, ConvTranPlus,
  TSSequencerPlus, TransformerRNNPlus; RNNPlus / LSTMPlus / GRUPlus, LSTM_FCNPlus, MLSTM_FCNPlus, RNNAttention;
  MiniRocket (features on the device + head), MiniRocketPlus, MultiRocketPlus, HydraPlus, HydraMultiRocketPlus,
  ROCKET; MultiInputNet / TSTabFusionTransformer on mixed time-series + tabular loaders;
- the batch transforms (augmentations, ``data/transforms.py``) and preprocessors (``data/preprocessing.py``) on a
  device batch, as the loader applies them; RandAugment; the mixed augmentations (MixUp1d, CutMix1d,
  IntraClassCutMix1d) and the callbacks (MVP self-supervised pre-training, NoisyStudent, PredictionDynamics,
  WeightedPerSampleLoss, BatchSubsampler, TransformScheduler, GamblersCallback, UBDAug, BatchLossFilter,
  RandomWeightLossWrapper, BatchMasker, SamplerWithReplacement) in fits; the losses and metrics on device tensors.

``tsai.all`` imports ``tsai.export`` (notebook export: jupyter_core and traitlets, not on the GPU machine), so
the workload imports ``tsai.basics`` and the model / data / callback modules as the docs' lighter import does.
Data loaders run in the process (``num_workers=0``). No downloads.
"""

from __future__ import annotations

import os
import tempfile
import warnings

from harness import Workload

N, C, L = 96, 3, 64
BS = 16
_CACHE: dict = {}


def _ts():
    warnings.filterwarnings("ignore")
    os.environ.setdefault("MPLBACKEND", "Agg")
    import tsai.basics  # noqa: F401
    import tsai.calibration  # noqa: F401
    import tsai.callback.all  # noqa: F401
    import tsai.data.all  # noqa: F401
    import tsai.models.all  # noqa: F401

    return tsai


def _data(kind="cls", n=N, c=C, seq_len=L, seed=0):
    import numpy as np

    key = (kind, n, c, seq_len, seed)
    if key in _CACHE:
        return _CACHE[key]
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, seq_len, dtype=np.float32)
    y_cls = rng.integers(0, 3, n)
    freq = (2 + 2 * y_cls)[:, None, None] + rng.normal(0, 0.2, (n, c, 1))
    X = np.sin(2 * np.pi * freq * t[None, None]) + 0.3 * rng.normal(size=(n, c, seq_len))
    X = (X + np.arange(c)[None, :, None] * 0.5 + rng.normal(0, 0.5, (n, 1, 1)) * t).astype(np.float32)
    if kind == "cls":
        y = np.array(["a", "b", "c"])[y_cls]
    elif kind == "reg":
        y = (X[:, 0, -8:].mean(1) + 0.1 * y_cls).astype(np.float32)
    elif kind == "multilabel":
        y = np.empty(n, dtype=object)
        for i, k in enumerate(y_cls):
            y[i] = ["a", "b"] if k == 0 else ["b"] if k == 1 else ["a", "c"]
    else:
        raise ValueError(kind)
    _CACHE[key] = (X, y)
    return X, y


def _splits(n=N, valid=0.25):
    from tsai.data.validation import get_splits

    return get_splits(list(range(n)), valid_size=valid, stratify=False, random_state=0, shuffle=True,
                      show_plot=False)


def _dls(torch, device, kind="cls", batch_tfms=None, **kw):
    from tsai.basics import TSClassification, TSRegression, get_ts_dls
    from tsai.data.core import TSMultiLabelClassification

    X, y = _data(kind)
    tfm = {"cls": TSClassification(), "reg": TSRegression(), "multilabel": TSMultiLabelClassification()}[kind]
    from tsai.data.preprocessing import TSStandardize

    bt = [TSStandardize()] if batch_tfms is None else batch_tfms
    return get_ts_dls(X, y, splits=_splits(), tfms=[None, tfm], batch_tfms=bt, bs=BS, device=device,
                      num_workers=0, **kw)


def _fit(learn, epochs=1, lr=1e-3, one_cycle=True):
    with learn.no_bar(), learn.no_logging():
        if one_cycle:
            learn.fit_one_cycle(epochs, lr)
        else:
            learn.fit(epochs, lr)
    return learn.recorder.values[-1] if learn.recorder.values else None


def _learner_workload(torch, device, name, learn, extra_cases=(), fit=True, preds=True, lr=1e-3):
    """The library's step: its loader's batch, the model's forward and the learner's loss; eval on a valid batch."""
    dls = learn.dls
    model = learn.model.to(device)
    state = {"it": None}

    def batch(dl):
        try:
            if state["it"] is None:
                raise StopIteration
            return next(state["it"])
        except StopIteration:
            state["it"] = iter(dl)
            return next(state["it"])

    def train():
        xb, yb = batch(dls.train)
        pred = model(xb)
        return learn.loss_func(pred, yb)

    def evaluate():
        xb, yb = dls.valid.one_batch()
        return model(xb)

    cases = []
    if fit:
        cases.append(("fit_one_cycle", lambda: _fit(learn)))
    if preds:
        X, _ = _data("cls")

        def get_preds():
            with learn.no_bar():
                return learn.get_X_preds(X[:24], with_decoded=True)

        def valid_preds():
            with learn.no_bar():
                return learn.get_preds(dl=dls.valid, with_decoded=True)

        cases += [("get_X_preds", get_preds), ("get_preds valid", valid_preds)]
    cases += list(extra_cases)
    return Workload(name, train=train, eval=evaluate, modules=[model], cases=cases, lr=lr)


def _arch_cases(torch, device, archs, kind="cls", **learner_kw):
    """One ts_learner per architecture: a fit and predictions on the device loaders."""
    from tsai.basics import ts_learner

    def make(arch, kw):
        def run():
            dls = _dls(torch, device, kind)
            if "build" in kw:  # an instantiated model, as users pass one where build_ts_model has no branch for it
                learn = ts_learner(dls, kw["build"](), seed=0, **learner_kw)
            else:
                learn = ts_learner(dls, arch, seed=0, **kw, **learner_kw)
            out = _fit(learn, one_cycle=False)
            with learn.no_bar():
                learn.get_preds(dl=dls.valid)
            return out

        return run

    return [("fit %s" % (n if isinstance(n, str) else n.__name__), make(a, kw)) for n, a, kw in archs]


def build_inceptiontime_classification(torch, device):
    """The tutorial's classifier: InceptionTimePlus under ts_learner, accuracy; analysis and calibration."""
    _ts()
    from tsai.basics import accuracy, ts_learner
    from tsai.models.InceptionTimePlus import InceptionTimePlus

    dls = _dls(torch, device)
    learn = ts_learner(dls, InceptionTimePlus, metrics=accuracy, seed=0)
    X, y = _data("cls")
    d = tempfile.mkdtemp(prefix="tsai-")

    def fi():
        with learn.no_bar():
            return learn.feature_importance(show_chart=False, save_df_path=None, key_metric_idx=0)

    def si():
        with learn.no_bar():
            return learn.step_importance(n_steps=8, show_chart=False)

    def interp():
        from fastai.interpret import ClassificationInterpretation

        with learn.no_bar():
            ci = ClassificationInterpretation.from_learner(learn)
            return ci.confusion_matrix(), learn.top_losses(X[:24], y[:24], k=5) if hasattr(learn, "top_losses") \
                else None

    def export_load():
        from fastai.learner import load_learner

        learn.export(os.path.join(d, "learn.pkl"))
        l2 = load_learner(os.path.join(d, "learn.pkl"), cpu=False)
        with l2.no_bar():
            return l2.get_X_preds(X[:16])

    def save_load_all():
        learn.save_all(path=d, dls_fname="dls", model_fname="model", learner_fname="learner", verbose=False)
        from tsai.learner import load_all

        l2 = load_all(path=d, dls_fname="dls", model_fname="model", learner_fname="learner", device=device,
                      verbose=False)
        return l2.dls.one_batch()[0].shape

    return _learner_workload(torch, device, "inceptiontime_classification", learn, extra_cases=[
        ("feature_importance", fi), ("step_importance", si),
        ("interpretation", interp), ("export + load_learner", export_load), ("save_all + load_all", save_load_all)])


def build_cnn_models(torch, device):
    """The convolutional architectures, each under ts_learner on device loaders."""
    _ts()
    import tsai.models.all as M
    from tsai.basics import ts_learner

    dls = _dls(torch, device)
    learn = ts_learner(dls, M.ResNetPlus, seed=0)
    archs = [(a, getattr(M, a), {}) for a in ("XceptionTimePlus", "FCNPlus", "ResCNN", "XCMPlus", "OmniScaleCNN",
                                                 "TCN", "mWDN", "MLP", "gMLP", "InceptionTime", "ResNet", "XCM",
                                                 "XceptionTime", "FCN")]
    archs.append(("xresnet1d18plus", M.xresnet1d18plus, {}))
    archs.append(("InceptionTimePlus (coord, sa, se)", M.InceptionTimePlus, dict(coord=True, sa=True, se=True)))
    return _learner_workload(torch, device, "cnn_models", learn, extra_cases=_arch_cases(torch, device, archs),
                             preds=False)


def build_transformer_models(torch, device):
    """Transformer architectures (TSTPlus as the step, the others as fits)."""
    _ts()
    import tsai.models.all as M
    from tsai.basics import ts_learner

    dls = _dls(torch, device)
    learn = ts_learner(dls, M.TSTPlus, seed=0, d_model=32, n_heads=4, n_layers=2, d_ff=64)
    archs = [("TST", M.TST, dict(d_model=32, n_heads=4, n_layers=2, d_ff=64)),
             ("TSiTPlus", M.TSiTPlus, dict(d_model=32, depth=2, n_heads=4)),
             ("TSPerceiver", M.TSPerceiver, dict(build=lambda: M.TSPerceiver(C, 3, L, n_latents=16, d_latent=32,
                                                                             n_layers=2))),
             ("TransformerModel", M.TransformerModel, dict(d_model=32, n_head=4, n_layers=2, d_ffn=64)),
             ("ConvTranPlus", M.ConvTranPlus, dict(d_model=16, n_heads=8, dim_ff=32)),
             ("TSSequencerPlus", M.TSSequencerPlus, dict(d_model=32, depth=2)),
             ("TransformerRNNPlus", M.TransformerRNNPlus, dict(d_model=32, nhead=4, num_encoder_layers=1)),
             ("TSTPlus key padding mask", M.TSTPlus, dict(d_model=32, n_heads=4, n_layers=1, key_padding_mask=True))]
    return _learner_workload(torch, device, "transformer_models", learn,
                             extra_cases=_arch_cases(torch, device, archs), preds=True)


def build_rnn_models(torch, device):
    """Recurrent architectures (LSTMPlus as the step)."""
    _ts()
    import tsai.models.all as M
    from tsai.basics import ts_learner

    dls = _dls(torch, device)
    learn = ts_learner(dls, M.LSTMPlus, seed=0, n_layers=2, bidirectional=True)
    archs = [(a, getattr(M, a), {}) for a in ("RNNPlus", "GRUPlus", "LSTM_FCNPlus", "MLSTM_FCNPlus", "GRU_FCNPlus",
                                                 "RNNAttention", "LSTMAttention", "RNN", "LSTM_FCN")]
    archs += [(a, getattr(__import__("tsai.models.RNNAttentionPlus", fromlist=[a]), a), {})
              for a in ("RNNAttentionPlus", "LSTMAttentionPlus", "GRUAttentionPlus")]
    return _learner_workload(torch, device, "rnn_models", learn, extra_cases=_arch_cases(torch, device, archs),
                             preds=False)


def build_rocket_models(torch, device):
    """ROCKET family: MiniRocket features computed on the device + a linear head (the tutorial's way), and the
    end-to-end MiniRocketPlus / MultiRocketPlus / HydraPlus / HydraMultiRocketPlus / ROCKET models."""
    _ts()
    import tsai.models.all as M
    from tsai.basics import ts_learner
    from tsai.models.MINIROCKET_Pytorch import MiniRocketFeatures, MiniRocketHead, get_minirocket_features

    X, y = _data("cls")
    mrf = MiniRocketFeatures(C, L, num_features=1000).to(device)
    mrf.fit(X[_splits()[0]])

    def features():
        return get_minirocket_features(X, mrf, chunksize=32, to_np=True)

    dls = _dls(torch, device)
    learn = ts_learner(dls, M.MiniRocketPlus, seed=0, num_features=1000)
    archs = [("MultiRocketPlus", M.MultiRocketPlus, dict(num_features=1000)),
             ("HydraPlus", M.HydraPlus, dict(k=4, g=8)),
             ("HydraMultiRocketPlus", M.HydraMultiRocketPlus, dict(k=4, g=8, num_features=1000)),
             ("MiniRocket", M.MiniRocket, dict(num_features=1000))]

    def rocket_features():
        from tsai.models.ROCKET_Pytorch import ROCKET, create_rocket_features

        rk = ROCKET(C, L, n_kernels=200).to(device)
        return create_rocket_features(dls.train, rk)

    def head_fit():
        from tsai.basics import TSClassification, accuracy, get_ts_dls
        from tsai.data.preprocessing import TSStandardize

        feats = get_minirocket_features(X, mrf, chunksize=32, to_np=True)
        fdls = get_ts_dls(feats, y, splits=_splits(), tfms=[None, TSClassification()],
                          batch_tfms=[TSStandardize(by_sample=True)], bs=BS, device=device)
        model = MiniRocketHead(fdls.vars, fdls.c, fdls.len)
        hl = ts_learner(fdls, model, metrics=accuracy)
        return _fit(hl, one_cycle=True)

    return _learner_workload(torch, device, "rocket_models", learn, preds=False, extra_cases=[
        ("get_minirocket_features", features), ("MiniRocketHead fit", head_fit),
        ("create_rocket_features", rocket_features)] + _arch_cases(torch, device, archs))


def build_tslearner_api(torch, device):
    """The high-level TSClassifier / TSRegressor / TSForecaster (SlidingWindow, forecasting splits), multi-label
    classification; fits, get_X_preds, and the learner's own loss step."""
    _ts()
    from tsai.basics import (SlidingWindow, TSClassifier, TSForecaster, TSRegressor, accuracy_multi, mae, rmse)
    from tsai.data.preprocessing import TSStandardize
    from tsai.data.validation import get_forecasting_splits
    import numpy as np
    import pandas as pd

    X, y = _data("cls")
    from tsai.basics import TSClassification, TSRegression

    clf = TSClassifier(X, y, splits=_splits(), arch="InceptionTimePlus", tfms=[None, TSClassification()],
                       batch_tfms=[TSStandardize()],
                       metrics=[__import__("fastai.metrics", fromlist=["accuracy"]).accuracy], bs=BS, device=device,
                       seed=0)
    Xr, yr = _data("reg")
    reg = TSRegressor(Xr, yr, splits=_splits(), arch="TSTPlus", tfms=[None, TSRegression()],
                      batch_tfms=[TSStandardize(by_var=True)],
                      metrics=[mae, rmse], bs=BS, device=device, arch_config=dict(d_model=32, n_layers=1), seed=0)
    ts = np.sin(np.linspace(0, 40, 400)).astype(np.float32) + np.random.default_rng(0).normal(0, .1, 400).astype(
        np.float32)
    df = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=400, freq="D"), "value": ts})
    Xf, yf = SlidingWindow(48, horizon=8, stride=2)(ts)
    fsplits = get_forecasting_splits(df, fcst_history=48, fcst_horizon=8, datetime_col="date", valid_size=0.2,
                                     test_size=0.0, show_plot=False)
    n = len(Xf)
    fsplits = ([i for i in range(int(n * 0.8))], [i for i in range(int(n * 0.8), n)]) \
        if max(max(s) for s in fsplits if len(s)) >= n else fsplits
    fc = TSForecaster(Xf, yf, splits=fsplits, arch="PatchTST", batch_tfms=[TSStandardize()], metrics=[mae], bs=BS,
                      device=device, arch_config=dict(n_layers=1, d_model=16, n_heads=2, d_ff=32, patch_len=8,
                                                      stride=8), seed=0)
    Xm, ym = _data("multilabel")
    from tsai.basics import get_ts_dls, ts_learner
    from tsai.data.core import TSMultiLabelClassification
    from tsai.models.ResNetPlus import ResNetPlus

    # multi-label through ts_learner (TSClassifier sizes the head from the label lists, not the vocabulary)
    ml_dls = get_ts_dls(Xm, ym, splits=_splits(), tfms=[None, TSMultiLabelClassification()],
                        batch_tfms=[TSStandardize()], bs=BS, device=device)
    ml = ts_learner(ml_dls, ResNetPlus, metrics=[accuracy_multi], seed=0, d=False)

    def fit_preds(learn, Xp):
        def run():
            _fit(learn)
            with learn.no_bar():
                return learn.get_X_preds(Xp[:20], with_decoded=True)
        return run

    return _learner_workload(torch, device, "tslearner_api", clf, preds=False, extra_cases=[
        ("TSClassifier fit + preds", fit_preds(clf, X)), ("TSRegressor fit + preds", fit_preds(reg, Xr)),
        ("TSForecaster fit + preds", fit_preds(fc, Xf)), ("multi-label fit + preds", fit_preds(ml, Xm))])


def build_batch_transforms(torch, device):
    """The augmentations and preprocessors on a device batch, as the loader's after_batch applies them; the step
    trains InceptionTimePlus on loaders with a stack of them; RandAugment."""
    _ts()
    import tsai.data.transforms as T
    import tsai.data.preprocessing as P
    from tsai.basics import ts_learner
    from tsai.models.InceptionTimePlus import InceptionTimePlus

    augs = [T.TSMagScale(.5, p=.5), T.TSMagWarp(.05, p=.5), T.TSTimeWarp(.05, p=.5), T.TSGaussianNoise(.1, p=.5),
            T.TSRandomResizedCrop(p=.3), T.TSTimeStepOut(.1, p=.3)]
    dls = _dls(torch, device, batch_tfms=[P.TSStandardize()] + augs)
    learn = ts_learner(dls, InceptionTimePlus, seed=0)
    xb, yb = dls.train.one_batch()
    names = [n for n in dir(T) if n.startswith("TS") and isinstance(getattr(T, n), type)
             and getattr(T, n).__module__ == T.__name__]
    # the wavelet transforms need pywt (PyWavelets), not on the GPU machine
    skip = {"TSIdentity", "TSFreqDenoise", "TSRandomFreqNoise", "TSMask2Value"}
    cases = []
    for n in names:
        if n in skip:
            continue

        def run(n=n):
            tfm = getattr(T, n)(p=1.) if "p" in getattr(T, n).__init__.__code__.co_varnames else getattr(T, n)()
            return tfm(xb.clone(), split_idx=0)

        cases.append((n, run))

    def rand_aug():
        tfm = T.RandAugment([T.TSMagScale, T.TSMagWarp, T.TSTimeWarp, T.TSGaussianNoise, T.TSBlur, T.TSSmooth,
                             T.TSRandomShift, T.TSCutOut, T.TSVarOut], N=2, M=5)
        return tfm(xb.clone(), split_idx=0)

    def mask2value():
        return T.TSMask2Value(mask_fn=T.self_mask, value=0, p=1.)(xb.clone(), split_idx=0)

    cases += [("RandAugment", rand_aug), ("TSMask2Value", mask2value)]
    # TSClip, TSClipOutliers and TSGaussianStandardize keep their statistics on the CPU and refuse a device batch
    # (tsai 1.0.1): not run
    preps = {
        "TSStandardize": P.TSStandardize(), "TSStandardize by_sample": P.TSStandardize(by_sample=True),
        "TSStandardize by_var": P.TSStandardize(by_var=True), "TSNormalize": P.TSNormalize(),
        "TSNormalize by_var": P.TSNormalize(by_var=True), "TSRobustScale": P.TSRobustScale(),
        "TSDiff": P.TSDiff(), "TSLog": P.TSLog(),
        "TSCyclicalPosition": P.TSCyclicalPosition(), "TSLinearPosition": P.TSLinearPosition(),
        "TSMissingness": P.TSMissingness(), "TSPositionGaps": P.TSPositionGaps(), "TSRollingMean": P.TSRollingMean(),
        "TSLogReturn": P.TSLogReturn(), "TSAdd": P.TSAdd(1.), "TSClipByVar": P.TSClipByVar([(0, -1, 1)]),
        "TSDropVars": P.TSDropVars([0]), "TSSelfMissingness": P.TSSelfMissingness(),
        "TSNan2Value": P.TSNan2Value(), "TSNan2Value median": P.TSNan2Value(median=True),
    }
    for n, p in preps.items():
        def run(p=p):
            if hasattr(p, "setups"):
                try:
                    p.setup(dls.train)
                except Exception:
                    p.setups(dls.train)
            return p(xb.clone(), split_idx=0)
        cases.append((n, run))
    return _learner_workload(torch, device, "batch_transforms", learn, extra_cases=cases, preds=False, fit=False)


def build_callbacks_mixup(torch, device):
    """Fits with tsai's callbacks and mixed augmentations; MVP self-supervised pre-training."""
    _ts()
    import tsai.callback.all as CB
    from tsai.basics import accuracy, ts_learner
    from tsai.data.mixed_augmentation import CutMix1d, IntraClassCutMix1d, MixUp1d
    from tsai.data.transforms import TSMagScale
    from tsai.models.InceptionTimePlus import InceptionTimePlus
    from tsai.models.TSTPlus import TSTPlus

    dls = _dls(torch, device)
    learn = ts_learner(dls, InceptionTimePlus, metrics=accuracy, seed=0)
    d = tempfile.mkdtemp(prefix="tsai-mvp-")

    def fit_with(cbs, arch=InceptionTimePlus, kind="cls", **kw):
        def run():
            dl = _dls(torch, device, kind)
            lrn = ts_learner(dl, arch, cbs=cbs() if callable(cbs) else cbs, seed=0, **kw)
            return _fit(lrn, one_cycle=False)
        return run

    def mvp():
        X, _ = _data("cls")
        from tsai.basics import get_ts_dls
        from tsai.data.preprocessing import TSStandardize

        udls = get_ts_dls(X, splits=_splits(), batch_tfms=[TSStandardize()], bs=BS, device=device)
        lrn = ts_learner(udls, TSTPlus, cbs=[CB.MVP(target_dir=d, fname="mvp", verbose=False)], seed=0,
                         d_model=32, n_layers=1)
        return _fit(lrn, one_cycle=False)

    cases = [
        ("MixUp1d", fit_with(lambda: [MixUp1d(.4)])),
        ("CutMix1d", fit_with(lambda: [CutMix1d(1.)])),
        ("IntraClassCutMix1d", fit_with(lambda: [IntraClassCutMix1d()])),
        ("MVP pre-training", mvp),
        ("BatchSubsampler", fit_with(lambda: [CB.BatchSubsampler(sample_pct=.5, step_pct=.8)])),
        ("TransformScheduler", fit_with(lambda: [CB.TransformScheduler(
            __import__("fastai.callback.schedule", fromlist=["SchedCos"]).SchedCos(1, 0))])),
        ("GamblersCallback", fit_with(lambda: [CB.GamblersCallback()], loss_func=CB.gambler_loss(),
                                      c_out=4)),
        ("UBDAug", fit_with(lambda: [CB.UBDAug([TSMagScale(.2)], N=2, C=2, S=1)])),
        ("BatchLossFilter", fit_with(lambda: [CB.BatchLossFilter(loss_perc=.5)])),
        ("RandomWeightLossWrapper", fit_with(lambda: [CB.RandomWeightLossWrapper()])),
        ("BatchMasker", fit_with(lambda: [CB.BatchMasker(r=.2)])),
        ("SamplerWithReplacement", fit_with(lambda: [CB.SamplerWithReplacement()])),
        ("ShowGraph + SaveModel", fit_with(lambda: [CB.SaveModel(fname="m", verbose=False)])),
    ]
    return _learner_workload(torch, device, "callbacks_mixup", learn, extra_cases=cases, preds=False)


def build_noisy_student_weights(torch, device):
    """NoisyStudent with pseudo-labelled data, WeightedPerSampleLoss (LDS weights) on a regression task, weighted
    train loaders."""
    _ts()
    import numpy as np
    import tsai.callback.all as CB
    from tsai.basics import TSRegression, get_ts_dls, ts_learner
    from tsai.data.preprocessing import TSStandardize
    from tsai.models.InceptionTimePlus import InceptionTimePlus

    Xr, yr = _data("reg")
    dls = get_ts_dls(Xr, yr, splits=_splits(), tfms=[None, TSRegression()], batch_tfms=[TSStandardize()], bs=BS,
                     device=device)
    learn = ts_learner(dls, InceptionTimePlus, seed=0)

    def wpsl():
        w = torch.as_tensor(CB.prepare_LDS_weights(yr, n_bins=10, show_plot=False) if hasattr(
            CB, "prepare_LDS_weights") else np.ones(len(yr)), dtype=torch.float32)
        lrn = ts_learner(dls, InceptionTimePlus, cbs=[CB.WeightedPerSampleLoss(w)], seed=0)
        return _fit(lrn, one_cycle=False)

    def weighted_loader():
        from tsai.basics import TSClassification

        X, y = _data("cls")
        w = np.linspace(0.5, 1.5, len(X)).astype(np.float32)
        wd = get_ts_dls(X, y, splits=_splits(), tfms=[None, TSClassification()], batch_tfms=[TSStandardize()], bs=BS,
                        device=device, weights=w)
        return _fit(ts_learner(wd, InceptionTimePlus, seed=0), one_cycle=False)

    def noisy():
        X, y = _data("cls")
        Xu, _ = _data("cls", seed=5)
        Xu = Xu[:64]  # get_X_preds of all 96 samples ends on an empty batch in tsai (80 too; 64 does not)
        from tsai.basics import TSClassification
        from tsai.data.transforms import TSMagScale

        cdls = get_ts_dls(X, y, splits=_splits(), tfms=[None, TSClassification()], batch_tfms=[TSStandardize()],
                          bs=BS, device=device)
        from tsai.basics import get_ts_dl

        teacher = ts_learner(cdls, InceptionTimePlus, seed=0)
        with teacher.no_bar():
            probs = teacher.get_X_preds(Xu)[0]
        dl2 = get_ts_dl(Xu, probs.cpu().numpy(), bs=BS, device=device)
        lrn = ts_learner(cdls, InceptionTimePlus, cbs=[CB.NoisyStudent(dl2=dl2, bs=BS * 2, l2pl_ratio=1,
                                                                       batch_tfms=[TSMagScale()], verbose=False)],
                         seed=0)
        return _fit(lrn, one_cycle=False)

    return _learner_workload(torch, device, "noisy_student_weights", learn, preds=False, extra_cases=[
        ("WeightedPerSampleLoss", wpsl), ("weighted train loader", weighted_loader), ("NoisyStudent", noisy)])


def build_losses_metrics(torch, device):
    """tsai's losses and metrics on device tensors, as the learner calls them."""
    _ts()
    import tsai.losses as LS
    import tsai.metrics as MT

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 3, generator=g).to(device).requires_grad_()
    target = torch.randint(0, 3, (32,), generator=g).to(device)
    reg_pred = torch.randn(32, generator=g).to(device).requires_grad_()
    reg_t = torch.randn(32, generator=g).to(device)
    reg_nan = reg_t.clone()
    reg_nan[::5] = float("nan")
    ml_logits = torch.randn(32, 4, generator=g).to(device)
    ml_t = (torch.rand(32, 4, generator=g) > .5).float().to(device)
    center = LS.CenterLoss(3, 3).to(device)
    center_plus = LS.CenterPlusLoss(torch.nn.CrossEntropyLoss(), 3).to(device)

    def binary_fit():
        # the AccumMetric metrics (lift, recall at specificity, MCC, mean per-class accuracy) as a fit computes them
        from tsai.basics import TSClassification, get_ts_dls, ts_learner
        from tsai.data.preprocessing import TSStandardize
        from tsai.models.InceptionTimePlus import InceptionTimePlus

        X, y = _data("cls")
        yb = (y == "a").astype(int).astype(str)
        bdls = get_ts_dls(X, yb, splits=_splits(), tfms=[None, TSClassification()], batch_tfms=[TSStandardize()],
                          bs=BS, device=device)
        lrn = ts_learner(bdls, InceptionTimePlus, seed=0, metrics=[
            MT.lift_at_specificity, MT.top_k_lift, MT.recall_at_specificity, MT.MatthewsCorrCoefBinary(),
            MT.mean_per_class_accuracy])
        out = _fit(lrn, one_cycle=False)
        with lrn.no_bar():  # temperature scaling: binary tasks only
            lrn.calibrate_model(max_iter=20, show_plot=False, verbose=False)
        return out

    def back(v):
        if isinstance(v, torch.Tensor) and v.requires_grad:
            v.backward()
        return v

    cases = [
        ("HuberLoss", lambda: back(LS.HuberLoss(delta=1.)(reg_pred, reg_t))),
        ("LogCoshLoss", lambda: back(LS.LogCoshLoss()(reg_pred, reg_t))),
        ("MaskedLossWrapper", lambda: back(LS.MaskedLossWrapper(torch.nn.MSELoss())(reg_pred[:, None],
                                                                                    reg_nan[:, None]))),
        ("CenterLoss", lambda: back(center(logits, target))),
        ("CenterPlusLoss", lambda: back(center_plus(logits, target))),
        ("FocalLoss", lambda: back(LS.FocalLoss()(logits, target))),
        ("FocalLoss alpha", lambda: back(LS.FocalLoss(alpha=torch.tensor([1., 2., 1.], device=device))(
            logits, target))),
        ("TweedieLoss", lambda: back(LS.TweedieLoss()(reg_pred * 1., reg_t.abs()))),
        ("accuracy_multi", lambda: MT.accuracy_multi(ml_logits, ml_t)),
        ("precision_multi", lambda: MT.precision_multi(ml_logits, ml_t)),
        ("recall_multi", lambda: MT.recall_multi(ml_logits, ml_t)),
        ("specificity_multi", lambda: MT.specificity_multi(ml_logits, ml_t)),
        ("balanced_accuracy_multi", lambda: MT.balanced_accuracy_multi(ml_logits, ml_t)),
        ("Fbeta_multi", lambda: MT.Fbeta_multi(ml_logits, ml_t)),
        ("F1_multi", lambda: MT.F1_multi(ml_logits, ml_t)),
        ("mae", lambda: MT.mae(reg_pred.detach(), reg_t)),
        ("mape", lambda: MT.mape(reg_pred.detach(), reg_t)),
        ("binary metrics in a fit", binary_fit),
    ]
    return Workload("losses_metrics", cases=cases)


def build_mixed_tabular(torch, device):
    """Time series + tabular data: get_ts_dls and get_tabular_dls combined by get_mixed_dls, MultiInputNet
    (InceptionTimePlus + TabModel); TSTabFusionTransformer; TabTransformer / GatedTabTransformer on tabular loaders."""
    _ts()
    import numpy as np
    import pandas as pd
    import tsai.models.all as M
    from tsai.basics import TSClassification, accuracy, get_ts_dls
    from tsai.data.mixed import get_mixed_dls
    from tsai.data.preprocessing import TSStandardize
    from tsai.data.tabular import get_tabular_dls
    from fastai.learner import Learner

    X, y = _data("cls")
    splits = _splits()
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"cat1": rng.choice(["x", "y", "z"], N), "cat2": rng.choice(["p", "q"], N),
                       "num1": rng.normal(size=N), "num2": rng.normal(size=N), "target": y})
    ts_dls = get_ts_dls(X, y, splits=splits, tfms=[None, TSClassification()], batch_tfms=[TSStandardize()], bs=BS,
                        device=device)
    tab_dls = get_tabular_dls(df, cat_names=["cat1", "cat2"], cont_names=["num1", "num2"], y_names="target",
                              splits=splits, bs=BS, device=device)
    mixed = get_mixed_dls(ts_dls, tab_dls, bs=BS, device=device)
    m1 = M.build_ts_model(M.InceptionTimePlus, dls=ts_dls)
    m2 = M.build_tabular_model(M.TabModel, dls=tab_dls)
    model = M.MultiInputNet(m1, m2).to(device)
    learn = Learner(mixed, model, metrics=accuracy)

    def fit_fusion():
        classes = {"cat1": ["#na#", "x", "y", "z"], "cat2": ["#na#", "p", "q"]}
        fm = M.TSTabFusionTransformer(C, 3, L, classes, ["num1", "num2"]).to(device)
        lrn = Learner(mixed, fm, metrics=accuracy)
        return _fit(lrn, one_cycle=False)

    def fit_tab(arch):
        def run():
            classes = {"cat1": ["#na#", "x", "y", "z"], "cat2": ["#na#", "p", "q"]}
            tm = arch(classes, ["num1", "num2"], 3).to(device)
            return _fit(Learner(tab_dls, tm, metrics=accuracy), one_cycle=False)
        return run

    return _learner_workload(torch, device, "mixed_tabular", learn, preds=False, extra_cases=[
        ("TSTabFusionTransformer fit", fit_fusion), ("TabTransformer fit", fit_tab(M.TabTransformer)),
        ("GatedTabTransformer fit", fit_tab(M.GatedTabTransformer))])


WORKLOADS = [build_inceptiontime_classification, build_cnn_models, build_transformer_models, build_rnn_models,
             build_rocket_models, build_tslearner_api, build_batch_transforms, build_callbacks_mixup,
             build_noisy_student_weights, build_losses_metrics, build_mixed_tabular]
