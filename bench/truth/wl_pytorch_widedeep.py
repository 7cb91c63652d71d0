"""pytorch-widedeep 1.7.0 workloads, as its examples (examples/scripts) and tests run them: a synthetic
census-like frame made here (categorical "color" / "size" / "city" / "job", continuous "age" / "hours" /
"income", a binary, a multiclass and a regression target, a short free-text "review" column, a small PNG per
row written to a temporary folder), the library's preprocessors, and per model family:

- the library's own training step: a batch of its ``WideDeepDataset`` (``wd_train_val_split``, the
  Trainer's DataLoader), ``to_device``, ``WideDeep.forward``, the Trainer's loss (TabNet's sparsity term
  too) and ``Trainer._get_score`` (the metrics); the harness does backward and the optimizer step; the
  eval forward is ``Trainer._eval_step``; cases: the real ``Trainer._train_step``, ``Trainer.fit``
  (validation split, callbacks: EarlyStopping, ModelCheckpoint, LRHistory, lr schedulers, initializers),
  ``predict`` / ``predict_proba`` / ``predict_uncertainty``, ``save``, ``explain`` and feature importance;
- the models: Wide, TabMlp, TabResnet, TabNet, TabTransformer, SAINT, FTTransformer, TabFastFormer,
  TabPerceiver, ContextAttentionMLP, SelfAttentionMLP, the continuous-embedding methods (piecewise,
  periodic, quantization), BasicRNN / AttentiveRNN / StackedAttentiveRNN on ``TextPreprocessor`` output,
  Vision (its own CNN, no download) on ``ImagePreprocessor`` output, HFModel on a tiny random BERT saved
  here, ModelFuser and several tabular / text components, the recommendation models (DeepFM, DeepFFM,
  xDeepFM, AutoInt, AutoIntPlus, DCN, DCNv2, GDCN, the sequence Transformer, DIN on ``DINPreprocessor``)
  with the ranking metrics, the Bayesian models under ``BayesianTrainer``, self-supervised pre-training
  (``EncoderDecoderTrainer``, ``ContrastiveDenoisingTrainer``), fine-tuning routines (felbo, howard),
  ``Tab2Vec``, ``TrainerFromFolder`` over CSV / text / image folders;
- the losses (single- and multi-target) and metrics called on device tensors.

No downloads. The library imports spacy (its default tokenizer) and gensim (``gensim.utils.tokenize``) at
import time; neither is installed on the GPU machine (their wheels are too large to carry), so small stand-ins
are put in ``sys.modules`` first: a regex tokenizer in spacy's ``blank(lang).tokenizer`` shape and gensim's
alphabetic ``tokenize``. HFPreprocessor calls the tokenizer's ``batch_encode_plus``, gone in transformers 5: it is
added back where missing (``_batch_encode_plus``). Data loaders run in the process (``num_workers=0``), text is
tokenised on one CPU.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import types
import warnings

from harness import Workload

N, BS = 96, 32
_CACHE: dict = {}
CAT = ["color", "size", "city", "job"]
CONT = ["age", "hours", "income"]
WORDS = ("good bad great poor nice awful room view staff clean dirty quiet noisy price value cheap expensive "
         "location breakfast bed comfortable small large friendly rude service stay night").split()


def _stand_ins():
    """spacy and gensim where they are missing (pytorch_widedeep.utils imports both at module level)."""
    try:
        import spacy  # noqa: F401
    except ImportError:
        sp = types.ModuleType("spacy")
        sym = types.ModuleType("spacy.symbols")
        sym.ORTH = 65

        class _Tok:
            def __init__(self, text):
                self.text = text

        class _Tokenizer:
            def __init__(self):
                self.special = set()

            def __call__(self, t):
                return [_Tok(w) for w in re.findall(r"xx\w+|\w+|[^\w\s]", t)]

            def add_special_case(self, w, attrs):
                self.special.add(w)

        class _Lang:
            def __init__(self, lang):
                self.lang = lang
                self.tokenizer = _Tokenizer()

        sp.blank = _Lang
        sp.symbols = sym
        sys.modules["spacy"], sys.modules["spacy.symbols"] = sp, sym
    try:
        import gensim.utils  # noqa: F401
    except ImportError:
        g = types.ModuleType("gensim")
        gu = types.ModuleType("gensim.utils")
        pat = re.compile(r"(((?![\d])\w)+)", re.UNICODE)

        def tokenize(text, lowercase=False, deacc=False, encoding="utf8", errors="strict", to_lower=False,
                     lower=False):
            if lowercase or to_lower or lower:
                text = text.lower()
            for m in pat.finditer(text):
                yield m.group()

        gu.tokenize = tokenize
        g.utils = gu
        sys.modules["gensim"], sys.modules["gensim.utils"] = g, gu


def _wd():
    _stand_ins()
    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import pytorch_widedeep

    return pytorch_widedeep


def _dev(device):
    return str(device)


def _frame(n=N, seed=0):
    """A census-like frame with text and an image file per row (written once, to a temporary folder)."""
    import numpy as np
    import pandas as pd

    key = ("frame", n, seed)
    if key in _CACHE:
        return _CACHE[key]
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "color": rng.choice(["red", "green", "blue", "black"], n),
        "size": rng.choice(["S", "M", "L"], n),
        "city": rng.choice(["paris", "rome", "oslo", "lima", "kyiv", "pune"], n),
        "job": rng.choice(["eng", "doc", "law", "art", "ops"], n),
        "age": rng.uniform(18, 70, n).round(1),
        "hours": rng.uniform(10, 60, n).round(1),
        "income": rng.lognormal(3, 0.5, n).round(2),
    })
    df["age_bucket"] = pd.cut(df["age"], bins=[0, 30, 45, 60, 100], labels=False)
    df["label"] = ((df["age"] > 40) ^ (df["color"] == "red")).astype(int)
    df["cls"] = (df["hours"] // 17).astype(int).clip(0, 2)
    df["target"] = (0.05 * df["age"] + 0.1 * df["hours"] + rng.normal(0, 0.5, n)).astype("float32")
    df["review"] = [" ".join(rng.choice(WORDS, int(rng.integers(4, 12)))) for _ in range(n)]
    df["img"] = ["img_%d.png" % i for i in range(n)]
    _CACHE[key] = df
    return df


def _img_dir():
    """One small random PNG per row of the frame (cv2 reads them back, as ImagePreprocessor does)."""
    if "img_dir" in _CACHE:
        return _CACHE["img_dir"]
    import cv2
    import numpy as np

    d = tempfile.mkdtemp(prefix="wd-img-")
    rng = np.random.default_rng(1)
    for i in range(N):
        h, w = int(rng.integers(24, 40)), int(rng.integers(24, 40))
        cv2.imwrite(os.path.join(d, "img_%d.png" % i), rng.integers(0, 255, (h, w, 3), dtype=np.uint8))
    _CACHE["img_dir"] = d
    return d


def _tab(**kw):
    from pytorch_widedeep.preprocessing import TabPreprocessor

    kw.setdefault("cat_embed_cols", CAT)
    kw.setdefault("continuous_cols", CONT)
    kw.setdefault("scale", True)
    tp = TabPreprocessor(verbose=0, **kw)
    return tp, tp.fit_transform(_frame())


def _wide():
    from pytorch_widedeep.preprocessing import WidePreprocessor

    wp = WidePreprocessor(wide_cols=CAT + ["age_bucket"], crossed_cols=[("color", "size"), ("city", "job")])
    return wp, wp.fit_transform(_frame())


def _cycle(loader):
    state = {"it": iter(loader)}

    def nxt():
        try:
            return next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            return next(state["it"])

    return nxt


def _trainer_workload(torch, device, name, model, objective, X, target, trainer_kwargs=None, fit_kwargs=None,
                      extra_cases=(), predict=True, proba=None, lr=1e-3, trainer_cls=None):
    """A Trainer over ``model``: the library's forward + loss + score as the training step, its _eval_step as the
    eval forward, and _train_step / fit / predict / predict_proba as cases (plus ``extra_cases(trainer)``)."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.training._trainer_utils import wd_train_val_split
    from pytorch_widedeep.utils.general_utils import to_device

    tk = dict(verbose=0, seed=1, num_workers=0, device=_dev(device))
    tk.update(trainer_kwargs or {})
    trainer = (trainer_cls or Trainer)(model, objective=objective, **tk)
    X_train = dict(X, target=target)
    train_set, eval_set = wd_train_val_split(trainer.seed, trainer.method, X_train=dict(X_train), val_split=0.25,
                                             transforms=trainer.transforms)
    trainer.batch_size = BS
    tl = _cycle(trainer._set_dataloader(None, train_set, BS, {"shuffle": True}))
    vl = _cycle(trainer._set_dataloader(None, eval_set, BS, {}))

    def to_dev(data):
        out = {}
        for k, v in data.items():
            out[k] = [to_device(i, trainer.device) for i in v] if isinstance(v, list) else to_device(v, trainer.device)
        return out

    def train():
        data, tgt = tl()
        Xd = to_dev(data)
        y = tgt.view(-1, 1).float() if trainer.method not in ["multiclass", "qregression", "multitarget"] else tgt
        y = to_device(y, trainer.device)
        y_pred = trainer.model(Xd)
        if trainer.is_model_tabnet:
            loss = trainer.loss_fn(y_pred[0], y) - trainer.lambda_sparse * y_pred[1]
            trainer._get_score(y_pred[0], y, is_train=True)
        else:
            loss = trainer.loss_fn(y_pred, y)
            trainer._get_score(y_pred, y, is_train=True)
        return loss

    def evaluate():
        data, tgt = vl()
        trainer.valid_running_loss = 0.0
        out = trainer._eval_step(data, tgt, 0)
        trainer.model.eval()
        return out

    def train_step():
        data, tgt = tl()
        trainer.train_running_loss = 0.0
        return trainer._train_step(data, tgt, 0)

    fk = dict(n_epochs=1, batch_size=BS, val_split=0.25)
    fk.update(fit_kwargs or {})

    def fit():
        trainer.fit(**X, target=target, **fk)

    cases = [("Trainer._train_step", train_step), ("Trainer.fit", fit)]
    if predict:
        cases.append(("Trainer.predict", lambda: trainer.predict(**X, batch_size=BS)))
    if proba if proba is not None else objective in ("binary", "multiclass"):
        cases.append(("Trainer.predict_proba", lambda: trainer.predict_proba(**X, batch_size=BS)))
    cases += [(n, (lambda f=f: f(trainer))) for n, f in extra_cases]
    return Workload(name, train=train, modules=[trainer.model], eval=evaluate, cases=cases, lr=lr,
                    info={"model": [type(m).__name__ for m in trainer.model.children()], "objective": objective})


def _layers(component):
    """A component's layers in fine-tune order (closest to the output first), as the gradual routines take them."""
    seen, out = set(), []
    for m in list(component[0].children())[::-1]:
        ids = {id(p) for p in m.parameters()}
        if ids and not ids & seen:  # a module shared by another (StackedAttentiveRNN's rnn) goes once
            out.append(m)
            seen |= ids
    return out


def _label(df, objective):
    import numpy as np

    if objective == "binary":
        return df["label"].values
    if objective == "multiclass":
        return df["cls"].values
    return np.asarray(df["target"].values, dtype="float32")


# ---------------------------------------------------------------------------------------------------- workloads


def build_wide_tabmlp(torch, device):
    """Wide + TabMlp (binary), as examples/scripts/adult_census.py: per-component optimizers, StepLR schedulers
    and initializers, EarlyStopping / ModelCheckpoint / LRHistory, Accuracy / Precision / Recall / F1 / FBeta;
    save, predict_uncertainty (MC dropout), Tab2Vec."""
    _wd()
    import numpy as np

    from pytorch_widedeep import Tab2Vec
    from pytorch_widedeep.callbacks import EarlyStopping, LRHistory, ModelCheckpoint
    from pytorch_widedeep.initializers import KaimingNormal, XavierNormal
    from pytorch_widedeep.metrics import Accuracy, F1Score, FBetaScore, Precision, Recall
    from pytorch_widedeep.models import TabMlp, Wide, WideDeep

    df = _frame()
    wp, X_wide = _wide()
    tp, X_tab = _tab()
    wide = Wide(input_dim=int(np.unique(X_wide).shape[0]), pred_dim=1)
    mlp = TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT,
                 cont_norm_layer="batchnorm", mlp_hidden_dims=[32, 16], mlp_dropout=[0.2, 0.2])
    model = WideDeep(wide=wide, deeptabular=mlp)
    wide_opt = torch.optim.Adam(model.wide.parameters(), lr=0.01)
    deep_opt = torch.optim.AdamW(model.deeptabular.parameters(), lr=0.01)
    out = tempfile.mkdtemp(prefix="wd-ckpt-")
    tk = dict(optimizers={"wide": wide_opt, "deeptabular": deep_opt},
              lr_schedulers={"wide": torch.optim.lr_scheduler.StepLR(wide_opt, step_size=2),
                             "deeptabular": torch.optim.lr_scheduler.StepLR(deep_opt, step_size=3)},
              initializers={"wide": KaimingNormal, "deeptabular": XavierNormal},
              callbacks=[EarlyStopping(patience=2), ModelCheckpoint(filepath=os.path.join(out, "wd_out"),
                                                                   save_best_only=True, max_save=1),
                         LRHistory(n_epochs=2)],
              metrics=[Accuracy, Precision, Recall, F1Score, FBetaScore(beta=2)])

    def save(tr):
        tr.save(path=out, save_state_dict=True, save_optimizer=True)

    def uncertainty(tr):
        return tr.predict_uncertainty(X_wide=X_wide, X_tab=X_tab, batch_size=BS, uncertainty_granularity=4)

    def tab2vec(tr):
        t2v = Tab2Vec(tab_preprocessor=tp, model=tr.model, device=_dev(device), return_dataframe=True)
        return t2v.fit_transform(df.head(BS), target_col="label")

    return _trainer_workload(torch, device, "wide_tabmlp", model, "binary", {"X_wide": X_wide, "X_tab": X_tab},
                             _label(df, "binary"), tk, fit_kwargs={"n_epochs": 2},
                             extra_cases=[("Trainer.save", save), ("Trainer.predict_uncertainty", uncertainty),
                                          ("Tab2Vec.fit_transform", tab2vec)])


def build_tabresnet_regression(torch, device):
    """TabResnet (regression) with a deep head, R2 metric, ReduceLROnPlateau, ModelCheckpoint on the metric;
    fits under the regression loss aliases (rmse, msle, huber, tweedie, ziln, quantile, focalr_mse, ...; positive
    outputs through ``enforce_positive`` where the loss needs them)."""
    _wd()
    from pytorch_widedeep.callbacks import EarlyStopping, ModelCheckpoint
    from pytorch_widedeep.metrics import R2Score
    from pytorch_widedeep.models import TabResnet, WideDeep

    df = _frame()
    tp, X_tab = _tab(cols_to_scale=["age", "hours"])
    res = TabResnet(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT,
                    blocks_dims=[32, 32, 16], blocks_dropout=0.1, mlp_hidden_dims=[16, 8])
    model = WideDeep(deeptabular=res, head_hidden_dims=[8], head_dropout=0.1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    out = tempfile.mkdtemp(prefix="wd-ckpt-")
    tk = dict(optimizers=opt, lr_schedulers=torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1),
              reducelronplateau_criterion="loss", metrics=[R2Score],
              callbacks=[EarlyStopping(monitor="val_r2", mode="max"),
                         ModelCheckpoint(filepath=os.path.join(out, "m"), monitor="val_r2", mode="max")])
    y = _label(df, "regression")
    pos = (y - y.min() + 0.1).astype("float32")

    def fit_objective(objective, target, pred_dim=1, positive=False, **kw):
        from pytorch_widedeep import Trainer

        def run(tr):
            m = WideDeep(deeptabular=TabResnet(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                               continuous_cols=CONT, blocks_dims=[16, 16]), pred_dim=pred_dim,
                         enforce_positive=positive, enforce_positive_activation="softplus")
            t = Trainer(m, objective=objective, verbose=0, num_workers=0, device=_dev(device), **kw)
            t.fit(X_tab=X_tab, target=target, n_epochs=1, batch_size=BS, val_split=0.25)
            return t.predict(X_tab=X_tab[:BS], batch_size=BS)

        return run

    extra = [("fit rmse", fit_objective("rmse", y)), ("fit msle", fit_objective("msle", pos, positive=True)),
             ("fit rmsle", fit_objective("rmsle", pos, positive=True)), ("fit huber", fit_objective("huber", y)),
             ("fit mae", fit_objective("mae", y)), ("fit tweedie", fit_objective("tweedie", pos, positive=True)),
             ("fit ziln", fit_objective("ziln", pos, pred_dim=3)),
             ("fit quantile", fit_objective("quantile", y, pred_dim=7)),
             ("fit focalr_mse", fit_objective("focalr_mse", y)),
             ("fit focalr_l1", fit_objective("focalr_l1", y)),
             ("fit focalr_rmse", fit_objective("focalr_rmse", y)),
             ("Trainer.predict_uncertainty",
              lambda tr: tr.predict_uncertainty(X_tab=X_tab, batch_size=BS, uncertainty_granularity=4))]
    return _trainer_workload(torch, device, "tabresnet_regression", model, "regression", {"X_tab": X_tab}, y, tk,
                             fit_kwargs={"n_epochs": 2}, extra_cases=extra)


def build_tabnet(torch, device):
    """TabNet (binary, ghost batch norm, sparsemax and entmax masks): the sparsity-regularised loss, fit with
    feature importance, explain (step masks), predict."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.metrics import Accuracy
    from pytorch_widedeep.models import TabNet, WideDeep

    df = _frame()
    tp, X_tab = _tab(default_embed_dim=2)
    net = TabNet(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT, n_steps=3,
                 step_dim=8, attn_dim=8, ghost_bn=True, virtual_batch_size=16)
    model = WideDeep(deeptabular=net)
    y = _label(df, "binary")

    def fit_importance(tr):
        tr.fit(X_tab=X_tab, target=y, n_epochs=1, batch_size=BS, feature_importance_sample_size=48)
        return tr.feature_importance

    def entmax(tr):
        m = WideDeep(deeptabular=TabNet(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                        continuous_cols=CONT, n_steps=2, step_dim=8, attn_dim=8,
                                        mask_type="entmax", ghost_bn=False), pred_dim=3)
        t = Trainer(m, objective="multiclass", verbose=0, num_workers=0, device=_dev(device), metrics=[Accuracy])
        t.fit(X_tab=X_tab, target=_label(df, "multiclass"), n_epochs=1, batch_size=BS)
        return t.predict_proba(X_tab=X_tab[:BS])

    extra = [("fit feature_importance", fit_importance),
             ("Trainer.explain masks", lambda tr: tr.explain(X_tab[:BS], save_step_masks=True)),
             ("Trainer.explain", lambda tr: tr.explain(X_tab[:BS], save_step_masks=False)),
             ("TabNet entmax multiclass", entmax)]
    return _trainer_workload(torch, device, "tabnet", model, "binary", {"X_tab": X_tab}, y,
                             {"metrics": [Accuracy], "lambda_sparse": 1e-3}, extra_cases=extra)


def _attention_models(tp, with_cls=True):
    from pytorch_widedeep.models import (SAINT, ContextAttentionMLP, FTTransformer, SelfAttentionMLP, TabFastFormer,
                                         TabPerceiver, TabTransformer)

    kw = dict(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT)
    return [
        TabTransformer(**kw, embed_continuous_method="standard", input_dim=16, n_heads=2, n_blocks=2),
        SAINT(**kw, cont_norm_layer="batchnorm", input_dim=16, n_heads=2, n_blocks=2),
        FTTransformer(**kw, input_dim=16, kv_compression_factor=0.5, n_blocks=2, n_heads=2),
        TabFastFormer(**kw, input_dim=16, n_blocks=2, n_heads=2, share_qv_weights=False, share_weights=False),
        TabPerceiver(**kw, input_dim=16, n_latents=4, latent_dim=16, n_latent_blocks=2, n_perceiver_blocks=2,
                     share_weights=False),
        ContextAttentionMLP(**kw, input_dim=16, n_blocks=2),
        SelfAttentionMLP(**kw, input_dim=16, n_heads=2, n_blocks=2),
    ]


def build_attention_models(torch, device):
    """The attention-based tabular models in one WideDeep each (binary, with a cls token): TabTransformer, SAINT,
    FTTransformer, TabFastFormer, TabPerceiver, ContextAttentionMLP, SelfAttentionMLP. The training step sums their
    losses; cases: each model's fit, predict_proba, feature importance and explain (attention weights)."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.metrics import Accuracy
    from pytorch_widedeep.models import WideDeep

    df = _frame()
    tp, X_tab = _tab(with_attention=True, with_cls_token=True)
    y = _label(df, "binary")
    trainers = [Trainer(WideDeep(deeptabular=m), objective="binary", metrics=[Accuracy], verbose=0, num_workers=0,
                        device=_dev(device)) for m in _attention_models(tp)]
    from pytorch_widedeep.training._trainer_utils import wd_train_val_split
    from pytorch_widedeep.utils.general_utils import to_device

    train_set, eval_set = wd_train_val_split(1, "binary", X_tab=X_tab, target=y, val_split=0.25)
    tl = _cycle(trainers[0]._set_dataloader(None, train_set, BS, {"shuffle": True}))
    vl = _cycle(trainers[0]._set_dataloader(None, eval_set, BS, {}))

    def train():
        data, tgt = tl()
        total = 0
        for tr in trainers:
            Xd = {"deeptabular": to_device(data["deeptabular"], tr.device)}
            yy = to_device(tgt.view(-1, 1).float(), tr.device)
            pred = tr.model(Xd)
            total = total + tr.loss_fn(pred, yy)
            tr._get_score(pred, yy, is_train=True)
        return total

    def evaluate():
        data, tgt = vl()
        for tr in trainers:
            tr.valid_running_loss = 0.0
            tr._eval_step(data, tgt, 0)
            tr.model.eval()

    cases = []
    for tr in trainers:
        n = type(tr.model.deeptabular[0]).__name__
        fi = None if n in ("TabPerceiver", "FTTransformer") else 48  # unsupported / needs no kv compression
        cases.append(("%s fit" % n, lambda tr=tr, fi=fi: tr.fit(X_tab=X_tab, target=y, n_epochs=1, batch_size=BS,
                                                                 val_split=0.25, feature_importance_sample_size=fi)))
        cases.append(("%s predict_proba" % n, lambda tr=tr: tr.predict_proba(X_tab=X_tab, batch_size=BS)))
        if n not in ("TabPerceiver",):
            cases.append(("%s explain" % n, lambda tr=tr: tr.explain(X_tab[:BS])))
    return Workload("attention_models", train=train, modules=[tr.model for tr in trainers], eval=evaluate,
                    cases=cases, lr=1e-3, info={"models": [type(t.model.deeptabular[0]).__name__ for t in trainers]})


def build_multiclass_embeddings(torch, device):
    """Multiclass TabMlp on every continuous-embedding method (standard, piecewise with quantization, periodic)
    and categorical-embedding option (bias, activation, dropout, shared embeddings on an attention model);
    focal loss with class weights, Accuracy top-k, torchmetrics metrics through MultipleMetrics."""
    _wd()
    import numpy as np
    import torchmetrics

    from pytorch_widedeep import Trainer
    from pytorch_widedeep.metrics import Accuracy, F1Score
    from pytorch_widedeep.models import FTTransformer, TabMlp, WideDeep

    df = _frame()
    y = _label(df, "multiclass")
    tp_q, X_q = _tab(quantization_setup={"age": 4, "hours": [10.0, 25.0, 40.0, 60.0]})
    tp, X_tab = _tab()
    kw = dict(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT)
    quantiles = {c: list(np.quantile(X_tab[:, tp.column_idx[c]], [0.0, 0.25, 0.5, 0.75, 1.0])) for c in CONT}
    models = {
        "standard": TabMlp(**kw, embed_continuous_method="standard", cont_embed_dim=4, use_cat_bias=True,
                           cat_embed_activation="relu", cat_embed_dropout=0.1, mlp_hidden_dims=[16]),
        "piecewise": TabMlp(**kw, embed_continuous_method="piecewise", cont_embed_dim=4,
                            quantization_setup=quantiles, mlp_hidden_dims=[16]),
        "periodic": TabMlp(**kw, embed_continuous_method="periodic", cont_embed_dim=4, n_frequencies=4,
                           sigma=0.1, share_last_layer=False, mlp_hidden_dims=[16]),
    }
    main = WideDeep(deeptabular=models["standard"], pred_dim=3)
    tk = dict(metrics=[Accuracy(top_k=2), F1Score(average=True),
                       torchmetrics.Accuracy(task="multiclass", num_classes=3).to(device),
                       torchmetrics.F1Score(task="multiclass", num_classes=3, average="macro").to(device)])

    def fit_model(key, objective="multiclass", **kw2):
        def run(tr):
            m = WideDeep(deeptabular=models[key], pred_dim=3)
            t = Trainer(m, objective=objective, verbose=0, num_workers=0, device=_dev(device),
                        metrics=[Accuracy], **kw2)
            t.fit(X_tab=X_tab, target=y, n_epochs=1, batch_size=BS, val_split=0.25)
            return t.predict_proba(X_tab=X_tab[:BS])
        return run

    def fit_quantized(tr):
        m = WideDeep(deeptabular=TabMlp(column_idx=tp_q.column_idx, cat_embed_input=tp_q.cat_embed_input,
                                        mlp_hidden_dims=[16]), pred_dim=3)
        t = Trainer(m, objective="multiclass", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_tab=X_q, target=y, n_epochs=1, batch_size=BS)
        return t.predict(X_tab=X_q[:BS])

    def fit_shared(tr):
        tps, Xs = _tab(with_attention=True, shared_embed=True)
        m = WideDeep(deeptabular=FTTransformer(column_idx=tps.column_idx, cat_embed_input=tps.cat_embed_input,
                                               continuous_cols=CONT, shared_embed=True, add_shared_embed=False,
                                               frac_shared_embed=0.25, input_dim=8, n_blocks=1, n_heads=2),
                     pred_dim=3)
        t = Trainer(m, objective="multiclass", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_tab=Xs, target=y, n_epochs=1, batch_size=BS)
        return t.predict(X_tab=Xs[:BS])

    extra = [("fit piecewise", fit_model("piecewise")), ("fit periodic", fit_model("periodic")),
             ("fit focal_loss weighted", fit_model("standard", objective="multiclass_focal_loss", alpha=0.25,
                                                   gamma=2.0)),
             ("fit class_weight", fit_model("periodic", class_weight=[1.0, 2.0, 1.0])),
             ("fit quantized", fit_quantized), ("fit shared embeddings", fit_shared)]
    return _trainer_workload(torch, device, "multiclass_embeddings", main, "multiclass", {"X_tab": X_tab}, y, tk,
                             extra_cases=extra)


def _text(maxlen=12):
    from pytorch_widedeep.preprocessing import TextPreprocessor

    if ("text", maxlen) not in _CACHE:
        tp = TextPreprocessor(text_col="review", max_vocab=100, min_freq=1, maxlen=maxlen, n_cpus=1, verbose=0)
        _CACHE[("text", maxlen)] = (tp, tp.fit_transform(_frame()))
    return _CACHE[("text", maxlen)]


def build_text_rnns(torch, device):
    """Wide + TabMlp + a text component (TextPreprocessor output), regression: BasicRNN (bidirectional LSTM) in
    the step; cases: AttentiveRNN and StackedAttentiveRNN models fitted, the felbo and howard fine-tuning
    (warm-up) routines of each component, an RNN deep head."""
    _wd()
    import numpy as np

    from pytorch_widedeep import Trainer
    from pytorch_widedeep.models import AttentiveRNN, BasicRNN, StackedAttentiveRNN, TabMlp, Wide, WideDeep

    df = _frame()
    y = _label(df, "regression")
    wp, X_wide = _wide()
    tp, X_tab = _tab()
    txp, X_text = _text()
    vocab = len(txp.vocab.itos)
    rnn = BasicRNN(vocab_size=vocab, embed_dim=16, hidden_dim=16, n_layers=2, bidirectional=True, rnn_dropout=0.1,
                   padding_idx=1, head_hidden_dims=[16, 8])
    tab = TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT,
                 mlp_hidden_dims=[16, 8])
    wide = Wide(input_dim=int(np.unique(X_wide).shape[0]))
    model = WideDeep(wide=wide, deeptabular=tab, deeptext=rnn)
    X = {"X_wide": X_wide, "X_tab": X_tab, "X_text": X_text}

    def fit_text(cls, routine, **kw):
        def run(tr):
            m = WideDeep(wide=Wide(input_dim=int(np.unique(X_wide).shape[0])),
                         deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                            continuous_cols=CONT, mlp_hidden_dims=[16, 8]),
                         deeptext=cls(vocab_size=vocab, embed_dim=16, hidden_dim=16, padding_idx=1, **kw))
            t = Trainer(m, objective="regression", verbose=0, num_workers=0, device=_dev(device))
            t.fit(**X, target=y, n_epochs=1, batch_size=BS, finetune=True, finetune_epochs=1, routine=routine,
                  deeptabular_gradual=routine == "felbo", deeptabular_layers=_layers(m.deeptabular),
                  deeptext_gradual=True, deeptext_layers=_layers(m.deeptext))
            return t.predict(**X, batch_size=BS)
        return run

    def deephead(tr):
        m = WideDeep(deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                        continuous_cols=CONT, mlp_hidden_dims=[16]),
                     deeptext=BasicRNN(vocab_size=vocab, embed_dim=16, hidden_dim=16, rnn_type="gru",
                                       use_hidden_state=False),
                     head_hidden_dims=[16, 8], head_batchnorm=True)
        t = Trainer(m, objective="regression", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_tab=X_tab, X_text=X_text, target=y, n_epochs=1, batch_size=BS)
        return t.predict(X_tab=X_tab, X_text=X_text, batch_size=BS)

    extra = [("AttentiveRNN fit felbo", fit_text(AttentiveRNN, "felbo", n_layers=2, bidirectional=True)),
             ("StackedAttentiveRNN fit howard", fit_text(StackedAttentiveRNN, "howard", n_blocks=2,
                                                         with_addnorm=True)),
             ("BasicRNN gru deephead", deephead)]
    return _trainer_workload(torch, device, "text_rnns", model, "regression", X, y, extra_cases=extra)


def build_image_vision(torch, device):
    """Tab + image (ImagePreprocessor over PNG files, its aspect-aware resize and normalisation metrics) and
    Vision's own CNN (no pretrained weights: nothing downloaded), binary, with torchvision transforms (the
    library's MultipleTransforms) and fine-tuning of the image component."""
    _wd()
    from torchvision.transforms import Normalize, ToTensor

    from pytorch_widedeep import Trainer
    from pytorch_widedeep.models import TabMlp, Vision, WideDeep
    from pytorch_widedeep.preprocessing import ImagePreprocessor

    df = _frame()
    y = _label(df, "binary")
    ip = ImagePreprocessor(img_col="img", img_path=_img_dir(), width=32, height=32, verbose=0)
    X_img = ip.fit_transform(df)
    tp, X_tab = _tab()

    def make(**kw):
        return WideDeep(deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                           continuous_cols=CONT, mlp_hidden_dims=[16]),
                        deepimage=Vision(channel_sizes=[8, 16, 16], kernel_sizes=[3, 3, 3], strides=[1, 2, 1],
                                         head_hidden_dims=[16], **kw))

    model = make()
    X = {"X_tab": X_tab, "X_img": X_img}

    def with_transforms(tr):
        t = Trainer(make(), objective="binary", verbose=0, num_workers=0, device=_dev(device),
                    transforms=[ToTensor, Normalize(mean=[0.5, 0.5, 0.5], std=[0.2, 0.2, 0.2])])
        t.fit(**X, target=y, n_epochs=1, batch_size=BS)
        return t.predict(**X, batch_size=BS)

    def finetune(tr):
        t = Trainer(make(), objective="binary", verbose=0, num_workers=0, device=_dev(device))
        t.fit(**X, target=y, n_epochs=1, batch_size=BS, finetune=True, finetune_epochs=1, routine="felbo",
              deepimage_gradual=True, deepimage_layers=_layers(t.model.deepimage))

    def transform(tr):
        return ip.transform(df.head(8))

    extra = [("fit transforms", with_transforms), ("fit finetune felbo", finetune),
             ("ImagePreprocessor.transform", transform)]
    return _trainer_workload(torch, device, "image_vision", model, "binary", X, y, extra_cases=extra)


def _batch_encode_plus():
    """HFPreprocessor calls the tokenizer's ``batch_encode_plus``, which transformers 5 (the GPU machine's) no
    longer has; where it is missing it is the tokenizer's ``__call__`` on a list, as in transformers 4."""
    from transformers import PreTrainedTokenizerBase

    if not hasattr(PreTrainedTokenizerBase, "batch_encode_plus"):
        def batch_encode_plus(self, batch_text_or_text_pairs, **kwargs):
            return self(list(batch_text_or_text_pairs), **kwargs)

        PreTrainedTokenizerBase.batch_encode_plus = batch_encode_plus


def _bert_dir():
    """A tiny random BERT with a word-piece vocabulary of the frame's words, saved where from_pretrained finds it
    (the folder name has 'bert' in it: the library picks the model class from the name)."""
    if "bert" in _CACHE:
        return _CACHE["bert"]
    from transformers import BertConfig, BertTokenizer

    d = os.path.join(tempfile.mkdtemp(prefix="wd-"), "tiny-bert")
    os.makedirs(d)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + list("abcdefghijklmnopqrstuvwxyz") + \
        ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]
    with open(os.path.join(d, "vocab.txt"), "w") as fh:
        fh.write("\n".join(vocab) + "\n")
    BertTokenizer(vocab_file=os.path.join(d, "vocab.txt"), do_lower_case=True).save_pretrained(d)
    BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64).save_pretrained(d)
    _CACHE["bert"] = d
    return d


def build_hf_text(torch, device):
    """HFPreprocessor (a BERT tokenizer saved here) and HFModel (a tiny random BERT: cls and mean pooling, frozen /
    trainable parameters) next to TabMlp, binary; predict, fit, multi-text (two text columns, a list of text
    components). The 'pooler' mode is not run: HFModel looks for ``pooler_output`` on the model object, which no
    transformers model has (it is an output field), so the library refuses it."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.models import HFModel, TabMlp, WideDeep
    from pytorch_widedeep.preprocessing import HFPreprocessor

    df = _frame()
    y = _label(df, "binary")
    _batch_encode_plus()
    d = _bert_dir()
    hp = HFPreprocessor(model_name=d, text_col="review", num_workers=1,
                        encode_params={"max_length": 16, "padding": "max_length", "truncation": True,
                                       "add_special_tokens": True})
    X_text = hp.fit_transform(df)
    tp, X_tab = _tab()

    def make(pooling="cls", **kw):
        return WideDeep(deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                           continuous_cols=CONT, mlp_hidden_dims=[16]),
                        deeptext=HFModel(model_name=d, pooling_mode=pooling, head_hidden_dims=[16], **kw))

    model = make()
    X = {"X_tab": X_tab, "X_text": X_text}

    def fit_pool(pooling, **kw):
        def run(tr):
            t = Trainer(make(pooling, **kw), objective="binary", verbose=0, num_workers=0, device=_dev(device))
            t.fit(**X, target=y, n_epochs=1, batch_size=BS)
            return t.predict_proba(**X, batch_size=BS)
        return run

    def multi_text(tr):
        hp2 = HFPreprocessor(model_name=d, text_col="review2", num_workers=1,
                             encode_params={"max_length": 8, "padding": "max_length", "truncation": True})
        df2 = df.assign(review2=df["review"].str.split().str[:3].str.join(" "))
        X2 = hp2.fit_transform(df2)
        m = WideDeep(deeptext=[HFModel(model_name=d), HFModel(model_name=d, pooling_mode="mean")])
        t = Trainer(m, objective="binary", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_text=[X_text, X2], target=y, n_epochs=1, batch_size=BS)
        return t.predict(X_text=[X_text, X2], batch_size=BS)

    extra = [("fit mean pooling", fit_pool("mean")), ("fit partly frozen", fit_pool(
             "cls", trainable_parameters=["layer.1", "pooler"])), ("multi-text HFModel", multi_text),
             ("HFPreprocessor.encode", lambda tr: hp.encode(list(df["review"][:8])))]
    return _trainer_workload(torch, device, "hf_text", model, "binary", X, y, extra_cases=extra)


def build_model_fusion(torch, device):
    """Several tabular and text components: a list of deeptabular models fused by ModelFuser (concatenate, mean,
    head, a list of methods with a projection), two text columns with BasicRNN / AttentiveRNN fused, multiclass."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.models import AttentiveRNN, BasicRNN, ModelFuser, TabMlp, TabResnet, WideDeep
    from pytorch_widedeep.preprocessing import TextPreprocessor

    df = _frame()
    df2 = df.assign(review2=df["review"].str.split().str[::-1].str.join(" "))
    y = _label(df, "multiclass")
    tp_a, X_a = _tab(cat_embed_cols=["color", "size"], continuous_cols=["age"])
    tp_b, X_b = _tab(cat_embed_cols=["city", "job"], continuous_cols=["hours", "income"])
    txp, X_t1 = _text()
    txp2 = TextPreprocessor(text_col="review2", max_vocab=100, min_freq=1, maxlen=10, n_cpus=1, verbose=0)
    X_t2 = txp2.fit_transform(df2)

    def tab_a():
        return TabMlp(column_idx=tp_a.column_idx, cat_embed_input=tp_a.cat_embed_input, continuous_cols=["age"],
                      mlp_hidden_dims=[16, 8])

    def tab_b():
        return TabResnet(column_idx=tp_b.column_idx, cat_embed_input=tp_b.cat_embed_input,
                         continuous_cols=["hours", "income"], blocks_dims=[16, 8])

    def rnns():
        return [BasicRNN(vocab_size=len(txp.vocab.itos), embed_dim=8, hidden_dim=8, n_layers=1),
                AttentiveRNN(vocab_size=len(txp2.vocab.itos), embed_dim=8, hidden_dim=8, n_layers=1)]

    fused_tab = ModelFuser([tab_a(), tab_b()], fusion_method="concatenate")
    fused_text = ModelFuser(rnns(), fusion_method=["mean", "max", "sum"], projection_method="max")
    model = WideDeep(deeptabular=fused_tab, deeptext=fused_text, pred_dim=3)
    X = {"X_tab": [X_a, X_b], "X_text": [X_t1, X_t2]}

    def fit_methods(method, **kw):
        def run(tr):
            m = WideDeep(deeptabular=ModelFuser([tab_a(), tab_b()], fusion_method=method, **kw),
                         deeptext=rnns(), pred_dim=3)
            t = Trainer(m, objective="multiclass", verbose=0, num_workers=0, device=_dev(device))
            t.fit(**X, target=y, n_epochs=1, batch_size=BS, val_split=0.25)
            return t.predict_proba(**X, batch_size=BS)
        return run

    extra = [("ModelFuser mult", fit_methods("mult", projection_method="min")),
             ("ModelFuser head", fit_methods("head", head_hidden_dims=[16])),
             ("list of tab models", lambda tr: Trainer(WideDeep(deeptabular=[tab_a(), tab_b()], pred_dim=3),
                                                       objective="multiclass", verbose=0, num_workers=0,
                                                       device=_dev(device)).fit(X_tab=[X_a, X_b], target=y,
                                                                                 n_epochs=1, batch_size=BS))]
    return _trainer_workload(torch, device, "model_fusion", model, "multiclass", X, y, extra_cases=extra)


def _interactions(n_users=12, per_user=8, n_items=20, seed=0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = n_users * per_user
    df = pd.DataFrame({
        "user_id": np.repeat(np.arange(1, n_users + 1), per_user),
        "item_id": rng.integers(1, n_items + 1, n),
        "user_category": rng.choice(["A", "B", "C"], n),
        "item_category": rng.choice(["X", "Y", "Z"], n),
        "user_age": rng.uniform(18, 60, n).round(),
        "item_price": rng.uniform(1, 100, n).round(2),
        "genre": rng.choice(["drama", "comedy", "action", "horror"], n),
        "liked": rng.integers(0, 2, n),
        "timestamp": np.tile(np.arange(per_user), n_users),
    })
    return df


def build_rec_models(torch, device):
    """The recommendation models on a user-item interaction frame (binary 'liked'): DeepFM, DeepFFM, xDeepFM
    (factorisation machines, for_mf embeddings), AutoInt, AutoIntPlus, DCN, DCNv2 (mixture of low-rank experts),
    GDCN, the sequence Transformer, and DIN on DINPreprocessor output; with the ranking metrics (NDCG@k, binary
    NDCG@k, MAP@k, HitRatio@k, Precision@k, Recall@k: fixed items per user, unshuffled batches)."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.metrics import (MAP_at_k, Accuracy, BinaryNDCG_at_k, HitRatio_at_k, NDCG_at_k,
                                          Precision_at_k, Recall_at_k)
    from pytorch_widedeep.models import WideDeep
    from pytorch_widedeep.models.rec import (AutoInt, AutoIntPlus, DeepCrossNetwork, DeepCrossNetworkV2,
                                             DeepFactorizationMachine, DeepFieldAwareFactorizationMachine,
                                             ExtremeDeepFactorizationMachine, GatedDeepCrossNetwork, Transformer)
    from pytorch_widedeep.preprocessing import DINPreprocessor, TabPreprocessor

    df = _interactions()
    y = df["liked"].values
    cats = ["user_id", "item_id", "user_category", "item_category"]
    conts = ["user_age", "item_price"]
    tp_mf = TabPreprocessor(cat_embed_cols=cats, for_mf=True, verbose=0)
    X_mf = tp_mf.fit_transform(df)
    tp_att = TabPreprocessor(cat_embed_cols=cats, continuous_cols=conts, with_attention=True, verbose=0)
    X_att = tp_att.fit_transform(df)
    tp = TabPreprocessor(cat_embed_cols=cats, continuous_cols=conts, verbose=0)
    X = tp.fit_transform(df)
    mf = dict(column_idx=tp_mf.column_idx, cat_embed_input=tp_mf.cat_embed_input)
    att = dict(column_idx=tp_att.column_idx, cat_embed_input=tp_att.cat_embed_input, continuous_cols=conts,
               embed_continuous_method="standard")
    std = dict(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=conts)
    ranking = [NDCG_at_k(n_cols=8, k=3), BinaryNDCG_at_k(n_cols=8, k=3), MAP_at_k(n_cols=8, k=3),
               HitRatio_at_k(n_cols=8, k=3), Precision_at_k(n_cols=8, k=3), Recall_at_k(n_cols=8, k=3)]
    model = WideDeep(deeptabular=DeepFactorizationMachine(**mf, num_factors=8, mlp_hidden_dims=[16, 8]))

    def fit(make, Xt, metrics=None):
        def run(tr):
            t = Trainer(WideDeep(deeptabular=make()), objective="binary", verbose=0, num_workers=0,
                        device=_dev(device), metrics=metrics or [Accuracy()])
            t.fit(X_tab=Xt, target=y, n_epochs=1, batch_size=BS, shuffle=False)
            return t.predict_proba(X_tab=Xt, batch_size=BS)
        return run

    def seq_transformer(tr):
        import numpy as np

        seqs = np.stack([df["item_id"].values.reshape(-1, 8)[i % 12] for i in range(len(df))]).astype("int64")
        m = WideDeep(deeptext=Transformer(vocab_size=int(seqs.max()) + 1, seq_length=8, input_dim=8, n_heads=2,
                                          n_blocks=2, with_cls_token=False, with_pos_encoding=True))
        t = Trainer(m, objective="binary", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_text=seqs, target=y, n_epochs=1, batch_size=BS)
        return t.predict(X_text=seqs, batch_size=BS)

    def din(tr):
        from pytorch_widedeep.models.rec import DeepInterestNetwork

        dp = DINPreprocessor(user_id_col="user_id", item_embed_col="item_id", target_col="liked",
                             max_seq_length=4, action_col="liked", other_seq_embed_cols=["genre"],
                             cat_embed_cols=["user_category"], continuous_cols=["user_age"], verbose=0)
        X_din, y_din = dp.fit_transform(df)
        m = DeepInterestNetwork(column_idx=dp.din_columns_idx, target_item_col="target_item",
                                user_behavior_confiq=dp.user_behaviour_config, action_seq_config=dp.action_seq_config,
                                other_seq_cols_confiq=dp.other_seq_config,
                                cat_embed_input=dp.tab_preprocessor.cat_embed_input, continuous_cols=["user_age"],
                                mlp_hidden_dims=[16, 8])
        t = Trainer(WideDeep(deeptabular=m), objective="binary", verbose=0, num_workers=0, device=_dev(device),
                    metrics=[Accuracy()])
        t.fit(X_tab=X_din, target=y_din, n_epochs=1, batch_size=16)
        return t.predict(X_tab=X_din, batch_size=16)

    extra = [
        ("DeepFFM", fit(lambda: DeepFieldAwareFactorizationMachine(**mf, num_factors=4, mlp_hidden_dims=[16]), X_mf)),
        ("xDeepFM", fit(lambda: ExtremeDeepFactorizationMachine(**mf, input_dim=8, cin_layer_dims=[8, 4],
                                                                mlp_hidden_dims=[16]), X_mf)),
        ("AutoInt", fit(lambda: AutoInt(**att, input_dim=8, num_heads=2, num_layers=2), X_att)),
        ("AutoIntPlus", fit(lambda: AutoIntPlus(**att, input_dim=8, num_heads=2, num_layers=2, structure="parallel",
                                                gated=True, mlp_hidden_dims=[16]), X_att)),
        ("DCN", fit(lambda: DeepCrossNetwork(**std, n_cross_layers=2, mlp_hidden_dims=[16, 8]), X, ranking)),
        ("DCNv2", fit(lambda: DeepCrossNetworkV2(**std, num_cross_layers=2, low_rank=4, num_experts=2,
                                                 structure="stacked", mlp_hidden_dims=[16]), X)),
        ("GDCN", fit(lambda: GatedDeepCrossNetwork(**std, num_cross_layers=2, structure="parallel",
                                                   mlp_hidden_dims=[16]), X)),
        ("sequence Transformer", seq_transformer),
        ("DIN", din),
    ]
    return _trainer_workload(torch, device, "rec_models", model, "binary", {"X_tab": X_mf}, y,
                             {"metrics": ranking}, fit_kwargs={"shuffle": False, "val_split": None},
                             extra_cases=extra)


def build_bayesian(torch, device):
    """BayesianWide and BayesianTabMlp (Bayes-by-backprop, scale-mixture priors) under BayesianTrainer: the ELBO
    (``sample_elbo``) as the training step, its _eval_step; cases: fit (binary, multiclass, regression; callbacks),
    predict / predict_proba with sampling, save, Tab2Vec."""
    _wd()
    import numpy as np

    from pytorch_widedeep import BayesianTrainer, Tab2Vec
    from pytorch_widedeep.bayesian_models import BayesianTabMlp, BayesianWide
    from pytorch_widedeep.callbacks import EarlyStopping, ModelCheckpoint
    from pytorch_widedeep.metrics import Accuracy
    from pytorch_widedeep.training._trainer_utils import tabular_train_val_split
    from pytorch_widedeep.utils.general_utils import to_device

    df = _frame()
    tp, X_tab = _tab()
    wp, X_wide = _wide()
    y = _label(df, "binary")
    model = BayesianTabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT,
                           mlp_hidden_dims=[32, 16], prior_sigma_1=1.0, prior_sigma_2=0.002, prior_pi=0.8,
                           posterior_mu_init=0.0, posterior_rho_init=-7.0, pred_dim=1)
    out = tempfile.mkdtemp(prefix="wd-bayes-")
    trainer = BayesianTrainer(model, objective="binary", optimizer=torch.optim.Adam(model.parameters(), lr=0.01),
                              callbacks=[EarlyStopping(patience=2), ModelCheckpoint(filepath=os.path.join(out, "b"))],
                              metrics=[Accuracy], verbose=0, num_workers=0, device=_dev(device))
    train_set, eval_set = tabular_train_val_split(1, "binary", X_tab, y, None, None, 0.25)
    from torch.utils.data import DataLoader

    tl = _cycle(DataLoader(train_set, batch_size=BS, shuffle=True))
    vl = _cycle(DataLoader(eval_set, batch_size=BS))
    n_batches = 3

    def train():
        Xb, tgt = tl()
        X = to_device(Xb, trainer.device)
        yy = to_device(tgt.view(-1, 1).float(), trainer.device)
        y_pred, loss = trainer.model.sample_elbo(X, yy, trainer.loss_fn, 2, n_batches)
        trainer._get_score(y_pred.mean(dim=0), yy)
        return loss

    def evaluate():
        Xb, tgt = vl()
        trainer.valid_running_loss = 0.0
        return trainer._eval_step(Xb, tgt, 2, n_batches, 0)

    def train_step():
        Xb, tgt = tl()
        trainer.train_running_loss = 0.0
        return trainer._train_step(Xb, tgt, 2, n_batches, 0)

    def fit_other(kind, objective):
        def run():
            if kind == "wide":
                m = BayesianWide(input_dim=int(np.unique(X_wide).shape[0]), pred_dim=3 if objective == "multiclass"
                                 else 1)
                Xt = X_wide
            else:
                m = BayesianTabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                   continuous_cols=CONT, mlp_hidden_dims=[16], pred_dim=3 if objective ==
                                   "multiclass" else 1)
                Xt = X_tab
            t = BayesianTrainer(m, objective=objective, verbose=0, num_workers=0, device=_dev(device),
                                metrics=[Accuracy] if objective != "regression" else None)
            t.fit(X_tab=Xt, target=_label(df, objective), n_epochs=1, batch_size=BS, val_split=0.25)
            return t.predict(X_tab=Xt, n_samples=3, batch_size=BS)
        return run

    def tab2vec():
        return Tab2Vec(tab_preprocessor=tp, model=trainer.model, device=_dev(device)).transform(df.head(BS))

    cases = [("BayesianTrainer._train_step", train_step),
             ("BayesianTrainer.fit", lambda: trainer.fit(X_tab=X_tab, target=y, n_epochs=2, batch_size=BS,
                                                         val_split=0.25)),
             ("BayesianTrainer.predict", lambda: trainer.predict(X_tab, n_samples=3, batch_size=BS)),
             ("BayesianTrainer.predict_proba samples", lambda: trainer.predict_proba(X_tab, n_samples=3,
                                                                                    return_samples=True,
                                                                                    batch_size=BS)),
             ("BayesianTrainer.save", lambda: trainer.save(out, save_state_dict=True)),
             ("BayesianWide multiclass", fit_other("wide", "multiclass")),
             ("BayesianWide regression", fit_other("wide", "regression")),
             ("BayesianTabMlp multiclass", fit_other("mlp", "multiclass")),
             ("BayesianTabMlp regression", fit_other("mlp", "regression")),
             ("Tab2Vec Bayesian", tab2vec)]
    return Workload("bayesian", train=train, modules=[trainer.model], eval=evaluate, cases=cases, lr=1e-2)


def build_self_supervised(torch, device):
    """Self-supervised pre-training: EncoderDecoderTrainer (TabMlp, TabResnet, TabNet encoders with their default
    decoders; masked reconstruction) and ContrastiveDenoisingTrainer (TabTransformer, SAINT, FTTransformer,
    ContextAttentionMLP...; contrastive + denoising losses). The step is the encoder-decoder's forward and loss;
    cases: pretrain of each, save, then a Trainer fine-tune of the pretrained encoder. TabNet pre-trains without
    validation: its encoder-decoder eval forward re-embeds the embeddings (an index error in the library)."""
    _wd()
    from pytorch_widedeep import Trainer
    from pytorch_widedeep.callbacks import EarlyStopping, LRHistory
    from pytorch_widedeep.models import TabMlp, TabNet, TabResnet, WideDeep
    from pytorch_widedeep.self_supervised_training import ContrastiveDenoisingTrainer, EncoderDecoderTrainer
    from pytorch_widedeep.utils.general_utils import to_device

    df = _frame()
    tp, X_tab = _tab()
    tpa, X_att = _tab(with_attention=True, with_cls_token=True)
    kw = dict(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input, continuous_cols=CONT)
    enc = TabMlp(**kw, mlp_hidden_dims=[16, 8])
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
    ed = EncoderDecoderTrainer(encoder=enc, masked_prob=0.2, optimizer=opt,
                               lr_scheduler=torch.optim.lr_scheduler.StepLR(opt, step_size=1),
                               callbacks=[LRHistory(n_epochs=2), EarlyStopping(patience=1)], verbose=0,
                               num_workers=0, device=_dev(device))
    from torch.utils.data import DataLoader, TensorDataset

    tl = _cycle(DataLoader(TensorDataset(torch.from_numpy(X_tab)), batch_size=BS, shuffle=True))
    out = tempfile.mkdtemp(prefix="wd-ss-")

    def train():
        (Xb,) = tl()
        X = to_device(Xb, ed.device)
        x_embed, x_embed_rec, mask = ed.ed_model(X)
        return ed.loss_fn(x_embed, x_embed_rec, mask)

    def evaluate():
        (Xb,) = tl()
        ed.valid_running_loss = 0.0
        return ed._eval_step(Xb, 0)

    def ed_pretrain(make, val_split=0.25):
        def run():
            t = EncoderDecoderTrainer(encoder=make(), verbose=0, num_workers=0, device=_dev(device))
            t.pretrain(X_tab, n_epochs=1, batch_size=BS, val_split=val_split)
            return t
        return run

    def cd_pretrain(make, **ckw):
        def run():
            t = ContrastiveDenoisingTrainer(model=make(), preprocessor=tpa, verbose=0, num_workers=0,
                                            device=_dev(device), **ckw)
            t.pretrain(X_att, n_epochs=1, batch_size=BS, val_split=0.25)
            return t
        return run

    from pytorch_widedeep.models import SAINT, ContextAttentionMLP, FTTransformer, TabTransformer

    akw = dict(column_idx=tpa.column_idx, cat_embed_input=tpa.cat_embed_input, continuous_cols=CONT)

    def finetune():
        t = ed_pretrain(lambda: TabMlp(**kw, mlp_hidden_dims=[16, 8]))()
        tr = Trainer(WideDeep(deeptabular=t.ed_model.encoder), objective="binary", verbose=0, num_workers=0,
                     device=_dev(device))
        tr.fit(X_tab=X_tab, target=_label(df, "binary"), n_epochs=1, batch_size=BS)

    def ed_train_step():
        ed.train_running_loss = 0.0
        return ed._train_step(tl()[0], 0)

    cases = [("EncoderDecoderTrainer._train_step", ed_train_step),
             ("EncoderDecoderTrainer.pretrain", lambda: ed.pretrain(X_tab, n_epochs=2, batch_size=BS,
                                                                    val_split=0.25)),
             ("EncoderDecoderTrainer.save", lambda: ed.save(out, save_state_dict=True, save_optimizer=True)),
             ("ED TabResnet", ed_pretrain(lambda: TabResnet(**kw, blocks_dims=[16, 16]))),
             ("ED TabNet", ed_pretrain(lambda: TabNet(**kw, n_steps=2, step_dim=8, attn_dim=8, ghost_bn=False),
                                       val_split=None)),
             ("CD TabTransformer", cd_pretrain(lambda: TabTransformer(**akw, embed_continuous_method="standard",
                                                                       input_dim=8, n_heads=2, n_blocks=1),
                                               projection_head1_dims=[8, 16], projection_head2_dims=[8, 16])),
             ("CD SAINT contrastive", cd_pretrain(lambda: SAINT(**akw, input_dim=8, n_heads=2, n_blocks=1),
                                                  loss_type="contrastive")),
             ("CD FTTransformer denoising single", cd_pretrain(lambda: FTTransformer(**akw, input_dim=8, n_heads=2,
                                                                                     n_blocks=1),
                                                               loss_type="denoising", cat_mlp_type="single",
                                                               cont_mlp_type="single")),
             ("CD ContextAttentionMLP", cd_pretrain(lambda: ContextAttentionMLP(**akw, input_dim=8, n_blocks=1))),
             ("pretrained encoder fine-tuned", finetune)]
    return Workload("self_supervised", train=train, modules=[ed.ed_model], eval=evaluate, cases=cases, lr=1e-3)


def build_losses_metrics(torch, device):
    """The library's losses and metrics on device tensors, as the Trainer calls them: MSE, MSLE, RMSE, RMSLE,
    Quantile, Focal (binary and multiclass), BayesianSE, Tweedie, ZILN, L1, FocalR_L1 / MSE / RMSE (with
    label-distribution weights), Huber, InfoNCE, Denoising, EncoderDecoder; the multi-target losses; Accuracy,
    Precision, Recall, FBeta, F1, R2 and the ranking metrics; MultipleMetrics with torchmetrics."""
    _wd()
    import torchmetrics

    from pytorch_widedeep import losses as L
    from pytorch_widedeep import losses_multitarget as LM
    from pytorch_widedeep import metrics as M

    g = torch.Generator(device="cpu").manual_seed(0)
    B = 64

    def t(*shape, pos=False):
        x = torch.randn(*shape, generator=g)
        return (x.abs() + 0.1 if pos else x).to(device)

    yp, yt = t(B, 1), t(B, 1)
    ypos, ytpos = t(B, 1, pos=True), t(B, 1, pos=True)
    ybin = (torch.rand(B, 1, generator=g) > 0.5).float().to(device)
    ycls = torch.randint(0, 3, (B,), generator=g).to(device)
    logits3 = t(B, 3)
    cases = []
    for name, loss, a, b in [
        ("MSELoss", L.MSELoss(), yp, yt), ("MSLELoss", L.MSLELoss(), ypos, ytpos), ("RMSELoss", L.RMSELoss(), yp, yt),
        ("RMSLELoss", L.RMSLELoss(), ypos, ytpos), ("L1Loss", L.L1Loss(), yp, yt), ("HuberLoss", L.HuberLoss(), yp, yt),
        ("TweedieLoss", L.TweedieLoss(), ypos, ytpos), ("ZILNLoss", L.ZILNLoss(), t(B, 3), ytpos),
        ("QuantileLoss", L.QuantileLoss([0.1, 0.5, 0.9]), t(B, 3), yt),
        ("FocalLoss binary", L.FocalLoss(), torch.sigmoid(yp), ybin),
        ("FocalLoss multiclass", L.FocalLoss(alpha=0.25, gamma=2.0), logits3, ycls),
        ("BayesianSELoss", L.BayesianSELoss(), yp, yt),
        ("FocalR_L1Loss", L.FocalR_L1Loss(), yp, yt), ("FocalR_MSELoss", L.FocalR_MSELoss(), yp, yt),
        ("FocalR_RMSELoss tanh", L.FocalR_RMSELoss(activation_fn="tanh"), yp, yt),
        ("BayesianRegressionLoss", L.BayesianRegressionLoss(noise_tolerance=0.5), yp, yt),
    ]:
        loss = loss.to(device) if hasattr(loss, "to") else loss
        cases.append((name, lambda loss=loss, a=a, b=b: loss(a, b)))
    info = L.InfoNCELoss(temperature=0.1, reduction="mean")
    cases.append(("InfoNCELoss", lambda: info((t(B, 8), t(B, 8)))))
    den = L.DenoisingLoss(lambda_cat=1.0, lambda_cont=1.0, reduction="mean")
    cat_pairs = [(torch.randint(0, 5, (B,), generator=g).to(device), t(B, 5)),
                 (torch.randint(0, 3, (B,), generator=g).to(device), t(B, 3))]
    cont_pairs = [(t(B, 1), t(B, 1)), (t(B, 1), t(B, 1))]
    cases.append(("DenoisingLoss", lambda: den(cat_pairs, cont_pairs)))
    cases.append(("DenoisingLoss single", lambda: den(cat_pairs[0], (t(B, 2), t(B, 2)))))
    edl = L.EncoderDecoderLoss(eps=1e-9)
    mask = (torch.rand(B, 12, generator=g) > 0.5).float().to(device)
    cases.append(("EncoderDecoderLoss", lambda: edl(t(B, 12), t(B, 12), mask)))
    mtr = LM.MultiTargetRegressionLoss(weights=[1.0, 2.0], reduction="mean")
    cases.append(("MultiTargetRegressionLoss", lambda: mtr(t(B, 2), t(B, 2))))
    mtc = LM.MultiTargetClassificationLoss(binary_config=[0, (1, 2.0)], multiclass_config=[(2, 3)],
                                           weights=None, reduction="mean")
    y_mtc = torch.stack([ybin[:, 0], (torch.rand(B, generator=g) > 0.5).float().to(device),
                         ycls.float()], 1)
    cases.append(("MultiTargetClassificationLoss", lambda: mtc(t(B, 5), y_mtc)))
    mtrc = LM.MutilTargetRegressionAndClassificationLoss(regression_config=[0], binary_config=[1],
                                                         multiclass_config=[(2, 3)], reduction="mean")
    y_mix = torch.stack([yt[:, 0], ybin[:, 0], ycls.float()], 1)
    cases.append(("MutilTargetRegressionAndClassificationLoss", lambda: mtrc(t(B, 5), y_mix)))

    probs3 = torch.softmax(logits3, 1)
    sig = torch.sigmoid(yp)
    for name, metric, a, b in [
        ("Accuracy binary", M.Accuracy(), sig, ybin), ("Accuracy top2", M.Accuracy(top_k=2), probs3, ycls),
        ("Precision", M.Precision(), sig, ybin), ("Precision multiclass", M.Precision(average=True), probs3, ycls),
        ("Recall", M.Recall(), sig, ybin), ("Recall multiclass", M.Recall(average=False), probs3, ycls),
        ("FBetaScore", M.FBetaScore(beta=2), sig, ybin), ("F1Score multiclass", M.F1Score(), probs3, ycls),
        ("R2Score", M.R2Score(), yp, yt),
        ("NDCG_at_k", M.NDCG_at_k(n_cols=8, k=4), yp, ytpos), ("BinaryNDCG_at_k", M.BinaryNDCG_at_k(n_cols=8, k=4),
                                                                sig, ybin),
        ("MAP_at_k", M.MAP_at_k(n_cols=8, k=4), sig, ybin),
        ("HitRatio_at_k", M.HitRatio_at_k(n_cols=8, k=4), sig, ybin),
        ("Precision_at_k", M.Precision_at_k(n_cols=8, k=4), sig, ybin),
        ("Recall_at_k", M.Recall_at_k(n_cols=8, k=4), sig, ybin),
    ]:
        cases.append((name, lambda metric=metric, a=a, b=b: (metric.reset(), metric(a, b))))
    mm = M.MultipleMetrics([M.Accuracy, M.Precision, torchmetrics.AUROC(task="binary").to(device),
                            torchmetrics.Recall(task="binary").to(device)], prefix="val_")
    cases.append(("MultipleMetrics", lambda: (mm.reset(), mm(sig, ybin))))
    return Workload("losses_metrics", cases=cases)


def build_multitarget(torch, device):
    """objective='multitarget' with the library's multi-target losses as custom_loss_function: regression + binary
    + multiclass heads from one TabMlp (pred_dim 5), fit / predict; and a qregression (quantile) model."""
    _wd()
    import numpy as np

    from pytorch_widedeep import Trainer
    from pytorch_widedeep.losses_multitarget import MutilTargetRegressionAndClassificationLoss
    from pytorch_widedeep.models import TabMlp, WideDeep

    df = _frame()
    tp, X_tab = _tab()
    target = np.stack([df["target"].values, df["label"].values, df["cls"].values], 1).astype("float32")
    model = WideDeep(deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                        continuous_cols=CONT, mlp_hidden_dims=[16, 8]), pred_dim=5)
    loss = MutilTargetRegressionAndClassificationLoss(regression_config=[0], binary_config=[1],
                                                      multiclass_config=[(2, 3)], reduction="mean")

    def quantile(tr):
        m = WideDeep(deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                        continuous_cols=CONT, mlp_hidden_dims=[16]), pred_dim=7)
        t = Trainer(m, objective="quantile", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_tab=X_tab, target=_label(df, "regression"), n_epochs=1, batch_size=BS, val_split=0.25)
        return t.predict(X_tab=X_tab, batch_size=BS)

    return _trainer_workload(torch, device, "multitarget", model, "multitarget", {"X_tab": X_tab}, target,
                             {"custom_loss_function": loss}, fit_kwargs={"val_split": None}, predict=False,
                             proba=True,
                             extra_cases=[("qregression quantile", quantile)])


def build_load_from_folder(torch, device):
    """TrainerFromFolder over files: a CSV read by TabFromFolder / WideFromFolder (the chunk preprocessors fitted
    chunk by chunk), text files by TextFromFolder, images by ImageFromFolder, WideDeepDatasetFromFolder and its
    loaders; fit with validation, predict from a test loader; the library's DataLoaderImbalanced on a Trainer."""
    _wd()
    import pandas as pd
    from torch.utils.data import DataLoader

    from pytorch_widedeep import Trainer
    from pytorch_widedeep.dataloaders import DataLoaderImbalanced
    from pytorch_widedeep.load_from_folder import (ImageFromFolder, TabFromFolder, TextFromFolder,
                                                   WideDeepDatasetFromFolder, WideFromFolder)
    from pytorch_widedeep.models import BasicRNN, TabMlp, Vision, Wide, WideDeep
    from pytorch_widedeep.preprocessing import (ChunkTabPreprocessor, ChunkTextPreprocessor,
                                                ChunkWidePreprocessor, ImagePreprocessor)
    from pytorch_widedeep.training import TrainerFromFolder

    df = _frame()
    root = tempfile.mkdtemp(prefix="wd-folder-")
    txt_dir = os.path.join(root, "texts")
    os.makedirs(txt_dir)
    for i, s in enumerate(df["review"]):
        with open(os.path.join(txt_dir, "t_%d.txt" % i), "w") as fh:
            fh.write(s)
    dff = df.assign(text_file=["t_%d.txt" % i for i in range(len(df))])
    dff.to_csv(os.path.join(root, "data.csv"), index=False)
    n_chunks, chunk = 3, len(df) // 3
    tab_p = ChunkTabPreprocessor(n_chunks=n_chunks, cat_embed_cols=CAT, continuous_cols=CONT, verbose=0)
    wide_p = ChunkWidePreprocessor(wide_cols=CAT, n_chunks=n_chunks)
    text_p = ChunkTextPreprocessor(text_col="text_file", n_chunks=n_chunks, root_dir=txt_dir, max_vocab=100,
                                   min_freq=1, maxlen=10, n_cpus=1, verbose=0)
    for ch in pd.read_csv(os.path.join(root, "data.csv"), chunksize=chunk):
        tab_p.fit(ch)
        wide_p.fit(ch)
        text_p.fit(ch)
    img_p = ImagePreprocessor(img_col="img", img_path=_img_dir(), width=24, height=24, verbose=0)
    img_p.fit(df)
    tab_ff = TabFromFolder(fname="data.csv", directory=root, target_col="label", preprocessor=tab_p,
                           text_col="text_file", img_col="img")
    wide_ff = WideFromFolder(fname="data.csv", directory=root, target_col="label", preprocessor=wide_p,
                             text_col="text_file", img_col="img")
    text_ff = TextFromFolder(preprocessor=text_p)
    img_ff = ImageFromFolder(directory=_img_dir(), preprocessor=img_p)
    ds = WideDeepDatasetFromFolder(n_samples=len(df), tab_from_folder=tab_ff, wide_from_folder=wide_ff,
                                   text_from_folder=text_ff, img_from_folder=img_ff)
    loader = DataLoader(ds, batch_size=BS, shuffle=True)
    dff.head(BS).to_csv(os.path.join(root, "test.csv"), index=False)
    eval_ds = WideDeepDatasetFromFolder(n_samples=BS, tab_from_folder=TabFromFolder(fname="test.csv", reference=tab_ff),
                                        wide_from_folder=TabFromFolder(fname="test.csv", reference=wide_ff),
                                        reference=ds)
    test_ds = WideDeepDatasetFromFolder(
        n_samples=BS, tab_from_folder=TabFromFolder(fname="test.csv", reference=tab_ff, ignore_target=True),
        wide_from_folder=TabFromFolder(fname="test.csv", reference=wide_ff, ignore_target=True), reference=ds)
    model = WideDeep(wide=Wide(input_dim=wide_p.wide_dim),
                     deeptabular=TabMlp(column_idx=tab_p.column_idx, cat_embed_input=tab_p.cat_embed_input,
                                        continuous_cols=CONT, mlp_hidden_dims=[16]),
                     deeptext=BasicRNN(vocab_size=len(text_p.vocab.itos), embed_dim=8, hidden_dim=8, n_layers=1),
                     deepimage=Vision(channel_sizes=[8, 16], kernel_sizes=3, strides=1))
    trainer = TrainerFromFolder(model, objective="binary", verbose=0, num_workers=0, device=_dev(device))

    def fit_folder():
        trainer.fit(train_loader=loader, eval_loader=DataLoader(eval_ds, batch_size=BS), n_epochs=1)

    def predict_folder():
        return trainer.predict(test_loader=DataLoader(test_ds, batch_size=BS))

    def imbalanced():
        tp, X_tab = _tab()
        y = (_frame()["cls"].values == 0).astype(int)
        t = Trainer(WideDeep(deeptabular=TabMlp(column_idx=tp.column_idx, cat_embed_input=tp.cat_embed_input,
                                                continuous_cols=CONT, mlp_hidden_dims=[16])),
                    objective="binary", verbose=0, num_workers=0, device=_dev(device))
        t.fit(X_tab=X_tab, target=y, n_epochs=1, batch_size=BS,
              train_dataloader=DataLoaderImbalanced(batch_size=BS, num_workers=0, oversample_mul=2))

    cases = [("TrainerFromFolder.fit", fit_folder), ("TrainerFromFolder.predict", predict_folder),
             ("TrainerFromFolder.predict_proba", lambda: trainer.predict_proba(test_loader=DataLoader(
                 test_ds, batch_size=BS))),
             ("DataLoaderImbalanced fit", imbalanced)]
    return Workload("load_from_folder", cases=cases)


WORKLOADS = [build_wide_tabmlp, build_tabresnet_regression, build_tabnet, build_attention_models,
             build_multiclass_embeddings, build_text_rnns, build_image_vision, build_hf_text, build_model_fusion,
             build_rec_models, build_bayesian, build_self_supervised, build_losses_metrics, build_multitarget,
             build_load_from_folder]
