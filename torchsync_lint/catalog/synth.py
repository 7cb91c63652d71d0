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
