"""Hand-written argument recipes (issue #9): ops whose sync depends on the form of an argument.

Data for ``catalog.sweep --recipes``; the recipes themselves are built by ``synth.build``.
"""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Tuple

from torchsync_lint.catalog.synth import Call

# ---------------------------------------------------------------------------------------------
# hand-written argument recipes (issue #9): ops whose sync depends on the form of an argument
# (GPU tensor, CPU tensor, Python list; a window or none; sizes given or not), which the generic
# synthesiser above cannot build or measures in one form only. One place, data only: each
# callable has its parameters (positional order; a module class: those of ``forward``), the
# defaults of its literal parameters, the constructor arguments of a module class, and its variants.
#
# A variant is (label, form, call): the call's recipes, with ``("v", values, dtype, where)`` a
# tensor of these values on the device (``where`` "dev") or on the host ("cpu"). ``form`` says,
# per parameter that varies, what the static rules can check in user code: ``cuda``/``cpu`` (a
# tensor there, optionally ``:1d``/``:2d`` its rank and ``:int32``/``:int64`` its dtype), ``list``
# (a Python list of numbers), ``number`` (a Python int/float), ``absent`` (not passed, or None),
# ``=<literal>`` (this literal value, e.g. ``='sum'``, ``=False``). The sweep writes the form next
# to each measured row (``"form"``) and the parameters and defaults into the entry (``"recipe"``),
# so the rules match a call against the measured forms without importing torch.


class Recipe(NamedTuple):
    params: Tuple[str, ...]
    defaults: Dict[str, Any]
    variants: Tuple[Tuple[str, Dict[str, str], Call], ...]
    # a module class: constructor keywords (recipes); a variant's own are its ``init.<name>`` keywords,
    # and its form names them ``init.<name>`` too (the rules cannot see them at the call)
    init: Tuple[Tuple[str, tuple], ...] = ()
    method: bool = False  # a torch.Tensor method: the first recipe is the tensor itself


def _v(values, dtype: str = "int64", where: str = "dev") -> tuple:
    return ("v", values, dtype, where)


def _s(value) -> tuple:
    return ("s", value)


def _list(values) -> tuple:
    return ("L", tuple(("s", v) for v in values))


def _call(*args, **kwargs) -> Call:
    return Call(tuple(args), tuple(kwargs.items()))


def _ctc_variants(kind: str) -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    """``kind``: "functional" (F.ctc_loss, reduction a string), "torch" (torch.ctc_loss, reduction an
    int, given positionally with blank), "module" (nn.CTCLoss: reduction a constructor keyword)."""
    # T=8 frames, N=2 sequences, C=5 classes (blank 0), targets of lengths 3 and 2
    lp = ("t", (8, 2, 5), "f")
    padded, concat = [[1, 2, 3], [4, 1, 0]], [1, 2, 3, 4, 1]
    il, tl = [8, 8], [3, 2]
    lengths = {
        "cuda": (_v(il), _v(tl)),
        "cpu": (_v(il, where="cpu"), _v(tl, where="cpu")),
        "list": (_list(il), _list(tl)),
    }
    # cuDNN's form: int32 targets concatenated on the host, int32 lengths, blank 0, every input length T
    cudnn = {
        "cpu": (_v(il, "int32", "cpu"), _v(tl, "int32", "cpu")),
        "list": (_list(il), _list(tl)),
        "cuda": (_v(il, "int32"), _v(tl, "int32")),
    }
    names = {"mean": 1, "sum": 2, "none": 0} if kind == "torch" else {"mean": "mean", "sum": "sum", "none": "none"}
    out = []

    def add(label, targets, tform, a, b, how, reduction):
        form = {"targets": tform, "input_lengths": how, "target_lengths": how}
        value = names[reduction]
        if kind == "module":
            form["init.reduction"] = f"={value!r}"
            kw = {"init.reduction": _s(value)} if reduction != "mean" else {}
            out.append((label, form, _call(lp, targets, a, b, **kw)))
        elif kind == "torch":
            form["reduction"] = f"={value!r}"
            out.append((label, form, _call(lp, targets, a, b, _s(0), _s(value), _s(False))))
        else:
            form["reduction"] = f"={value!r}"
            kw = {"reduction": _s(value)} if reduction != "mean" else {}
            out.append((label, form, _call(lp, targets, a, b, **kw)))

    for targets, tform, tvalue in (("2d", "cuda:2d", _v(padded)), ("1d", "cuda:1d", _v(concat))):
        for how, (a, b) in lengths.items():
            label = f"lengths={how}" if targets == "2d" else f"targets=1d,lengths={how}"
            add(label, tvalue, tform, a, b, how, "mean")
    for how in ("cpu", "list"):
        a, b = lengths[how]
        for red in ("sum", "none"):
            add(f"lengths={how},reduction={red}", _v(padded), "cuda:2d", a, b, how, red)
    for how, (a, b) in cudnn.items():
        hform = how + (":int32" if how != "list" else "")
        for red in ("mean", "sum", "none"):
            if how == "cpu" and red != "mean":
                continue  # refused: "Expected all tensors to be on the same device"
            label = f"cudnn:targets=cpu-int32,lengths={how}" + (f",reduction={red}" if red != "mean" else "")
            add(label, _v(concat, "int32", "cpu"), "cpu:1d:int32", a, b, hform, red)
    a, b = cudnn["cuda"]
    add("targets=cuda-int32,lengths=cuda-int32", _v(concat, "int32"), "cuda:1d:int32", a, b, "cuda:int32", "mean")
    if kind == "torch":  # four arguments: the binding's default reduction (measured apart)
        a, b = cudnn["list"]
        out.append(("cudnn:targets=cpu-int32,lengths=list,reduction=default",
                    {"targets": "cpu:1d:int32", "input_lengths": "list", "target_lengths": "list",
                     "reduction": "absent"}, _call(lp, _v(concat, "int32", "cpu"), a, b)))
        a, b = lengths["list"]
        out.append(("lengths=list,reduction=default",
                    {"targets": "cuda:2d", "input_lengths": "list", "target_lengths": "list", "reduction": "absent"},
                    _call(lp, _v(padded), a, b)))
    return tuple(out)


def _embedding_bag_variants(functional: bool, int_mode: bool = False) -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    """F.embedding_bag(input, weight, offsets, ...) or, for the module, forward(input, offsets,
    per_sample_weights) (the weight is the module's). torch.embedding_bag has its own table."""
    w = ("t", (10, 4), "f")
    two_d, one_d = _v([[1, 2, 3], [4, 5, 6]]), _v([1, 2, 3, 4, 5, 6])
    offsets = {"cuda": _v([0, 3]), "cpu": _v([0, 3], where="cpu")}  # a Python list is refused
    psw = ("t", (2, 3), "f")
    out = []

    def add(label, form, input_, offs=None, **kw):
        if functional:
            args = (input_, w) + ((offs,) if offs is not None else ())
        else:
            args = (input_,) + ((offs,) if offs is not None else ())
        out.append((label, form, _call(*args, **kw)))

    base = {"per_sample_weights": "absent"}
    if functional:
        base.update(mode="='mean'", padding_idx="absent", max_norm="absent")
    for mode in ("sum", "mean", "max"):
        form = dict(base, input="cuda:2d", offsets="absent")
        kw = {}
        if functional:
            form["mode"] = f"='{mode}'"
            kw["mode"] = _s(mode)
            add(f"input=2d,mode={mode}", form, two_d, **kw)
        elif mode == "mean":
            add("input=2d", form, two_d)
        form = dict(base, input="cuda:1d", offsets="cuda")
        if functional:
            form["mode"] = f"='{mode}'"
            add(f"input=1d,offsets=cuda,mode={mode}", form, one_d, offsets["cuda"], **kw)
        elif mode == "mean":
            add("input=1d,offsets=cuda", form, one_d, offsets["cuda"])
    form = dict(base, input="cuda:1d", offsets="cpu")
    add("input=1d,offsets=cpu", form, one_d, offsets["cpu"])
    if functional:
        form = dict(base, input="cuda:2d", offsets="absent", per_sample_weights="cuda", mode="='sum'")
        add("input=2d,per_sample_weights=cuda,mode=sum", form, two_d, per_sample_weights=psw, mode=_s("sum"))
        form = dict(base, input="cuda:2d", offsets="absent", padding_idx="number")
        add("input=2d,padding_idx=0", form, _v([[0, 2, 3], [4, 0, 0]]), padding_idx=_s(0))
        form = dict(base, input="cuda:2d", offsets="absent", max_norm="number")
        add("input=2d,max_norm=1.0", form, two_d, max_norm=_s(1.0))
    return tuple(out)


def _stft_variants(method: bool) -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    x = ("t", (2, 64), "f")
    win = {"cuda": ("hann", 16, "dev"), "cpu": ("hann", 16, "cpu")}
    out = []
    base = {"window": "absent", "center": "=True", "return_complex": "=True", "onesided": "absent"}

    def add(label, form, **kw):
        kw.setdefault("return_complex", _s(True))
        out.append((label, dict(base, **form), _call(x, _s(16), **kw)))

    add("window=none", {})
    add("window=cuda", {"window": "cuda"}, window=win["cuda"])
    add("window=cpu", {"window": "cpu"}, window=win["cpu"])
    add("window=cuda,center=False", {"window": "cuda", "center": "=False"}, window=win["cuda"], center=_s(False))
    add("window=cuda,return_complex=False", {"window": "cuda", "return_complex": "=False"}, window=win["cuda"],
        return_complex=_s(False))
    add("window=cuda,onesided=False", {"window": "cuda", "onesided": "=False"}, window=win["cuda"], onesided=_s(False))
    return tuple(out)


def _istft_variants(method: bool) -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    # the spectrum of a (2, 64) signal, n_fft 16, hop 4: 9 (one-sided) or 16 bins, 17 frames
    half, full = ("t", (2, 9, 17), "c"), ("t", (2, 16, 17), "c")
    win = {"cuda": ("hann", 16, "dev"), "cpu": ("hann", 16, "cpu")}
    base = {"window": "absent", "center": "=True", "length": "absent", "onesided": "absent"}
    out = []

    def add(label, form, spec=half, **kw):
        out.append((label, dict(base, **form), _call(spec, _s(16), **kw)))

    add("window=none", {})
    add("window=cuda", {"window": "cuda"}, window=win["cuda"])
    add("window=cpu", {"window": "cpu"}, window=win["cpu"])
    add("window=cuda,length=int", {"window": "cuda", "length": "number"}, window=win["cuda"], length=_s(64))
    add("window=none,length=int", {"length": "number"}, length=_s(64))
    add("window=none,center=False", {"center": "=False"}, center=_s(False))
    add("window=cuda,onesided=False", {"window": "cuda", "onesided": "=False"}, full, window=win["cuda"],
        onesided=_s(False), return_complex=_s(True))
    return tuple(out)


def _quantile_variants() -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    x = ("t", (4, 8), "f")
    return (
        ("q=float", {"q": "number"}, _call(x, _s(0.5))),
        ("q=float,dim=1", {"q": "number"}, _call(x, _s(0.5), _s(1))),
        ("q=cuda", {"q": "cuda:1d"}, _call(x, _v([0.25, 0.75], "float32"))),
        ("q=cuda,dim=1", {"q": "cuda:1d"}, _call(x, _v([0.25, 0.75], "float32"), _s(1))),
        ("q=cpu", {"q": "cpu:1d"}, _call(x, _v([0.25, 0.75], "float32", "cpu"))),
    )


def _multinomial_variants() -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    p = ("t", (4, 8), "f")
    out = []
    for n in (1, 4):
        for rep in (False, True):
            form = {"num_samples": f"={n}" if n == 1 else "number", "replacement": f"={rep}"}
            out.append((f"num_samples={n},replacement={rep}", form, _call(p, _s(n), _s(rep))))
    return tuple(out)


def _pack_variants() -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    x = ("t", (5, 3, 4), "f")
    out = []
    for enforce, lengths in ((True, [5, 3, 2]), (False, [3, 5, 2])):
        for how, rec in (("cuda", _v(lengths)), ("cpu", _v(lengths, where="cpu")), ("list", _list(lengths))):
            form = {"lengths": how, "enforce_sorted": f"={enforce}"}
            out.append((f"lengths={how},enforce_sorted={enforce}", form,
                        _call(x, rec, enforce_sorted=_s(enforce))))
    return tuple(out)


def _repeat_interleave_variants() -> Tuple[Tuple[str, Dict[str, str], Call], ...]:
    x = ("t", (4, 3), "f")
    reps = [1, 2, 0, 3]
    out = []
    for how, rec in (("cuda", _v(reps)), ("cpu", _v(reps, where="cpu"))):
        out.append((f"repeats={how}:1d", {"repeats": how + ":1d", "output_size": "absent"},
                    _call(x, rec, dim=_s(0))))
        out.append((f"repeats={how}:1d,output_size=int", {"repeats": how + ":1d", "output_size": "number"},
                    _call(x, rec, dim=_s(0), output_size=_s(6))))
    return tuple(out)


_CTC_PARAMS = ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity")
_EB_PARAMS = ("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
              "per_sample_weights", "include_last_offset", "padding_idx")
_STFT_PARAMS = ("input", "n_fft", "hop_length", "win_length", "window", "center", "pad_mode", "normalized",
                "onesided", "return_complex")
_ISTFT_PARAMS = ("input", "n_fft", "hop_length", "win_length", "window", "center", "normalized", "onesided",
                 "length", "return_complex")


def _method(r: Recipe) -> Recipe:
    """The Tensor-method twin of a function recipe: the same calls, without the first parameter."""
    return r._replace(params=r.params[1:], method=True)


_QUANTILE = Recipe(("input", "q", "dim", "keepdim"), {}, _quantile_variants())
_MULTINOMIAL = Recipe(("input", "num_samples", "replacement"), {"replacement": False}, _multinomial_variants())
_STFT = Recipe(_STFT_PARAMS, {"center": True, "onesided": None, "return_complex": None}, _stft_variants(False))
_ISTFT = Recipe(_ISTFT_PARAMS, {"center": True, "onesided": None}, _istft_variants(False))
_REPEAT = Recipe(("input", "repeats", "dim"), {}, _repeat_interleave_variants())


def _torch_embedding_bag() -> Recipe:
    """torch.embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode (0 sum, 1 mean, 2 max),
    sparse, per_sample_weights, include_last_offset, padding_idx): 1-D indices and offsets always."""
    w, idx = ("t", (10, 4), "f"), _v([1, 2, 3, 4, 5, 6])
    out = []
    for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
        form = {"offsets": "cuda", "mode": f"={mode}", "per_sample_weights": "absent"}
        out.append((f"offsets=cuda,mode={name}", form, _call(w, idx, _v([0, 3]), _s(False), _s(mode))))
    form = {"offsets": "cpu", "mode": "=0", "per_sample_weights": "absent"}
    out.append(("offsets=cpu,mode=sum", form, _call(w, idx, _v([0, 3], where="cpu"), _s(False), _s(0))))
    form = {"offsets": "cuda", "mode": "=0", "per_sample_weights": "cuda"}
    out.append(("offsets=cuda,per_sample_weights=cuda,mode=sum", form,
                _call(w, idx, _v([0, 3]), _s(False), _s(0), _s(False), ("t", (6,), "f"))))
    return Recipe(("weight", "indices", "offsets", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
                   "include_last_offset", "padding_idx"), {"mode": 0}, tuple(out))


ARGUMENT_RECIPES: Dict[str, Recipe] = {
    "torch.nn.functional.ctc_loss": Recipe(_CTC_PARAMS, {"blank": 0, "reduction": "mean"}, _ctc_variants("functional")),
    # no default for reduction: the four-argument call behaves as its own form (measured)
    "torch.ctc_loss": Recipe(_CTC_PARAMS, {"blank": 0}, _ctc_variants("torch")),
    "torch.nn.CTCLoss": Recipe(_CTC_PARAMS[:4], {"init.reduction": "mean"}, _ctc_variants("module")),
    "torch.nn.functional.embedding_bag": Recipe(_EB_PARAMS, {"mode": "mean"}, _embedding_bag_variants(True)),
    "torch.embedding_bag": _torch_embedding_bag(),
    "torch.nn.EmbeddingBag": Recipe(("input", "offsets", "per_sample_weights"), {}, _embedding_bag_variants(False),
                                    init=(("num_embeddings", _s(10)), ("embedding_dim", _s(4)))),
    "torch.stft": _STFT,
    "torch.Tensor.stft": _method(_STFT),
    "torch.istft": _ISTFT,
    "torch.Tensor.istft": _method(_ISTFT),
    "torch.quantile": _QUANTILE,
    "torch.nanquantile": _QUANTILE,
    "torch.Tensor.quantile": _method(_QUANTILE),
    "torch.Tensor.nanquantile": _method(_QUANTILE),
    "torch.multinomial": _MULTINOMIAL,
    "torch.Tensor.multinomial": _method(_MULTINOMIAL),
    "torch.nn.utils.rnn.pack_padded_sequence": Recipe(("input", "lengths", "batch_first", "enforce_sorted"),
                                                      {"enforce_sorted": True}, _pack_variants()),
    "torch.repeat_interleave": _REPEAT,
    "torch.Tensor.repeat_interleave": _method(_REPEAT),
}
