"""Synthesised values for a snippet's free names (child process; ``torch`` is passed in).

The parent sends a spec per name: the kind and dtype static inference gave it, richer types from
annotations, how the statement uses it (index, mask, subscripted base, loss target, host data),
and for ``self`` how each attribute was set in ``__init__``. A ``Plan`` fixes what inference
leaves open (a base shape, the shape of integer and boolean tensors relative to it, 0-dim values,
the dtype and kind of unknowns); the child tries plans on the CPU until the statement runs, then
builds the same plan's values on the GPU.
"""

from __future__ import annotations

import itertools
import re
import tempfile
import zlib
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Dict, List, Optional

BASES = [(4, 10), (8,), (2, 10, 4, 4), (4, 4), (2, 4, 4, 10), (16, 4), (3, 4, 5), (2, 3, 8, 8), (6, 4, 2)]
AUX = ("same", "first", "drop_last", "drop_channel")
INT_NAME = re.compile(r"(^|_)(target|targets|label|labels|idx|idxs|index|indices|inds|ids|keep|matched|"
                      r"positive|negative|pos|neg|cls|classes|perm|order|argmax|count|counts)($|_)", re.I)
BOOL_NAME = re.compile(r"(^|_)(mask|masks|valid|is|keep_mask|visible|flag|flags)($|_)", re.I)
BOX_NAME = re.compile(r"box", re.I)
PROB_NAME = re.compile(r"(score|prob|conf|ratio|iou|weight)", re.I)


@dataclass(frozen=True)
class Plan:
    base: tuple
    aux: str = "same"
    scalars: bool = False  # tensors that are not indexed or used as a base become 0-dim
    unknown_dtype: str = "name"
    unknown_kind: str = "tensor"

    def describe(self) -> str:
        bits = [f"base {self.base}", f"int/bool {self.aux}"]
        if self.scalars:
            bits.append("0-dim operands")
        if self.unknown_dtype != "name":
            bits.append(f"untyped tensors {self.unknown_dtype}")
        if self.unknown_kind != "tensor":
            bits.append(f"unknowns as {self.unknown_kind}")
        return ", ".join(bits)


def aux_shape(base: tuple, aux: str) -> tuple:
    if aux == "first":
        return base[:1]
    if aux == "drop_last":
        return base[:-1] or base
    if aux == "drop_channel":
        return base[:1] + base[2:] if len(base) > 2 else base[:1]
    return base


def plans(has_unknown: bool, limit: int = 240) -> List[Plan]:
    out: List[Plan] = []
    seen = set()
    kinds = ("tensor", "int", "list") if has_unknown else ("tensor",)
    for unknown_kind, scalars, unknown_dtype in itertools.product(kinds, (False, True), ("name", "float", "int")):
        for base in BASES:
            for aux in AUX:
                key = (base, aux_shape(base, aux), scalars, unknown_dtype, unknown_kind)
                if key in seen:
                    continue
                seen.add(key)
                out.append(Plan(base, aux, scalars, unknown_dtype, unknown_kind))
    # the most common combinations first: typed tensors of one shape, then the variants
    dtypes = ("name", "float", "int")
    out.sort(key=lambda p: (p.scalars, dtypes.index(p.unknown_dtype), kinds.index(p.unknown_kind)))
    return out[:limit]


class SynthDict(dict):
    """A mapping that makes up a value for any key (``targets[i]["boxes"]``)."""

    def __init__(self, make, *a, **kw):
        super().__init__(*a, **kw)
        self._make = make

    def __missing__(self, key):
        value = self._make(str(key))
        self[key] = value
        return value


class Synth:
    def __init__(self, torch, plan: Plan, device: str, seed: int = 0) -> None:
        self.torch = torch
        self.plan = plan
        self.device = device
        self.seed = seed
        self.guessed: List[str] = []
        self.observed: List[str] = []

    def _gen(self, name: str):
        """A generator per name: the same name gets the same values in every snippet of a plan."""
        g = self.torch.Generator(device="cpu")
        g.manual_seed(zlib.crc32(f"{self.seed}:{name}".encode()))
        return g

    # -- tensors ----------------------------------------------------------------------------
    def _dtype(self, spec: dict, name: str) -> str:
        roles = set(spec.get("roles", ()))
        if spec.get("dtype") in ("float", "int", "bool"):
            return spec["dtype"]
        if "mask" in roles:
            return "bool"
        if roles & {"index", "target", "index_values", "int_vector"}:
            return "int"
        if self.plan.unknown_dtype == "name":  # guess from the name: `mask` bool, `labels` int
            if roles & {"subscripted", "receiver"}:
                return "float"  # a tensor indexed or called on is data more often than labels
            leaf = name.split(".")[-1].split("[")[0]
            if BOOL_NAME.search(leaf):
                return "bool"
            if INT_NAME.search(leaf):
                return "int"
            return "float"
        return self.plan.unknown_dtype

    def tensor(self, spec: dict, name: str = ""):
        torch, plan = self.torch, self.plan
        roles = set(spec.get("roles", ()))
        if "host_grad_loss" in roles:
            # what TSL414 says the loss is: a scalar whose graph reaches a host leaf requiring grad
            leaf = torch.ones((), device="cpu", requires_grad=True)
            return (leaf * torch.randn(plan.base, generator=self._gen(name), device="cpu").to(self.device)).sum()
        dtype = self._dtype(spec, name)
        if "int_vector" in roles and spec.get("shape") is None:
            spec = dict(spec, shape=[8])  # indexed by small constants, its items used as sizes
        base = tuple(spec["shape"]) if spec.get("shape") is not None else plan.base
        small = min(base) if base else 2
        indexed = roles & {"subscripted", "index", "mask", "index_values"}
        scalar = (("scalar" in roles and not indexed) or (plan.scalars and not indexed and "receiver" not in roles)
                  or "int_index" in roles)  # an index read as a Python int (TSL303): 0-dim
        if scalar and spec.get("dtype") is None and roles & {"scalar", "int_index"}:
            dtype = "int"  # sizes, slice bounds, int()/range() arguments
        if scalar:
            shape = ()
        elif dtype in ("int", "bool") and spec.get("shape") is None:
            shape = aux_shape(base, plan.aux)
        else:
            shape = base
        g = self._gen(name)
        leaf = name.split(".")[-1]
        if dtype == "bool":
            t = torch.rand(shape, generator=g, device="cpu") > 0.5
            if t.numel():
                t.view(-1)[0] = True
        elif dtype == "int":
            high = max(small, 1)
            if scalar:
                t = torch.tensor(min(2, high - 1) if high > 1 else 0, dtype=torch.int64, device="cpu")
            else:
                t = torch.randint(0, high, shape, generator=g, dtype=torch.int64, device="cpu")
        else:
            if BOX_NAME.search(leaf) and shape and shape[-1] == 4:
                xy = torch.rand(shape[:-1] + (2,), generator=g, device="cpu") * 8
                wh = torch.rand(shape[:-1] + (2,), generator=g, device="cpu") * 8 + 1
                t = torch.cat([xy, xy + wh], dim=-1)
            elif PROB_NAME.search(leaf):
                t = torch.rand(shape, generator=g, device="cpu")
            else:
                t = torch.randn(shape, generator=g, device="cpu")
        device = "cpu" if spec.get("device") == "cpu" else self.device
        return t.to(device)

    def writer(self):
        """A SummaryWriter into a fresh temporary folder. Imported here, in the child that runs the
        snippet: tensorboard is optional, and only a TSL410 snippet needs it."""
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(log_dir=tempfile.mkdtemp(prefix="tsl-writer-"))

    # -- any value --------------------------------------------------------------------------
    def value(self, spec: Optional[dict], name: str = "", module_globals: Optional[dict] = None,
              depth: int = 0) -> Any:
        torch = self.torch
        spec = spec or {"kind": "unknown"}
        kind = spec.get("kind", "unknown")
        roles = set(spec.get("roles", ()))
        if depth > 4:
            kind = "tensor"
        if kind == "literal":
            return spec.get("value")
        if kind == "observed":
            try:
                value = self.observed_value(spec["desc"], name, roles)
                if name and name not in self.observed:
                    self.observed.append(name)
                return value
            except Exception:  # noqa: BLE001 - an odd record: fall back to inference
                return self.value(spec.get("fallback"), name, module_globals, depth + 1)
        if kind == "expr" and module_globals is not None:
            if spec.get("guess") and name and name not in self.guessed:
                self.guessed.append(name)  # a default kept where inference could not say what callers pass
            try:
                return eval(spec["src"], dict(module_globals))  # noqa: S307 - the user's own code
            except Exception:
                return self.value(spec.get("fallback"), name, module_globals, depth + 1)
        if kind == "unknown" and _device_like(name, roles):
            kind = "device"
        if kind == "unknown" and "writer" in roles:
            return self.writer()
        if kind == "unknown":
            if "host_data" in roles:
                kind = "list_float"
            elif "host_index" in roles:
                kind = "list_int"
            elif "str_key" in roles:
                kind = "dict"
            elif "formatted" in roles and not roles & {"receiver", "subscripted", "index", "called", "scalar"}:
                kind = "str"  # only put into an f-string: text (a tensor there would sync to format)
            elif "called" in roles:
                kind = "callable"
            elif ("iterated" in roles or "seq" in roles) and "index" not in roles:
                kind = "list"
            else:
                kind = self.plan.unknown_kind
            if name:
                self.guessed.append(name)
        if kind == "tensor":
            return self.tensor(spec, name)
        if kind == "number":
            d = spec.get("dtype")
            if d == "float":
                return 0.5
            if d == "bool":
                return True
            return 1 if "index" in roles else 2
        if kind == "int":
            return 2
        if kind == "list_float":
            return [0.5, 0.25, 2.0]
        if kind == "list_int":
            base = self.plan.base
            return list(range(min(base[0], 4)))
        if kind in ("list", "tuple"):
            elts = spec.get("elts")
            if elts:
                vals = [self.value(e, f"{name}[{i}]", module_globals, depth + 1) for i, e in enumerate(elts)]
            else:
                elt = spec.get("elt") or {"kind": "tensor", "roles": sorted(roles & {"index", "mask"})}
                vals = [self.value(elt, f"{name}[{i}]", module_globals, depth + 1) for i in range(3)]
            return tuple(vals) if kind == "tuple" else vals
        if kind == "fields":
            return SimpleNamespace(**{k: self.value(s, f"{name}.{k}", module_globals, depth + 1)
                                      for k, s in (spec.get("fields") or {}).items()})
        if kind == "dict":
            val_spec = spec.get("value_spec") or {"kind": "tensor"}
            return SynthDict(lambda key: self.value(val_spec, key, module_globals, depth + 1))
        if kind == "range":
            return range(self.plan.base[0])
        if kind == "size":
            return torch.Size(self.plan.base)
        if kind == "ndarray":
            import numpy as np

            if roles & {"index", "host_index"} or spec.get("dtype") == "int":
                return np.arange(min(self.plan.base[0], 4))
            return np.random.default_rng(0).standard_normal(self.plan.base).astype("float32")
        if kind == "str":
            if "value" not in spec and spec.get("device") in ("cuda", "cpu"):
                # a device named by a string (`device="cuda"`): that device's name
                return str(self.device) if spec["device"] == "cuda" else "cpu"
            return spec.get("value", "x")
        if kind == "none":
            return None
        if kind == "device":
            if spec.get("device"):
                dev = str(spec["device"])
                return torch.device("cpu" if dev.startswith("cpu") else self.device)
            if name and name not in self.guessed:
                self.guessed.append(name)  # a device nobody inferred: CUDA is a guess
            return torch.device(self.device)
        if kind == "dtype":
            return torch.float32
        if kind == "module":
            # passes its input through; holds a parameter (an optimizer can be made over it): made on
            # the host where the finding moves a model built there (TSL412: moving it copies), else
            # on the device, as a model in training is
            m = torch.nn.Identity()
            m.weight = torch.nn.Parameter(torch.zeros(256, device="cpu" if "host_module" in roles else self.device))
            return m
        if kind == "callable":
            return lambda *a, **k: a[0] if a else None
        if kind == "tensor_seq":
            if spec.get("dtype") == "int":
                base = self.plan.base
                k = min(base) if base else 2
                g = self._gen(name)
                return tuple(torch.randint(0, k, (3,), generator=g, device="cpu").to(self.device) for _ in base)
            return tuple(self.tensor({"roles": []}, f"{name}[{i}]") for i in range(2))
        return self.tensor(spec, name)


    # -- recorded values (--inputs) ------------------------------------------------------------
    def observed_value(self, desc: dict, name: str = "", roles=(), depth: int = 0) -> Any:
        """A value like the one a real run passed: same device, dtype and shape (and values when small)."""
        torch = self.torch
        kind = desc.get("kind")
        if kind == "literal":
            return desc.get("value")
        if kind == "tensor":
            return self._observed_tensor(desc, name)
        if kind == "device":
            dev = str(desc.get("device", "cuda"))
            return torch.device("cpu" if dev.startswith("cpu") else self.device)
        if kind == "dtype":
            return getattr(torch, str(desc.get("dtype", "float32")), torch.float32)
        if kind == "size":
            return torch.Size(desc.get("value") or ())
        if kind in ("list", "tuple") and depth < 4:
            vals = [self.observed_value(e, f"{name}[{i}]", (), depth + 1) for i, e in enumerate(desc.get("elts", []))]
            n = int(desc.get("len", len(vals)))
            if vals and n > len(vals):
                vals += [self.observed_value(desc["elts"][-1], f"{name}[{i}]", (), depth + 1)
                         for i in range(len(vals), min(n, 64))]
            return tuple(vals) if kind == "tuple" else vals
        if kind == "dict" and depth < 4:
            return {k: self.observed_value(v, k, (), depth + 1) for k, v in (desc.get("items") or {}).items()}
        if kind == "ndarray":
            import numpy as np

            return np.zeros(desc.get("shape") or (), dtype=desc.get("dtype") or "float32")
        raise ValueError(f"no replay for a recorded {kind}")

    def _observed_tensor(self, desc: dict, name: str):
        torch = self.torch
        dtype = getattr(torch, str(desc.get("dtype", "float32")), torch.float32)
        shape = tuple(desc.get("shape") or ())
        device = "cpu" if str(desc.get("device", "cuda")).startswith("cpu") else self.device
        g = self._gen(name)
        if "values" in desc:
            t = torch.tensor(desc["values"], dtype=dtype, device="cpu").reshape(shape)
        elif dtype == torch.bool:
            t = torch.rand(shape, generator=g, device="cpu") < float(desc.get("true_share", 0.5))
        elif dtype.is_floating_point:
            t = torch.randn(shape, generator=g, device="cpu").to(dtype)
        elif dtype.is_complex:
            t = torch.randn(shape, generator=g, device="cpu").to(dtype)
        else:
            lo, hi = int(desc.get("min", 0)), int(desc.get("max", 1))
            t = torch.randint(lo, hi + 1, shape, generator=g, device="cpu").to(dtype)
        t = t.to(device)
        if desc.get("requires_grad") and t.is_floating_point():
            t.requires_grad_(True)
        return t


def _device_like(name: str, roles) -> bool:
    leaf = name.split(".")[-1]
    return "device" in roles or leaf in ("device", "dev") or leaf.endswith("_device") or leaf.startswith("device_")


# ---------------------------------------------------------------------------------------------
# self


def resolve_qualname(module, qualname: str):
    obj = module
    for part in qualname.split("."):
        if part == "<locals>":
            return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


class StandIn:
    """``self`` for a function whose class cannot be found (nested or generated)."""


def build_self(torch, module, spec: dict, synth: Synth, cache: Dict[str, Any]):
    """A real instance where the class builds from defaults, else a stand-in with synthesised attributes."""
    cls = resolve_qualname(module, spec["class"]) if spec.get("class") else None
    key = f"{synth.device}"
    obj = None
    real: set = set()
    attrs = spec.get("attrs") or {}
    if cls is not None and isinstance(cls, type):
        if key not in cache:
            built = _construct(torch, cls, spec, synth, module)
            cache[key] = (built, {a for a in attrs if built is not None and _has_attr(built, a)})
        obj, real = cache[key]
        if obj is None:
            obj = cls.__new__(cls)
            if isinstance(obj, torch.nn.Module):
                torch.nn.Module.__init__(obj)
    if obj is None:
        obj = StandIn()
    namespace = dict(vars(module))
    namespace["self"] = obj
    for attr, aspec in attrs.items():
        if aspec.get("observed") is not None and not isinstance(getattr(type(obj), attr, None), property):
            try:
                value = synth.observed_value(aspec["observed"], "self." + attr)
                if "self." + attr not in synth.observed:
                    synth.observed.append("self." + attr)
                _set(obj, attr, _to_device(torch, value, synth.device))
                continue
            except Exception:  # noqa: BLE001 - not replayable (a module, an object): as before
                pass
        if attr in real or (attr not in obj.__dict__ and _has_attr(type(obj), attr)):
            continue  # set by the real __init__, or a method/property of the class
        value, done = None, False
        for init in aspec.get("init", []):
            ns = dict(namespace)
            try:
                for pname, pspec in (init.get("params") or {}).items():
                    ns[pname] = synth.value(pspec, pname, namespace)
                value = eval(init["src"], ns)  # noqa: S307 - the user's own __init__ expression
                done = True
                break
            except Exception:
                continue
        if not done:
            value = synth.value(aspec.get("spec"), "self." + attr, namespace)
        _set(obj, attr, _to_device(torch, value, synth.device))
    if isinstance(obj, torch.nn.Module):
        try:
            obj.to(synth.device)
        except Exception:
            pass
    return obj


def _set(obj, attr: str, value) -> None:
    try:
        setattr(obj, attr, value)
    except Exception:
        try:
            object.__setattr__(obj, attr, value)
        except Exception:
            pass


def _has_attr(obj, attr: str) -> bool:
    try:
        getattr(obj, attr)
        return True
    except Exception:
        return False


def _to_device(torch, value, device):
    if isinstance(value, torch.Tensor) and value.device.type != "cpu":
        return value
    if isinstance(value, torch.nn.Module):
        try:
            return value.to(device)
        except Exception:
            return value
    return value


def _construct(torch, cls, spec: dict, synth: Synth, module):
    """``cls()`` from defaults, or from synthesised typed ``__init__`` parameters; None if neither works."""
    try:
        obj = cls()
    except Exception:
        obj = None
        params = spec.get("init_params")
        if params is not None and all((p or {}).get("kind") not in (None, "unknown") for p in params.values()):
            try:
                namespace = dict(vars(module))
                obj = cls(**{n: synth.value(p, n, namespace) for n, p in params.items()})
            except Exception:
                obj = None
    if obj is not None and isinstance(obj, torch.nn.Module):
        try:
            obj = obj.to(synth.device)
        except Exception:
            pass
    return obj
