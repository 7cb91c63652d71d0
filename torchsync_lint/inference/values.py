"""Abstract values: what inference knows about an expression."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

# kinds
TENSOR = "tensor"
NUMBER = "number"  # Python int/float/bool
LIST = "list"
TUPLE = "tuple"
RANGE = "range"
NDARRAY = "ndarray"
STR = "str"
NONE = "none"
SIZE = "size"  # torch.Size / tuple of Python ints from .shape
DEVICE = "device"
DTYPE = "dtype"
TENSOR_SEQ = "tensor_seq"  # a tuple or list of tensors of unknown length (split, sort, nonzero(as_tuple))
MODULE = "module"  # an nn.Module instance: calling it gives a tensor
SELF = "self"
STREAM = "stream"  # a CUDA/accelerator stream (torch.cuda.Stream, current_stream())
EVENT = "event"  # a CUDA/accelerator event (torch.cuda.Event, stream.record_event())
GRAD_SCALER = "grad_scaler"  # torch.amp / torch.cuda.amp GradScaler (its step() checks for inf/NaN on the host)
DICT = "dict"  # a dict (from annotations: ``dict[str, Tensor]``); ``item`` is the value of its values
# a dict literal's, a TypedDict's or a function's string keys kept apart (more: a table, not a record)
MAX_KEYS = 16
OBJECT = "object"  # an instance of a project class that is not an nn.Module (``cls`` names it)
# what a DataLoader yields: host tensors, or dicts/tuples/objects of them (``pinned``: the loader
# was made with ``pin_memory=True``); subscripts, attributes and unpacking stay batches
BATCH = "batch"
# a name bound to a type (``NdarrayOrTensor = np.ndarray | torch.Tensor``); ``item`` is what an
# annotation with that name means
TYPE = "type"
# a reference to a torch function (``window_fn=torch.hamming_window``); ``cls`` is its qualified name:
# calling it is calling that function
FUNC = "func"
UNKNOWN = "unknown"

# scope key of ``self.<attr>`` as a method assigned it (no identifier holds a dot)
SELF_ATTR = "self."

# what an instance keeps under its own keys (``self[DATA] = t``), as the name of an attribute: no
# identifier is spelt so
ITEMS = "[]"

# devices
CUDA = "cuda"
CPU = "cpu"


@dataclass(frozen=True)
class Value:
    kind: str = UNKNOWN
    device: Optional[str] = None  # tensors: "cuda", "cpu", or None (unknown, possibly on the GPU)
    dtype: Optional[str] = None  # tensors: "bool", "int", "float" or None; numbers: "int"/"float"/"bool"
    elts: Tuple["Value", ...] = ()  # tuples and lists of known members
    host_data: bool = False  # tensors built from Python/numpy data on the host
    # lists and dicts of unknown length whose members (dict: values) share one known value
    # (``list[Tensor]``, ``dict[str, Tensor]`` annotations); None when unknown
    item: Optional["Value"] = None
    # a tensor by convention only (an unannotated `forward` input), not by evidence: rules about
    # Python-level uses (sizes, branches) skip it, since ints and flags are passed to forward too
    assumed: bool = False
    # UNKNOWN values only: what the value stands for in another file of the project, resolved by
    # ``inference.project.Project`` once every file's interface is known: ("call", qualname),
    # ("method", class_qualname, name), ("attr", class_qualname, name), ("value", qualname)
    ref: Optional[tuple] = None
    # MODULE / OBJECT values: the qualified name of their class, when known
    cls: Optional[str] = None
    # tensors: known to have no dimensions (a full reduction: ``scores.argmax()``, ``x.sum()``)
    zero_dim: bool = False
    # BATCH values, and DataLoader objects: in pinned memory (``DataLoader(..., pin_memory=True)``)
    pinned: bool = False
    # tensors: declared as "a numpy array or a tensor" (``Union[np.ndarray, Tensor]``): a tensor
    # for the rules where a parameter says so, no evidence at all where a return annotation does
    arraylike: bool = False
    # tensors: the number of dimensions, where a factory with literal sizes says it
    ndim: Optional[int] = None
    # tensor attributes (``self.x``) that ``__init__`` leaves on the CPU and another method may move
    # (``set_timesteps(device)``): on the host until that method runs
    cpu_at_init: bool = False
    # tensors: a tensor on some path only; on another the name holds a Python number, bool or None
    # (``hit = False; hit = hit or (e > lim)``): reported at a lower confidence
    maybe: bool = False
    # dicts: the values of the string keys a literal, a function's stores or a TypedDict name
    # (``{"loss": t, "n": 3}``, ``state["step"] = ...``); where some are named, another key is unknown.
    # OBJECT values: what the constructor of a dataclass / NamedTuple stored in each field
    keys: Tuple[Tuple[str, "Value"], ...] = ()

    def keyed(self, key: str) -> Optional["Value"]:
        """A dict's value under ``key``: the one named, else (other keys named) unknown, else its ``item``."""
        for k, v in self.keys:
            if k == key:
                return v
        return None if self.keys else self.item

    @property
    def is_tensor(self) -> bool:
        return self.kind == TENSOR

    @property
    def maybe_gpu(self) -> bool:
        return self.kind == TENSOR and self.device != CPU

    @property
    def is_host(self) -> bool:
        """A value that lives in Python (not a tensor, and known)."""
        return self.kind not in (TENSOR, UNKNOWN, MODULE, SELF, OBJECT)

    def with_(self, **kw) -> "Value":
        d = dict(kind=self.kind, device=self.device, dtype=self.dtype, elts=self.elts, host_data=self.host_data,
                 item=self.item, assumed=self.assumed, ref=self.ref, cls=self.cls, zero_dim=self.zero_dim,
                 pinned=self.pinned, arraylike=self.arraylike, ndim=self.ndim, cpu_at_init=self.cpu_at_init, maybe=self.maybe,
                 keys=self.keys)
        d.update(kw)
        return Value(**d)


UNKNOWN_VALUE = Value()


# a tensor's device named by another file's constant, "@pkg.consts.HOST": left so by an evaluator
# without the project (an interface), placed by ``Project.deep``; like an unknown device elsewhere
DEVICE_REF = "@"


def tensor(device: Optional[str] = None, dtype: Optional[str] = None, host_data: bool = False) -> Value:
    return Value(TENSOR, device=device, dtype=dtype, host_data=host_data)


def operands_device(operands) -> Optional[str]:
    """Where an elementwise op of tensors puts its result: CUDA if any operand is there; the CPU
    if every operand is, or if one operand is a CPU tensor of rank one or more (torch refuses to
    mix it with a CUDA tensor, so a run that gets past the op had every operand on the CPU: only
    a 0-dim CPU tensor rides along with CUDA ones); else unknown."""
    devices = {v.device for v in operands}
    if CUDA in devices:
        return CUDA
    if devices == {CPU} or any(v.device == CPU and v.ndim is not None and v.ndim >= 1 for v in operands):
        return CPU
    return None


def number(dtype: Optional[str] = None) -> Value:
    return Value(NUMBER, dtype=dtype)


def join(a: Value, b: Value) -> Value:
    """What a name holds after two branches assign it."""
    if a == b:
        return a
    if a.ref is not None or b.ref is not None:
        return Value(UNKNOWN, ref=("join", a, b))  # decided once the project resolves the reference
    if a.kind != b.kind:
        if a.kind == NONE:
            return b
        if b.kind == NONE:
            return a
        if {a.kind, b.kind} == {TENSOR, BATCH}:
            # a loader's batch (on the host until moved) on one path, a tensor on the other
            # (`_batchify(corpus.valid)` here, `_batchify(train_slice.flatten())` there)
            t, batch = (a, b) if a.kind == TENSOR else (b, a)
            where = CUDA if batch.device == CUDA else CPU
            return t.with_(device=t.device if t.device == where else None)
        return UNKNOWN_VALUE
    if a.kind == TENSOR:
        return tensor(
            device=a.device if a.device == b.device else None,
            # a dtype known on one path only (an annotated `Tensor` parameter reassigned to a mask)
            # is the best guess: dtypes pick which rule applies, never whether a value is a tensor
            dtype=a.dtype if a.dtype == b.dtype else (a.dtype or b.dtype if None in (a.dtype, b.dtype) else None),
            host_data=a.host_data and b.host_data,
        ).with_(assumed=a.assumed or b.assumed, zero_dim=a.zero_dim and b.zero_dim,
                arraylike=a.arraylike or b.arraylike, ndim=a.ndim if a.ndim == b.ndim else None,
                cpu_at_init=a.cpu_at_init or b.cpu_at_init, maybe=a.maybe or b.maybe)
    if a.kind == FUNC and a.cls is None and b.cls is None and a.item is not None and b.item is not None:
        return Value(FUNC, item=join(a.item, b.item))  # two declared callables: what either returns
    if a.kind == FUNC and a.cls != b.cls:
        # one of several functions (`{"lo": torch.lt, "hi": torch.gt}[mode]`): calling it calls one
        members = tuple(m for v in (a, b) for m in (v.elts if v.cls is None else (v,)))
        return Value(FUNC, elts=members if all(m.cls for m in members) and len(members) <= 8 else ())
    if a.kind == OBJECT and a.cls != b.cls:
        # an instance of one of several classes (`self.transform = Norm()` here, `Compose(...)`
        # there): calling a method calls one of theirs (``elts``: the classes, when all are known)
        members = []
        for m in (m for v in (a, b) for m in (v.elts if v.cls is None else (v,))):
            if m.cls not in (x.cls for x in members):
                members.append(m)
        known = all(m.cls for m in members) and 1 < len(members) <= 8
        return Value(OBJECT, elts=tuple(members) if known else (), pinned=a.pinned and b.pinned,
                     assumed=a.assumed or b.assumed, device=a.device if a.device == b.device else None)
    if a.kind in (MODULE, OBJECT, BATCH, FUNC):
        return Value(a.kind, cls=a.cls if a.cls == b.cls else None, pinned=a.pinned and b.pinned,
                     assumed=a.assumed or b.assumed, device=a.device if a.device == b.device else None)
    if a.kind == DICT and (a.keys or b.keys):
        out = join(a.with_(keys=()), b.with_(keys=()))
        return out.with_(keys=_join_keys(a.keys, b.keys)) if a.keys and b.keys else out
    if a.elts and len(a.elts) == len(b.elts):  # (t, True) or (t2, False): member by member
        return Value(a.kind, elts=tuple(join(x, y) for x, y in zip(a.elts, b.elts)))
    if a.item is not None and b.item is not None and not a.elts and not b.elts:
        item = join(a.item, b.item)
        # (two containers of one library stay one: ``cls`` names it)
        return Value(a.kind, item=item if item.kind != UNKNOWN else None, cls=a.cls if a.cls == b.cls else None)
    if (a.item is None) != (b.item is None) and not a.elts and not b.elts:
        # members known on one path only (`[int(t) for t in ts]` or `[self.step] * n`): like a
        # tensor that one branch made, they are the best guess, not erased by the unknown path
        return Value(a.kind, item=a.item or b.item)
    return Value(a.kind)


def _join_keys(a: tuple, b: tuple) -> tuple:
    """Two dicts' named keys: a key both name holds either value; one named by a single path
    keeps that path's value (on the other the key is absent)."""
    theirs = dict(b)
    out = [(k, join(v, theirs.pop(k)) if k in theirs else v) for k, v in a]
    return tuple(out + list(theirs.items()))


def join_maybe(a: Value, b: Value) -> Value:
    """As ``join``, except that a tensor and a Python number make a maybe-a-tensor value: a loop
    that turns ``acc = 0.0`` into a tensor (``acc += t.dot(r)``), ``hit = hit or (e > lim)``, an
    annotation ``Union[Tensor, float]``. (Two branches of an ``if`` that leave a number on one
    path and a tensor on the other stay unknown: either is as likely.)"""
    if {a.kind, b.kind} == {TENSOR, NUMBER} and a.ref is None and b.ref is None:
        return (a if a.kind == TENSOR else b).with_(maybe=True)
    return join(a, b)


def join_members(a: Value, b: Value) -> Value:
    """What two members of one container share (a dict's values, a list's items): as ``join``,
    except that a tensor and a number are different members, not one maybe-a-tensor name."""
    out = join(a, b)
    if out.maybe and not (a.maybe or b.maybe):
        return UNKNOWN_VALUE
    return out


def item_at(items: Value, key: Optional[str]) -> Value:
    """What ``obj[key]`` reads from what an instance keeps under its keys (a DICT value): the value
    under a key named, else the join of all of them (a computed key may be any)."""
    if items.kind != DICT:
        return UNKNOWN_VALUE
    if key is not None:
        return items.keyed(key) or UNKNOWN_VALUE
    if items.keys:
        out = items.keys[0][1]
        for _k, v in items.keys[1:]:
            out = join_members(out, v)
        return out
    return items.item or UNKNOWN_VALUE


def join_passed(values: list) -> Tuple[Value, bool]:
    """What the call sites of a parameter pass, joined, and whether gaps were dropped. Where some
    pass evidence (a tensor, a dict of named values, a loader's batch) and others what inference
    cannot see (`self.sigma(t)`, a parameter nobody passes, a recursive batch helper's parts), the
    evidence wins over the gaps; a site passing a Python number beside a tensor makes it maybe a
    tensor (`meter.update(loss.item())` here, `meter.update(acc)` there: the statement waits on the
    calls that pass a tensor). ``values`` is not empty."""
    if any(v.kind == BATCH or v.kind == TENSOR and not v.assumed and not v.maybe or v.kind == DICT and v.keys
           for v in values):
        kept = [v for v in values if not (v.kind == UNKNOWN and v.ref is None)]
    else:
        kept = values
    out = kept[0]
    for v in kept[1:]:
        out = join_maybe(out, v)
    return out, len(kept) < len(values)


def map_tensors(v: Value, f) -> Value:
    """``v`` with ``f`` applied to every tensor it holds (itself, a container's members and values)."""
    if v.kind == TENSOR:
        return f(v)
    if v.kind in (DICT, LIST, TUPLE) and (v.item is not None or v.elts or v.keys):
        return v.with_(item=map_tensors(v.item, f) if v.item is not None else None,
                       elts=tuple(map_tensors(e, f) for e in v.elts),
                       keys=tuple((k, map_tensors(x, f)) for k, x in v.keys))
    return v


def off_host(v: Value) -> Value:
    """``v`` with every tensor it holds on the host said to be of unknown place (what a package's
    tests pass: the kind of value its API takes, made on the CPU of a test machine)."""
    return map_tensors(v, lambda t: t.with_(device=None) if t.device == CPU else t)


def unpacked(value: Value, i: int, n: int) -> Value:
    """Member ``i`` of ``a, b, ... = value`` with ``n`` names (no star)."""
    if value.kind in (TUPLE, LIST) and len(value.elts) == n:
        return value.elts[i]
    if value.kind == SIZE:
        return Value(NUMBER, dtype="int")
    if value.kind in (LIST, TUPLE) and value.item is not None and not value.elts:
        return value.item
    if value.kind == TENSOR:  # its rows (`start, end = bounds` of a 1-D tensor: 0-dim)
        return element_of(value)
    if value.kind == TENSOR_SEQ:  # a common dtype (nonzero: int) and its members' rank
        return tensor(value.device, value.dtype).with_(assumed=value.assumed, ndim=value.ndim,
                                                       zero_dim=value.ndim == 0)
    if value.kind == BATCH:
        return value  # `images, targets = batch`
    return UNKNOWN_VALUE


def element_of(v: Value) -> Value:
    """What iterating ``v`` yields, where the value alone says it: a DataLoader's batches, a
    tensor's rows (one dimension less), a sequence's members."""
    if v.kind == OBJECT and v.cls == "torch.utils.data.DataLoader":
        return Value(BATCH, pinned=v.pinned, assumed=v.assumed)
    if v.kind == BATCH:
        return v
    if v.kind in (RANGE, SIZE):
        return Value(NUMBER, dtype="int")
    if v.kind in (TENSOR, TENSOR_SEQ):
        el = tensor(v.device, v.dtype).with_(assumed=v.assumed, cpu_at_init=v.cpu_at_init)
        if v.kind == TENSOR and v.ndim:  # rows of a tensor: one dimension less (of a 1-D one, 0-dim)
            el = el.with_(ndim=v.ndim - 1, zero_dim=v.ndim == 1)
        return el
    if v.kind in (LIST, TUPLE) and v.item is not None and not v.elts:
        return v.item
    if v.kind in (LIST, TUPLE) and v.elts:
        out = v.elts[0]
        for e in v.elts[1:]:
            out = join_members(out, e)
        return out
    return UNKNOWN_VALUE


# -- plain data (the per-file interfaces are cached as JSON) --------------------------------------
def to_data(v: Value) -> dict:
    out: dict = {"k": v.kind}
    if v.device is not None:
        out["d"] = v.device
    if v.dtype is not None:
        out["t"] = v.dtype
    if v.elts:
        out["e"] = [to_data(e) for e in v.elts]
    if v.host_data:
        out["h"] = 1
    if v.item is not None:
        out["i"] = to_data(v.item)
    if v.assumed:
        out["a"] = 1
    if v.ref is not None:
        out["r"] = _ref_to_data(v.ref)
    if v.cls is not None:
        out["c"] = v.cls
    if v.zero_dim:
        out["z"] = 1
    if v.pinned:
        out["p"] = 1
    if v.arraylike:
        out["al"] = 1
    if v.ndim is not None:
        out["nd"] = v.ndim
    if v.cpu_at_init:
        out["ci"] = 1
    if v.maybe:
        out["m"] = 1
    if v.keys:
        out["ky"] = [[k, to_data(x)] for k, x in v.keys]
    return out


def from_data(d: dict) -> Value:
    return Value(
        kind=str(d.get("k", UNKNOWN)),
        device=d.get("d"),
        dtype=d.get("t"),
        elts=tuple(from_data(e) for e in d.get("e", ())),
        host_data=bool(d.get("h")),
        item=from_data(d["i"]) if "i" in d else None,
        assumed=bool(d.get("a")),
        ref=_ref_from_data(d["r"]) if "r" in d else None,
        cls=d.get("c"),
        zero_dim=bool(d.get("z")),
        pinned=bool(d.get("p")),
        arraylike=bool(d.get("al")),
        ndim=d.get("nd"),
        cpu_at_init=bool(d.get("ci")),
        maybe=bool(d.get("m")),
        keys=tuple((str(k), from_data(x)) for k, x in d.get("ky", ())),
    )


def _ref_to_data(r: tuple) -> list:
    """A reference as plain data: a value inside it as data at any depth (``("invoked", ("elt", 0,
    2, ("iter", ref)))`` of a value whose own reference holds values), a reference inside it as a
    list. Values left inside a nested tuple made the interface unwritable as JSON: the cache
    dropped it (and the report holding it) without a word, and every run derived it again."""
    return [to_data(x) if isinstance(x, Value) else _ref_to_data(x) if isinstance(x, tuple) else x for x in r]


def _ref_from_data(r: list) -> tuple:
    """A reference read back: values inside it as values, a reference inside it (``("iter", ref)``)
    as a tuple again."""
    return tuple(from_data(x) if isinstance(x, dict) else _ref_from_data(x) if isinstance(x, list) else x for x in r)
