"""Small valid arguments for a torch callable, synthesised from its stub or signature.

Imports torch only inside functions that get it passed; the static lint path never loads this.

An argument is a *recipe* (a small tuple) rather than a value, so that every measured call gets
fresh tensors (in-place ops) and the variant can be written down in the catalog:
``("t", shape, kind)`` a tensor on the device (kind f float, l long in [0, 1], b bool, box boxes),
``("s", value)`` a Python value, ``("L", [recipes])`` a list, ``("dtype"|"device"|"layout", x)``;
the hand-written recipes at the end add ``("v", values, dtype, where)`` (a tensor of these values)
and ``("hann", n, where)`` (a window), ``where`` "dev" or "cpu".
Tensors are built with device-side factories only: ``torch.tensor(list, device=cuda)`` itself syncs.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import os
import re
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

# Parameter names that take integer indices (values 0/1, valid for every size >= 2).
LONG_NAMES = frozenset(
    "index indices target targets labels label offsets lengths input_lengths target_lengths repeats idx idxs "
    "counts batch src_index tensor_indices dims_index".split()
)
BOOL_NAMES = frozenset("mask condition attn_mask key_padding_mask".split())
BOX_NAMES = frozenset("boxes boxes1 boxes2 rois".split())
# Parameters without an annotation (docstring signatures) that take a tensor.
UNTYPED_TENSOR_NAMES = frozenset("input self other x A B tensor a b weight bias target mask indices index boxes scores "
                                 "vec mat mat1 mat2 y".split())
# Integer parameters by name; the rest get 1.
INT_BY_NAME = {
    "dim": 0, "dim0": 0, "dim1": 1, "axis": 0, "diagonal": 0, "offset": 0, "padding": 0, "start": 0,
    "n": 4, "size": 4, "k": 2, "num_classes": 4, "minlength": 4, "steps": 4, "length": 4, "bins": 4,
    "num_samples": 2, "chunks": 2, "sections": 2, "split_size": 2, "split_size_or_sections": 2, "end": 4,
    "kernel_size": 2, "upscale_factor": 2, "downscale_factor": 2, "groups": 1, "repeats": 2, "output_size": 2,
    "num_groups": 2, "window_length": 4, "n_fft": 4, "hop_length": 1, "win_length": 4, "high": 4, "low": 0,
    "row": 4, "col": 4, "m": 4, "shifts": 1, "N": 4, "num_features": 4, "normalized_shape": 4,
}
FLOAT_BY_NAME = {"p": 0.5, "iou_threshold": 0.5, "spatial_scale": 1.0, "eps": 1e-5, "momentum": 0.1,
                 "q": 0.5, "alpha": 1.0, "beta": 1.0, "value": 2.0, "threshold": 0.5}

# Profiles: the shape of a generic tensor and of a `size` argument. Tried in order until a call runs.
PROFILES: Tuple[Dict[str, Any], ...] = (
    {"name": "mat", "shape": (4, 4)},
    {"name": "vec", "shape": (4,)},
    {"name": "img", "shape": (2, 4, 8, 8), "weight": (4, 4, 3, 3), "bias": (4,)},
    {"name": "batch", "shape": (2, 4, 4)},
    {"name": "seq", "shape": (4, 2, 4)},
    {"name": "int", "shape": (4, 4), "kind": "l"},
    {"name": "intvec", "shape": (4,), "kind": "l"},
    {"name": "signal", "shape": (2, 4, 8), "weight": (4, 4, 3), "bias": (4,)},
    {"name": "volume", "shape": (2, 4, 4, 4, 4), "weight": (4, 4, 3, 3, 3), "bias": (4,)},
    {"name": "complex", "shape": (4, 4), "kind": "c"},
    {"name": "xyz", "shape": (4, 3)},
    {"name": "scalar", "shape": ()},
)
# Optional parameters filled in a second round when the required ones alone do not run
# (clamp needs min or max, interpolate a scale, a distribution probs or logits).
OPTIONAL_FILL = {"min": ("s", 0.0), "covariance_matrix": ("t", (4, 4), "spd"), "scale_factor": ("s", 2.0),
                 "probs": None, "output_ratio": ("s", 0.5),
                 "equation": ("s", "ij->ji")}

# Optional arguments whose presence changes whether a call syncs, given in their own variants
# (the other parameters keep their defaults). A tuple gives several parameters together.
OPTIONAL_VARIANTS: Tuple[Tuple[Tuple[str, Any], ...], ...] = (
    (("num_classes", 4),),
    (("minlength", 4),),
    (("min", 0.0), ("max", 1.0)),
    (("output_size", "from_result"),),
    (("validate_args", True),),
    (("validate_args", False),),
    (("replacement", True),),
    (("error_if_nonfinite", True),),
    (("as_tuple", True),),
    (("sorted", False),),
    (("return_counts", True),),
    (("non_blocking", True),),
    (("check_errors", True),),
    (("size", 4),),
)


class Param(NamedTuple):
    name: str
    ann: str  # annotation text, "" when unknown
    required: bool
    kw_only: bool


class Signature(NamedTuple):
    params: Tuple[Param, ...]


# ---------------------------------------------------------------------------------------------
# signatures from stubs, inspect, or the docstring's first line


def _stub_index(torch) -> Dict[str, List[Signature]]:
    """'torch.add', 'torch.Tensor.add', 'torch._C._nn.one_hot' -> overloads, from torch's .pyi files."""
    root = os.path.dirname(torch.__file__)
    files = {
        "torch": os.path.join(root, "_C", "_VariableFunctions.pyi"),
        "torch._C._nn": os.path.join(root, "_C", "_nn.pyi"),
        "torch.nn.functional": os.path.join(root, "nn", "functional.pyi"),
        "torch._C": os.path.join(root, "_C", "__init__.pyi"),
    }
    out: Dict[str, List[Signature]] = {}
    for prefix, path in files.items():
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                out.setdefault(f"{prefix}.{node.name}", []).append(_from_ast(node, False))
            elif isinstance(node, ast.ClassDef) and node.name == "TensorBase":
                for f in node.body:
                    if isinstance(f, ast.FunctionDef):
                        out.setdefault(f"torch.Tensor.{f.name}", []).append(_from_ast(f, True))
    return out


def _from_ast(fn: ast.FunctionDef, method: bool) -> Signature:
    a = fn.args
    pos = a.posonlyargs + a.args
    if method and pos:
        pos = pos[1:]
    n_default = len(a.defaults)
    params = [Param(p.arg, ast.unparse(p.annotation) if p.annotation else "", i < len(pos) - n_default, False)
              for i, p in enumerate(pos)]
    if a.vararg is not None:  # size: *size -> one required positional shape
        params.append(Param("*" + a.vararg.arg, ast.unparse(a.vararg.annotation) if a.vararg.annotation else "", True, False))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(Param(p.arg, ast.unparse(p.annotation) if p.annotation else "", d is None, True))
    return Signature(tuple(params))


_DOC_SIG = re.compile(r"^\s*[\w.]+\((.*?)\)\s*(->|$)", re.S)


def _from_doc(obj) -> Optional[Signature]:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    m = _DOC_SIG.match(doc.split("\n\n")[0])
    if not m:
        return None
    params, kw = [], False
    for part in [p.strip() for p in m.group(1).split(",") if p.strip()]:
        if part in ("*", "/"):
            kw = kw or part == "*"
            continue
        name, _, default = part.partition("=")
        name = name.split(":")[0].strip().lstrip("*")
        if name.isidentifier():
            params.append(Param(name, "", not default, kw))
    return Signature(tuple(params))


def signatures(torch, stubs, qualname: str, obj, method: bool) -> List[Signature]:
    keys = [qualname]
    if qualname.startswith(("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")):
        keys.append("torch._C._nn." + qualname.rsplit(".", 1)[1])
    for key in keys:
        if key in stubs:
            return stubs[key]
    try:
        sig = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    except (TypeError, ValueError):
        doc = _from_doc(obj)
        return [doc] if doc else []
    params = []
    for i, p in enumerate(sig.parameters.values()):
        if (method or inspect.isclass(obj)) and i == 0 and p.name in ("self", "cls"):
            continue
        if p.kind is p.VAR_KEYWORD:
            continue
        ann = "" if p.annotation is p.empty else (p.annotation if isinstance(p.annotation, str) else
                                                  getattr(p.annotation, "__name__", None) or str(p.annotation))
        if p.kind is p.VAR_POSITIONAL:
            params.append(Param("*" + p.name, ann, p.name in ("size", "tensors", "args"), False))
            continue
        params.append(Param(p.name, ann, p.default is p.empty, p.kind is p.KEYWORD_ONLY))
    return [Signature(tuple(params))]


# ---------------------------------------------------------------------------------------------
# recipes


def _tensor_kind(name: str) -> str:
    if name in LONG_NAMES:
        return "l"
    if name in BOOL_NAMES:
        return "b"
    if name in BOX_NAMES:
        return "box"
    return "f"


def recipe_for(p: Param, profile: Dict[str, Any]) -> Optional[tuple]:
    """A value for a parameter, from its annotation and name; None when we cannot make one."""
    name, ann = p.name.lstrip("*"), p.ann.replace("_int", "int").replace("_float", "float").replace("_bool", "bool")
    shape = profile["shape"]
    if p.name.startswith("*"):
        if name == "args":
            return ("*", (("t", shape, profile.get("kind", "f")),))
        if "Tensor" in ann or name in ("tensors", "operands"):
            return ("*", (("t", shape, "f"), ("t", shape, "f")))
        return ("*", (("s", 4),) * max(1, len(shape)))
    if "Callable" in ann or name in ("fn", "func", "function", "callback", "hook"):
        return None
    if name in ("dtype",):
        return ("dtype", "float32")
    if name == "device" or "Device" in ann:
        return ("device", None)
    if name == "layout":
        return ("layout", "strided")
    if re.search(r"(Sequence|List|list|tuple|Tuple)\[Tensor", ann) or name in ("tensors", "operands", "params"):
        return ("L", (("t", shape, "f"), ("t", shape, "f")))
    if "Tensor" in ann or (not ann and name in UNTYPED_TENSOR_NAMES):
        if name in ("weight", "bias") and name in profile:
            return ("t", profile[name], "f")
        if name in BOX_NAMES and profile["name"] == "img":
            return ("t", (2, 5), "roi")
        if name in ("scores", "idxs"):
            return ("t", (4,), "l" if name == "idxs" else "f")
        if name == "scores":
            return ("t", (4,), "f")
        kind = _tensor_kind(name)
        if kind == "l" and name.startswith(("target", "label")) and profile["name"] == "mat":
            return ("t", shape[:1], "l")  # class indices for (N, C) scores
        return ("t", shape, profile.get("kind", "f") if kind == "f" else kind)
    if name in INT_BY_NAME and name != "size" and ("int" in ann or "_size" in ann) and "Tensor" not in ann:
        return ("s", INT_BY_NAME[name])
    if "_size" in ann or re.search(r"(Sequence|List|tuple|Tuple)\[int", ann) or name in ("shape", "size", "sizes", "stride"):
        if name in ("dims", "dim") and ("Sequence" in ann or "tuple" in ann or "_size" in ann):
            return ("s", (0,))
        return ("s", tuple(shape) or (4,))
    if "bool" in ann and "int" not in ann:
        return ("s", False)
    if ("int" in ann or "SymInt" in ann) and "float" not in ann:
        return ("s", INT_BY_NAME.get(name, 1))
    if "float" in ann or "Number" in ann or "complex" in ann:
        return ("s", FLOAT_BY_NAME.get(name, float(INT_BY_NAME.get(name, 1))))
    if name in INT_BY_NAME:
        return ("s", INT_BY_NAME[name])
    if name in FLOAT_BY_NAME:
        return ("s", FLOAT_BY_NAME[name])
    if "str" in ann or "Dimname" in ann or "Generator" in ann:
        return None
    kind = _tensor_kind(name)
    return ("t", shape, profile.get("kind", "f") if kind == "f" else kind)


class Call(NamedTuple):
    args: Tuple[tuple, ...]
    kwargs: Tuple[Tuple[str, tuple], ...]


def candidates(sigs: List[Signature]) -> Iterator[Call]:
    """Required arguments of each overload under each profile; duplicates skipped."""
    seen = set()
    for fill, profile, sig in itertools.product((False, True), PROFILES, sigs or [Signature(())]):
        args, kwargs, ok = [], [], True
        for p in sig.params:
            if not p.required and not (fill and p.name in OPTIONAL_FILL):
                continue
            r = recipe_for(p, profile) if not fill or p.required or OPTIONAL_FILL[p.name] is None else OPTIONAL_FILL[p.name]
            if not p.required:
                kwargs.append((p.name, r))
                continue
            if r is None:
                ok = False
                break
            if r[0] == "*":
                args.extend(r[1])
            elif p.kw_only:
                kwargs.append((p.name, r))
            else:
                args.append(r)
        call = Call(tuple(args), tuple(kwargs))
        if ok and call not in seen:
            seen.add(call)
            yield call


def variants(base: Call, sigs: List[Signature]) -> Iterator[Tuple[str, Call]]:
    """Argument variants that may change the answer: Python scalar vs tensor, optional sizes given."""
    names = {}
    for sig in sigs:
        for i, p in enumerate([q for q in sig.params if q.required and not q.name.startswith("*")]):
            names.setdefault(i, p)
        for p in sig.params:
            names.setdefault(p.name, p)
    anns: Dict[str, str] = {}
    for sig in sigs:
        for p in sig.params:
            anns[p.name] = anns.get(p.name, "") + "|" + p.ann
    positional = [p for p in (sigs[0].params if sigs else ()) if not p.kw_only]
    for i, r in enumerate(base.args):
        pname = positional[i].name if i < len(positional) else f"arg{i}"
        ann = anns.get(pname, "")
        if r[0] == "t" and i > 0 and ("Number" in ann or "float" in ann or "int" in ann or "Scalar" in ann):
            yield f"{pname}=scalar", base._replace(args=base.args[:i] + (("s", 2),) + base.args[i + 1:])
        if r[0] == "s" and isinstance(r[1], (int, float)) and not isinstance(r[1], bool) and "Tensor" in ann:
            zero_dim = ("t", (), "l" if isinstance(r[1], int) else "f")
            yield f"{pname}=tensor", base._replace(args=base.args[:i] + (zero_dim,) + base.args[i + 1:])
    positional = [p for p in (sigs[0].params if sigs else ()) if not p.kw_only]
    if base.args and positional and positional[0].name == "data":  # host data (a Python list) to the device
        yield "data=host-list,device", Call((("s", (1.0, 2.0)),) + base.args[1:], base.kwargs + (("device", ("device", None)),))
    known = {p.name for sig in sigs for p in sig.params}
    given = {k for k, _ in base.kwargs}
    for group in OPTIONAL_VARIANTS:
        if all(k in known and k not in given for k, _ in group):
            pos = [p.name for p in positional]
            if any(k in pos and pos.index(k) < len(base.args) for k, _ in group):
                continue
            label = ",".join(f"{k}={v}" for k, v in group)
            yield label, base._replace(kwargs=base.kwargs + tuple((k, ("s", v)) for k, v in group))


# ---------------------------------------------------------------------------------------------
# building values


def build(torch, recipe, device):
    kind = recipe[0]
    if kind == "s":
        return recipe[1]
    if kind == "L":
        return [build(torch, r, device) for r in recipe[1]]
    if kind == "dtype":
        return getattr(torch, recipe[1])
    if kind == "device":
        return torch.device(device)
    if kind == "layout":
        return torch.strided
    if kind == "v":  # literal values, built on the host (outside the timing) and moved to the device
        _, values, dtype, where = recipe
        t = torch.tensor(values, dtype=getattr(torch, dtype))
        return t if where == "cpu" else t.to(device)
    if kind == "hann":
        _, n, where = recipe
        return torch.hann_window(n, device="cpu" if where == "cpu" else device)
    _, shape, tk = recipe
    if tk == "l":
        return (torch.arange(max(1, _numel(shape)), device=device) % 2)[: _numel(shape)].reshape(shape)
    if tk == "b":
        return (torch.arange(max(1, _numel(shape)), device=device) % 2 == 0)[: _numel(shape)].reshape(shape)
    if tk == "spd":
        return 2 * torch.eye(shape[-1], device=device).expand(shape).contiguous()
    if tk == "c":
        return torch.randn(shape, dtype=torch.complex64, device=device)
    if tk == "box":
        n = shape[0] if shape else 1
        xy = torch.rand(n, 2, device=device) * 4
        return torch.cat([xy, xy + 1 + torch.rand(n, 2, device=device)], dim=1)
    if tk == "roi":
        xy = torch.rand(shape[0], 2, device=device) * 2
        return torch.cat([torch.zeros(shape[0], 1, device=device), xy, xy + 2], dim=1)
    t = torch.rand(shape, device=device)
    if len(shape) >= 2 and shape[-1] == shape[-2]:  # diagonally dominant: invertible, Cholesky works
        t = t + 4 * torch.eye(shape[-1], device=device)
    return t


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def describe(call: Call) -> str:
    def one(r) -> str:
        if r[0] == "t":
            return f"T{list(r[1])}{r[2]}"
        if r[0] == "L":
            return "[" + ",".join(one(x) for x in r[1]) + "]"
        if r[0] == "*":
            return ", ".join(one(x) for x in r[1])
        if r[0] in ("dtype", "device", "layout"):
            return r[0]
        if r[0] == "v":
            return f"T{r[1]}{r[2]}" + ("@cpu" if r[3] == "cpu" else "")
        if r[0] == "hann":
            return f"hann_window({r[1]})" + ("@cpu" if r[2] == "cpu" else "")
        return repr(r[1])

    return ", ".join([one(r) for r in call.args] + [f"{k}={one(r)}" for k, r in call.kwargs])


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
